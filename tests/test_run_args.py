"""specs/run.py: the one check of a run's rate, load, length and seed, in each caller's words."""

import math
from pathlib import Path

import numpy as np
import pytest

from prfaas_plan.errors import SpecError
from prfaas_plan.specs.run import ENGINE, MAX_REQUESTS, RunArgs, check, check_size, parse

PACKAGE = Path(__file__).resolve().parents[1] / "prfaas_plan"


def _refusal(fn, *args, **kwargs) -> str:
    with pytest.raises(SpecError) as exc:
        fn(*args, **kwargs)
    return str(exc.value)


@pytest.mark.parametrize(("options", "line"), [
    ({"requests": "abc"}, "--requests: expected a whole number, got 'abc'"),
    ({"requests": "0"}, "--requests: must be >= 1, got 0"),
    ({"seed": "-1"}, "--seed: must be >= 0, got -1"),
    ({"seed": "1.5"}, "--seed: expected a whole number, got '1.5'"),
    ({"duration": "0s"}, "--duration: must be > 0 s, got '0s'"),
    ({"duration": "inf"}, "--duration: expected a duration such as 3600 or 2h, got 'inf'"),
    ({"rate": "abc"}, "--rate: expected a number, got 'abc'"),
    ({"load": "1e400"}, "--load: expected a finite number, got '1e400'"),
    ({"rate": "1", "load": "0.5"}, "--rate: give --rate or --load, not both"),
    ({"requests": "5", "duration": "10"}, "--requests: give --requests or --duration, not both"),
])
def test_parse_quotes_the_text(options, line):
    given = {"rate": None, "load": None, "requests": None, "duration": None, "seed": None} | options
    assert _refusal(parse, **given) == line


def test_parse_reads_numbers_and_leaves_the_range_of_rate_and_load_to_check():
    args = parse(rate="-1", load=None, requests="1_000", duration=None, seed="7")
    assert args == RunArgs(rate_rps=-1.0, n_requests=1000, seed=7)
    assert args.keywords() == {"rate_rps": -1.0, "load": None, "n_requests": 1000, "duration_s": None, "seed": 7}
    assert _refusal(check, args) == "--rate: must be a finite, positive arrival rate in req/s, got -1"
    assert parse(rate=None, load=None, requests=None, duration="2h", seed=None).duration_s == 7200.0


@pytest.mark.parametrize(("args", "library", "engine"), [
    (RunArgs(rate_rps=-1.0), "--rate: must be a finite, positive arrival rate in req/s, got -1",
     "--rate: must be a positive arrival rate in req/s, got -1.0"),
    (RunArgs(rate_rps=math.nan), "--rate: must be a finite, positive arrival rate in req/s, got nan",
     "--rate: must be a positive arrival rate in req/s, got nan"),
    (RunArgs(n_requests=0), "--requests: must be a whole number >= 1, got 0", "--requests: must be at least 1, got 0"),
    (RunArgs(duration_s=0.0), "--duration: must be a positive number of seconds, got 0.0",
     "--duration: must be > 0 s, got 0.0"),
    # a value of the wrong kind, not out of range: the library's words for both
    (RunArgs(n_requests=2.5), "--requests: must be a whole number >= 1, got 2.5",
     "--requests: must be a whole number >= 1, got 2.5"),
    (RunArgs(duration_s=math.inf), "--duration: must be a positive number of seconds, got inf",
     "--duration: must be a positive number of seconds, got inf"),
    (RunArgs(n_requests=5, duration_s=1.0), "--requests: give --requests or --duration, not both",
     "--requests: give --requests or --duration, not both"),
])
def test_check_in_the_library_and_the_engine_words(args, library, engine):
    assert _refusal(check, args) == library
    assert _refusal(check, args, ENGINE) == engine


@pytest.mark.parametrize(("args", "line"), [
    (RunArgs(seed=-1), "--seed: must be a whole number >= 0, got -1"),
    (RunArgs(seed=1.0), "--seed: must be a whole number >= 0, got 1.0"),
    (RunArgs(seed=True), "--seed: must be a whole number >= 0, got True"),
    (RunArgs(n_requests=True), "--requests: must be a whole number >= 1, got True"),
    # int(nan) and int(inf) were a ValueError / OverflowError traceback
    (RunArgs(n_requests=math.nan), "--requests: must be a whole number >= 1, got nan"),
    (RunArgs(n_requests=math.inf), "--requests: must be a whole number >= 1, got inf"),
    (RunArgs(load=0.0), "--load: must be a finite, positive fraction of capacity, got 0"),
    (RunArgs(rate_rps=1.0, load=1.0), "--rate: give --rate or --load, not both"),
])
def test_check_refuses(args, line):
    assert _refusal(check, args) == line


def test_check_accepts_whole_floats_and_numpy_integers():
    ok = RunArgs(rate_rps=2.0, n_requests=np.int64(30), seed=np.int64(3))
    assert check(ok) is ok and check(RunArgs(n_requests=30.0)).n_requests == 30.0


def test_check_size():
    check_size(2.0, RunArgs(n_requests=MAX_REQUESTS, seed=0))
    assert _refusal(check_size, 2.0, RunArgs(duration_s=1e30)) == (
        "--duration: 1e+30 s at 2 req/s is about 2e+30 requests per system; a run takes at most 10,000,000 "
        "(--duration <= 5e+06 s here)")
    assert _refusal(check_size, 2.0, RunArgs(n_requests=MAX_REQUESTS + 1)) == (
        "--requests: a run takes at most 10,000,000 requests per system, got 10,000,001")


@pytest.mark.parametrize("message", ["give --rate or --load, not both", "give --requests or --duration, not both",
                                     "must be a whole number >= 0, got", "whole number >= 1, got {!r}",
                                     "positive arrival rate", "fraction of capacity", "at least 1, got {!r}",
                                     "positive number of seconds", "expected a duration such as",
                                     "requests per system", "expected a number, got"])
def test_one_module_words_these_refusals(message):
    """Every other module calls specs.run for them (the checks were in five places)."""
    holders = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if message in p.read_text())
    assert holders == ["specs/run.py"], holders
