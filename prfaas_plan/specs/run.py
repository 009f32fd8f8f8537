"""The arguments of one simulated run, checked in one place: an arrival rate or a load, a length
(requests or seconds of arrivals) and a seed.

``RunArgs`` holds them; ``check`` validates them, whoever the caller (the api's ``simulate`` and
``latency``, the simulator's entry points); ``parse`` reads them from command-line text first;
``check_size`` bounds how long a run may be once the rate is known. What only a trace refuses
(no time span, a seed, more requests than it holds) stays with the api, which knows the trace.

Each message reads as it always has for its caller. The library's (and the command line's,
once parsed) and the simulator's grew apart before they met here; ``Wording`` keeps both.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

from prfaas_plan import units
from prfaas_plan.errors import SpecError

__all__ = ["ENGINE", "LIBRARY", "MAX_REQUESTS", "RunArgs", "Wording", "check", "check_size", "parse"]

# the most requests one system's run may take: at 40,000-65,000 simulated requests per CPU second,
# three systems of 10M take ~10 minutes; a typo like `--duration 1e30` must not run for ever
MAX_REQUESTS = 10_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class RunArgs:
    """``rate_rps`` or ``load`` (a fraction of the smallest capacity); ``n_requests`` or
    ``duration_s``; ``seed``. None: not given (the caller's default applies)."""

    rate_rps: float | None = None
    load: float | None = None
    n_requests: int | None = None
    duration_s: float | None = None
    seed: int | None = None

    def keywords(self) -> dict[str, Any]:
        """As the keyword arguments of ``api.sim.simulate``."""
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Wording:
    """What a value out of range is told (a value of the wrong kind always gets LIBRARY's)."""

    rate: str
    requests: str
    duration: str


LIBRARY = Wording(rate="must be a finite, positive arrival rate in req/s, got {:g}",
                  requests="must be a whole number >= 1, got {!r}",
                  duration="must be a positive number of seconds, got {!r}")
# sim.run.simulate and sim.topology.simulate_topology, called directly
ENGINE = Wording(rate="must be a positive arrival rate in req/s, got {!r}", requests="must be at least 1, got {!r}",
                 duration="must be > 0 s, got {!r}")


def check(args: RunArgs, words: Wording = LIBRARY) -> RunArgs:
    """``args`` if every value is in range, else a SpecError naming the option."""
    if args.seed is not None and not (_integral(args.seed) and args.seed >= 0):
        raise SpecError(f"must be a whole number >= 0, got {args.seed!r}", field="--seed")
    _one_length(args)
    n, d = args.n_requests, args.duration_s
    # out of range (NaN included) is told in the caller's words, a fraction or an infinity in LIBRARY's
    if n is not None and not (_whole(n) and n >= 1):
        raise SpecError((words if _real(n) and not n >= 1 else LIBRARY).requests.format(n), field="--requests")
    if d is not None and not _positive(d):
        raise SpecError((words if _real(d) and not d > 0 else LIBRARY).duration.format(d), field="--duration")
    _one_rate(args)
    if args.rate_rps is not None and not _positive(args.rate_rps):
        raise SpecError(words.rate.format(args.rate_rps), field="--rate")
    if args.load is not None and not _positive(args.load):
        raise SpecError(f"must be a finite, positive fraction of capacity, got {args.load:g}", field="--load")
    return args


def check_size(rate_rps: float, args: RunArgs) -> None:
    """Refuse a run past MAX_REQUESTS per system, naming the option that asked for it."""
    n, d = args.n_requests, args.duration_s
    if d is not None and rate_rps * d > MAX_REQUESTS:
        raise SpecError(f"{d:.4g} s at {rate_rps:.4g} req/s is about {rate_rps * d:.3g} requests per system; a run "
                        f"takes at most {MAX_REQUESTS:,} (--duration <= {MAX_REQUESTS / rate_rps:.4g} s here)",
                        field="--duration")
    if n is not None and n > MAX_REQUESTS:
        raise SpecError(f"a run takes at most {MAX_REQUESTS:,} requests per system, got {n:,}", field="--requests")


def parse(*, rate: str | None, load: str | None, requests: str | None, duration: str | None,
          seed: str | None) -> RunArgs:
    """The options' text as typed (None: not given); a bad one is one line quoting the text.

    The rate and the load are only read here: their range is ``check``'s, at the api, after
    the scenario loads (an error in the scenario is told first, as it always was).
    """
    args = RunArgs(n_requests=_read_whole(requests, "--requests", 1), duration_s=_read_duration(duration),
                   rate_rps=_read_number(rate, "--rate", "rps"), load=_read_number(load, "--load", "%"),
                   seed=_read_whole(seed, "--seed", 0))
    _one_rate(args)
    _one_length(args)
    return args


def _one_rate(args: RunArgs) -> None:
    if args.rate_rps is not None and args.load is not None:
        raise SpecError("give --rate or --load, not both", field="--rate")


def _one_length(args: RunArgs) -> None:
    if args.n_requests is not None and args.duration_s is not None:
        raise SpecError("give --requests or --duration, not both", field="--requests")


def _real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)  # True is no count of requests


def _integral(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _whole(x: Any) -> bool:
    """An integer, or a float with no fraction (2.0 counts); never a bool, NaN or infinity."""
    return _integral(x) or (_real(x) and math.isfinite(x) and float(x).is_integer())


def _positive(x: Any) -> bool:
    return x > 0 and math.isfinite(x) and not units.subnormal(x)


def _read_number(text: str | None, option: str, unit: str) -> float | None:
    """A number in ``unit`` ("rps": 2, 2rps, 120rpm; "%": a fraction, 0.7 or 70%)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        quantity = text.strip().endswith("%") or units.QUANTITY.match(text) is not None
        if not quantity:
            raise SpecError(f"expected a number, got {text!r}", field=option) from None
        try:
            value = units.parse_fraction(text) if unit == "%" else units.parse_in(text, unit)
        except units.UnitError as exc:
            raise SpecError(str(exc), field=option) from None
    if not math.isfinite(value):
        raise SpecError(f"expected a finite number, got {text!r}", field=option)
    if units.subnormal(value):
        raise SpecError(f"{text!r} is {units.SUBNORMAL}", field=option)
    return value


def _read_whole(text: str | None, option: str, minimum: int) -> int | None:
    if text is None:
        return None
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise SpecError(f"expected a whole number, got {text!r}", field=option) from None
    if value < minimum:
        raise SpecError(f"must be >= {minimum}, got {value}", field=option)
    return value


def read_duration(text: str, option: str) -> float:
    """A positive duration an option gives as text (3600, 2h, 5min), in seconds; else one line naming it."""
    try:
        value = units.parse_duration(text)
    except (ValueError, SpecError):
        raise SpecError(f"expected a duration such as 3600 or 2h, got {text!r}", field=option) from None
    if not value > 0:
        raise SpecError(f"must be > 0 s, got {text!r}", field=option)
    return value


def _read_duration(text: str | None) -> float | None:
    return None if text is None else read_duration(text, "--duration")
