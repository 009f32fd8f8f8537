"""Run the console script in-process and check the properties every run must have.

A run goes through ``prfaas_plan.cli.main`` exactly as the installed ``prfaas-plan`` does (usage
errors folded to one line there), with stdout and stderr captured.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from dataclasses import dataclass

from hypothesis import event
from typer.testing import CliRunner

from prfaas_plan.cli import main

# a Python exception's class name or a traceback in a message means a bug reached the user
_EXCEPTION_NAME = re.compile(r"Traceback|\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b|\bNoneType\b")
# what must never be printed as a result
_NON_FINITE = re.compile(r"(?<![\w.])(-?inf(inity)?|nan)(?![\w])", re.IGNORECASE)
_NONE = re.compile(r"\bNone\b")


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


def run(args: list[str]) -> Run:
    runner = CliRunner()
    with warnings.catch_warnings(record=True) as caught, runner.isolation() as streams:
        warnings.simplefilter("always")
        out, err = streams[0], streams[1]
        argv, sys.argv = sys.argv, ["prfaas-plan", *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    # a warning (numpy's overflow, a deprecation) would reach the user's terminal as a Python message
    stderr += "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)
    return Run(tuple(args), code, stdout, stderr)


def check(r: Run, *, names: tuple[str, ...] = (), echoed: tuple[str, ...] = ()) -> None:
    """The properties of every run.

    - exit code 0, 1 (infeasible plan) or 2 (bad input);
    - on 1 or 2: exactly one line on stderr, no exception name; on 2 it names at least one of
      ``names`` (the option, file or field the bad value went in through);
    - on 0: no NaN, inf or None in the output (``echoed``: the input's own names, such as a
      scenario named "nan", which the output repeats as given); JSON parses.
    """
    event(f"exit {r.code}")  # the mix of outcomes: pytest --hypothesis-show-statistics
    where = f"prfaas-plan {' '.join(r.args)}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
    assert r.code in (0, 1, 2), where
    if r.code in (1, 2):
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one line on stderr\n{where}"
        assert not _EXCEPTION_NAME.search(lines[0]), f"exception name in the message\n{where}"
        if r.code == 2 and names:
            assert any(n in lines[0] for n in names), f"message names none of {names}\n{where}"
        return
    assert not any(line.startswith("warning:") for line in r.stderr.splitlines()), f"a warning\n{where}"
    shown = r.stdout
    for name in echoed:
        shown = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w])", "", shown)
    assert not _NON_FINITE.search(shown), f"non-finite number in the output\n{where}"
    assert not _NONE.search(shown), f"None in the output\n{where}"
    assert not _EXCEPTION_NAME.search(r.stderr), f"exception name on stderr\n{where}"
    if "json" in r.args:
        bad = [(k, v) for k, v in counts(json.loads(r.stdout, parse_constant=_refuse))
               if not (v is None or type(v) is int)]
        assert not bad, f"an instance count that is not a whole number: {bad[:3]}\n{where}"


# n_prfaas, n_p, n_d, instances, extra_instances, ...: counts are ints in every output (not *_busy, a mean)
_COUNT = re.compile(r"^(n_[a-z_]*|([a-z_]*_)?instances)$")


def counts(obj: object, path: str = "") -> list[tuple[str, object]]:
    """Every (path, value) under an instance-count key of a JSON document."""
    out: list[tuple[str, object]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and _COUNT.match(k) and not isinstance(v, dict | list):
                out.append((f"{path}.{k}", v))
            out += counts(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += counts(v, f"{path}[{i}]")
    return out


def _refuse(token: str):
    raise AssertionError(f"{token} in JSON")
