"""A link's bandwidth given as a law (``link.bandwidth`` or ``links[i].bandwidth`` as a mapping):
the schema of the three kinds and the readers that turn them into ``specs.bandwidth.BandwidthLaw``.

    {kind: empirical, file: bw.csv}                      one bandwidth sample per row
    {kind: quantiles, p50: 14.7Gbps, p10: 8Gbps, p1: 2Gbps}   p50 required
    {kind: series, file: bw.csv}                         `time_s,bandwidth` rows

CSV rules (as ``io/lengths_csv.py``): blank lines and `#` comments are skipped; the first other
line may be a header if none of its cells starts like a number; a trailing comma is fine; a
column too many is refused, not ignored. A bandwidth cell is a number with its unit
(``14.7Gbps``, ``1.2GB/s``) or a bare number in the file's ``unit:`` (default Gbps); it may be 0
(the link down) but not negative; the law's median must be positive. A series' times are
seconds (``60``, ``1min``), strictly increasing; each value holds until the next time and the
last one for the median interval, so the law weighs each value by the time it holds.

Every error is one SpecError naming the file, the line and the column (``line 5 bandwidth``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.files import data_rows
from prfaas_plan.io.schema import Strict
from prfaas_plan.specs.bandwidth import EMPIRICAL, QUANTILES, SERIES, BandwidthLaw

DEFAULT_UNIT = "Gbps"
KINDS = (EMPIRICAL, QUANTILES, SERIES)
_NUMERIC = re.compile(r"^\s*[-+]?(\d|\.\d|inf|nan)", re.IGNORECASE)


def bandwidth_value(text: Any, unit: str = DEFAULT_UNIT) -> float:
    """A bandwidth >= 0 in bytes/s: ``14.7Gbps``, or a bare number in ``unit``; UnitError if not."""
    value, u = units.split_quantity(text)
    if value < 0:
        raise units.UnitError(f"{text!r} is a negative bandwidth (a bandwidth is >= 0; 0: the link is down)")
    if not u:
        scale = units.bandwidth_scale(unit)
        assert scale is not None  # the schema checked the unit
        return value * scale
    if value > 0:
        return units.parse_bandwidth(text)  # its unit check, with the readings of a unit whose case is off
    if units.bandwidth_scale(u) is None:
        raise units.UnitError(f"{text!r}: unknown bandwidth unit {u!r} (use Gbps, Mbps, GB/s, ...)")
    return 0.0


def _unit(v: Any) -> str:
    if not isinstance(v, str) or units.bandwidth_scale(v.strip()) is None:
        raise ValueError(f"{v!r} is not a bandwidth unit (use Gbps, Mbps, GB/s, ...)")
    return v.strip()


class EmpiricalBandwidth(Strict):
    """Bandwidth samples, one per row; path relative to the scenario."""

    kind: Literal["empirical"]
    file: str
    unit: str = DEFAULT_UNIT
    _u = field_validator("unit", mode="before")(lambda v: _unit(v))


class SeriesBandwidth(Strict):
    """A time series of `time_s,bandwidth` rows; path relative to the scenario."""

    kind: Literal["series"]
    file: str
    unit: str = DEFAULT_UNIT
    _u = field_validator("unit", mode="before")(lambda v: _unit(v))


Percentile = Annotated[float | None, Field(ge=0)]
# highest percentile first: each is checked against the nearest higher one given
PERCENTILES = ("p99", "p95", "p90", "p75", "p50", "p25", "p10", "p5", "p1")


class QuantileBandwidth(Strict):
    """Percentiles of the bandwidth: p50 (the nominal) and any of the others."""

    kind: Literal["quantiles"]
    p99: Percentile = None
    p95: Percentile = None
    p90: Percentile = None
    p75: Percentile = None
    p50: Annotated[float, Field(gt=0)]
    p25: Percentile = None
    p10: Percentile = None
    p5: Percentile = None
    p1: Percentile = None

    @field_validator(*PERCENTILES, mode="before")
    @classmethod
    def _value(cls, v: Any) -> Any:
        return None if v is None else bandwidth_value(v)

    @field_validator(*PERCENTILES, mode="after")
    @classmethod
    def _falls(cls, v: Any, info: ValidationInfo) -> Any:
        if v is None:
            return v
        name = info.field_name
        above = [p for p in PERCENTILES[:PERCENTILES.index(name)] if info.data.get(p) is not None]
        if above and v > info.data[above[-1]]:
            hi = above[-1]
            raise ValueError(f"{name} {_gbps(v)} is above {hi} {_gbps(info.data[hi])}: the bandwidth cannot rise "
                             "as the percentile falls")
        return v


_MODELS: dict[str, type[BaseModel]] = {EMPIRICAL: EmpiricalBandwidth, QUANTILES: QuantileBandwidth,
                                       SERIES: SeriesBandwidth}
BandwidthField = EmpiricalBandwidth | QuantileBandwidth | SeriesBandwidth


class _Kind(Strict):
    kind: Literal["empirical", "quantiles", "series"]


def bandwidth_field(v: Any) -> Any:
    """``link.bandwidth`` before validation: a number or text is a bandwidth (bytes/s), a mapping
    one of the laws (its errors placed at its own keys: ``link.bandwidth.p10``)."""
    if v is None:
        raise ValueError("Input should be a valid number")  # as a plain float field says it
    if not isinstance(v, dict):
        return units.parse_bandwidth(v)
    kind = v.get("kind")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        _Kind.model_validate({"kind": kind} if "kind" in v else {})  # raises: missing or not one of KINDS
    assert model is not None
    return model.model_validate(v)


def _gbps(b: float) -> str:
    return f"{units.bytes_per_s_to_gbps(b):g} Gbps"


# --- the laws


def _law(kind: str, weighted: dict[float, float], *, source: str, samples: int, **series: Any) -> BandwidthLaw:
    total = sum(weighted.values())
    values = tuple(sorted(v for v, w in weighted.items() if w > 0))
    law = BandwidthLaw(kind=kind, values_bytes_per_s=values, weights=tuple(weighted[v] / total for v in values),
                       source=source, samples=samples, **series)
    if not law.median_bytes_per_s > 0:
        raise SpecError(f"the median bandwidth is 0: the link is down {law.down_fraction:.0%} of the "
                        f"{'time' if kind == SERIES else 'samples'}, nothing to plan on", source=source or None)
    return law


def quantile_law(q: QuantileBandwidth) -> BandwidthLaw:
    """The step law of the percentiles given: each value from its percentile up to the next one."""
    given = sorted((float(p[1:]) / 100, getattr(q, p)) for p in PERCENTILES if getattr(q, p) is not None)
    weighted: dict[float, float] = {}
    for k, (level, value) in enumerate(given):
        lo = 0.0 if k == 0 else level
        hi = given[k + 1][0] if k + 1 < len(given) else 1.0
        weighted[value] = weighted.get(value, 0.0) + (hi - lo)
    return _law(QUANTILES, weighted, source="", samples=len(given))


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each data row; a header is a first line no cell of which starts like a number."""
    return data_rows(path, lambda c: bool(_NUMERIC.match(c)))


