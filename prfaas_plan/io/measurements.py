"""Measurement CSV for ``prfaas-plan calibrate``, and the efficiency overlay it writes.

CSV format (one file for prefill and decode rows; UTF-8, comma-separated, header first):

- lines starting with ``#`` and blank lines are comments (state where the numbers came from);
- column ``model`` is required: a catalog name or a model YAML path;
- a prefill row fills ``length`` (tokens: 32768 or 32K) and ``prefill_s`` (seconds: 1.84,
  1.84s or 1840ms), optionally ``cached_prefix`` (tokens already in the prefix cache, default 0);
- a decode row fills ``batch`` (requests), ``context`` (tokens) and ``step_s`` (seconds per step);
- an optional ``kind`` column (``prefill`` or ``decode``) says which a row is; without it a row
  is a prefill row when a ``length`` or ``prefill_s`` cell is filled and a decode row when a
  ``batch``, ``context`` or ``step_s`` cell is. The cells of the other kind stay blank, so
  ``model,length,prefill_s`` alone is a valid prefill-only file.

Rows are numbered as a spreadsheet shows them: the file's line number, counting the header and
comment lines (quoted cells spanning lines are not supported). Every error names the file and
the row and ends the command with exit code 2.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import yaml

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.overlay import overlay_mapping
from prfaas_plan.specs.hardware import Efficiency

M = TypeVar("M")
PREFILL_COLUMNS = ("length", "prefill_s")
DECODE_COLUMNS = ("batch", "context", "step_s")
KNOWN_COLUMNS = ("kind", "model", "cached_prefix", *PREFILL_COLUMNS, *DECODE_COLUMNS)


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasurementRow(Generic[M]):
    """One validated CSV row (SI units); ``model`` is whatever the resolver returned."""

    row: int
    kind: str  # "prefill" or "decode"
    model_name: str
    model: M
    length: int = 0
    cached_prefix: int = 0
    prefill_s: float = 0.0
    batch: int = 0
    context: int = 0
    step_s: float = 0.0


def _lines(path: Path) -> list[tuple[int, str]]:
    from prfaas_plan.io.load import read_text

    text = read_text(path, encoding="utf-8-sig")
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")]


class _Row:
    """Cell access with errors that name the file, the row and the column."""

    def __init__(self, source: str, number: int, cells: dict[str, str]):
        self.source, self.number, self.cells = source, number, cells

    def error(self, message: str) -> SpecError:
        return SpecError(message, source=self.source, field=f"row {self.number}")

    def text(self, column: str) -> str:
        return (self.cells.get(column) or "").strip()

    def required(self, column: str, kind: str) -> str:
        if column not in self.cells:
            raise self.error(f"missing column {column!r} (a {kind} row needs {', '.join(_needs(kind))})")
        value = self.text(column)
        if not value:
            raise self.error(f"{column} is blank (a {kind} row needs {', '.join(_needs(kind))})")
        return value

    def tokens(self, column: str, kind: str, *, optional: bool = False) -> int:
        value = self.text(column) if optional else self.required(column, kind)
        if optional and value in ("", "0"):
            return 0
        try:
            return units.parse_length(value)
        except ValueError:
            raise self.error(f"{column} {value!r} is not a positive token count (examples: 32768, 32K)") from None

    def seconds(self, column: str, kind: str) -> float:
        value = self.required(column, kind)
        try:
            out = units.parse_duration(value)
        except ValueError as exc:  # units says why: no number, an unknown unit, a negative time
            raise self.error(f"{column}: {exc} (examples: 1.84, 1.84s, 25ms)") from None
        if not out > 0:
            raise self.error(f"{column} must be a positive time, got {value!r}")
        return out

    def count(self, column: str, kind: str) -> int:
        value = self.required(column, kind)
        try:
            out = int(value)
        except ValueError:
            raise self.error(f"{column} {value!r} is not a whole number") from None
        if out < 1:
            raise self.error(f"{column} must be at least 1, got {out}")
        return out


def _needs(kind: str) -> tuple[str, ...]:
    return ("model", *PREFILL_COLUMNS) if kind == "prefill" else ("model", *DECODE_COLUMNS)


def _infer_kind(r: _Row, header: list[str]) -> str:
    """A row without ``kind``: prefill if a prefill cell is filled, decode if a decode cell is."""
    pre = any(r.text(c) for c in PREFILL_COLUMNS)
    dec = any(r.text(c) for c in DECODE_COLUMNS)
    if pre != dec:
        return "prefill" if pre else "decode"
    if pre:
        raise r.error("fills both prefill and decode cells; give a kind column or blank one set")
    has_pre = set(PREFILL_COLUMNS) <= set(header)
    return "prefill" if has_pre else "decode"


def read_measurements(path: Path | str, resolve: Callable[[str], M]) -> tuple[MeasurementRow[M], ...]:
    """Read and validate a measurement CSV; ``resolve`` turns a model name into a model spec.

    Raises SpecError (source = the file, field = "row N") for a missing column, a blank, non-numeric
    or non-positive value, an unknown kind, or a model ``resolve`` rejects.
    """
    path = Path(path)
    source = str(path)
    lines = _lines(path)
    if not lines:
        raise SpecError("no header and no rows", source=source)
    header_row, header_line = lines[0]
    header = [h.strip() for h in next(csv.reader([header_line]))]
    where = f"row {header_row}"
    if "model" not in header:
        raise SpecError(f"missing column 'model' (header: {', '.join(header)})", source=source, field=where)
    unknown = [h for h in header if h not in KNOWN_COLUMNS]
    if unknown:
        raise SpecError(f"unknown column {unknown[0]!r} (known: {', '.join(KNOWN_COLUMNS)})", source=source,
                        field=where)
    if not (set(PREFILL_COLUMNS) <= set(header) or set(DECODE_COLUMNS) <= set(header)):
        missing = [c for c in PREFILL_COLUMNS if c not in header]
        raise SpecError(f"missing column {missing[0]!r}: give {', '.join(PREFILL_COLUMNS)} for prefill rows "
                        f"or {', '.join(DECODE_COLUMNS)} for decode rows", source=source, field=where)
    models: dict[str, M] = {}
    out: list[MeasurementRow[M]] = []
    for number, line in lines[1:]:
        values = next(csv.reader([line]))
        r = _Row(source, number, dict(zip(header, values, strict=False)))
        if len(values) > len(header):
            raise r.error(f"{len(values)} cells but the header has {len(header)} columns")
        kind = r.text("kind").lower() or _infer_kind(r, header)
        if kind not in ("prefill", "decode"):
            raise r.error(f"kind {r.text('kind')!r} is neither 'prefill' nor 'decode'")
        name = r.required("model", kind)
        if name not in models:
            try:
                models[name] = resolve(name)
            except SpecError as exc:
                raise r.error(str(exc.args[0])) from None
        if kind == "prefill":
            out.append(MeasurementRow(row=number, kind=kind, model_name=name, model=models[name],
                                      length=r.tokens("length", kind), prefill_s=r.seconds("prefill_s", kind),
                                      cached_prefix=r.tokens("cached_prefix", kind, optional=True)))
        else:
            out.append(MeasurementRow(row=number, kind=kind, model_name=name, model=models[name],
                                      batch=r.count("batch", kind), context=r.tokens("context", kind),
                                      step_s=r.seconds("step_s", kind)))
    if not out:
        raise SpecError("the file has a header but no measurement rows", source=source)
    return tuple(out)


def overlay_yaml(hardware: str, efficiency: Efficiency, *, comment: str = "") -> str:
    """YAML text of the overlay, validated against ``EfficiencyOverlay`` before it is returned."""
    from prfaas_plan.io.load import validate
    from prfaas_plan.io.schema import EfficiencyOverlay

    data = overlay_mapping(hardware, efficiency)
    validate(EfficiencyOverlay, data, "calibration overlay")
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_overlay(path: Path | str, text: str) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot write: {exc.strerror or exc.__class__.__name__}", source=str(path)) from None
    return path
