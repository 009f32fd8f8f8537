"""The typer app. Commands are thin: load inputs, one ``api`` call, render.

Errors a user can cause (``PrfaasError``) end as one line on stderr and exit code 2 (bad input)
or 1 (infeasible plan, failed fit); never a traceback.
"""

from __future__ import annotations

import sys

import typer

from prfaas_plan.cli import (  # noqa: F401  (register commands)
    catalog,
    degrade,
    deploy,
    kv,
    latency,
    perf,
    plan,
    replay,
    report,
    sim,
    size,
    study,
    thresholds,
    trace,
)
from prfaas_plan.cli.app import app, one_line


def _is(exc: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _nul(args: list[str]) -> str | None:
    """The error for the first argument that holds a NUL byte, which no path, name or number can
    (the OS refuses such a path with a ValueError that click does not catch), named by its option."""
    for k, arg in enumerate(args):
        if "\x00" in arg:
            option, eq, value = arg.partition("=")
            if not (arg.startswith("--") and eq):
                option, value = (args[k - 1] if k and args[k - 1].startswith("-") else ""), arg
            what = f"{one_line(option)}: the value" if option else "the argument"
            return f"error: {what} {one_line(repr(value))} holds a NUL byte, which no path, name or number can"
    return None


def main() -> None:
    """The console script: click's usage errors also end as one line (and exit code 2)."""
    from prfaas_plan.io.cache import write_back

    bad = _nul(sys.argv[1:])
    if bad is not None:
        typer.echo(bad, err=True)
        sys.exit(2)

    try:
        with write_back():  # what the loaded scenario's distributions learnt, for the next run
            code = app(standalone_mode=False)
    except Exception as exc:
        if _is(exc, "NoArgsIsHelpError"):  # `prfaas-plan` alone: the help, not an error
            typer.echo(exc.ctx.get_help())  # type: ignore[attr-defined]
            sys.exit(0)
        if _is(exc, "UsageError"):
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)  # type: ignore[attr-defined]
            sys.exit(2)
        if _is(exc, "Abort"):
            typer.echo("aborted", err=True)
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)