def _cell(parse: Any, cell: str, source: str, where: str) -> float:
    try:
        return parse(cell)
    except units.UnitError as exc:
        raise SpecError(str(exc), source=source, field=where) from None


def read_empirical(path: Path, unit: str = DEFAULT_UNIT) -> BandwidthLaw:
    """One bandwidth sample per row, each weighing the same."""
    source = str(path)
    counts: dict[float, float] = {}
    n_rows = 0
    for n, cells in _rows(path):
        if len(cells) > 1:
            raise SpecError(f"expected one bandwidth a row, got {len(cells)} columns: {','.join(cells)!r}",
                            source=source, field=f"line {n}")
        b = _cell(lambda c: bandwidth_value(c, unit), cells[0], source, f"line {n} bandwidth")
        counts[b] = counts.get(b, 0.0) + 1.0
        n_rows += 1
    if not n_rows:
        raise SpecError("no bandwidth samples: every line is blank, a comment or the header", source=source)
    return _law(EMPIRICAL, counts, source=source, samples=n_rows)


def read_series(path: Path, unit: str = DEFAULT_UNIT) -> BandwidthLaw:
    """`time_s,bandwidth` rows: each value weighs the time it holds."""
    source = str(path)
    times: list[float] = []
    values: list[float] = []
    line_of: list[int] = []
    for n, cells in _rows(path):
        if len(cells) != 2:
            raise SpecError(f"expected `time_s,bandwidth`, got {len(cells)} column{'s' * (len(cells) != 1)}: "
                            f"{','.join(cells)!r}", source=source, field=f"line {n}")
        t = _cell(units.parse_duration, cells[0], source, f"line {n} time_s")
        if times and not t > times[-1]:
            raise SpecError(f"{cells[0]!r} is not after the previous time, {times[-1]:g} s (line {line_of[-1]}): "
                            "times must increase strictly", source=source, field=f"line {n} time_s")
        b = _cell(lambda c: bandwidth_value(c, unit), cells[1], source, f"line {n} bandwidth")
        times.append(t)
        values.append(b)
        line_of.append(n)
    if not times:
        raise SpecError("no samples: every line is blank, a comment or the header", source=source)
    if len(times) < 2:
        raise SpecError("a series needs at least two rows (how long a value holds is the time to the next)",
                        source=source, field=f"line {line_of[0]}")
    gaps = [b - a for a, b in pairwise(times)]
    hold = float(statistics.median(gaps))
    held: dict[float, float] = {}
    for v, d in zip(values, [*gaps, hold], strict=True):
        held[v] = held.get(v, 0.0) + d
    return _law(SERIES, held, source=source, samples=len(times), times_s=tuple(times),
                series_bytes_per_s=tuple(values), hold_last_s=hold)


def law_of(bw: BandwidthField, base: Path) -> BandwidthLaw:
    """The law a ``link.bandwidth`` mapping gives; a file is relative to ``base``."""
    if isinstance(bw, QuantileBandwidth):
        return quantile_law(bw)
    p = Path(bw.file).expanduser()
    path = p if p.is_absolute() else base / p
    return read_series(path, bw.unit) if isinstance(bw, SeriesBandwidth) else read_empirical(path, bw.unit)
