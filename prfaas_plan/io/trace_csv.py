"""The CSV trace formats: Azure LLM inference traces (2023, 2024) and BurstGPT.

Neither records prefix hashes, so the traces read have none (their hit rate is unknown).

- ``azure`` (Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md and ...2024.md): header
  ``TIMESTAMP,ContextTokens,GeneratedTokens``. TIMESTAMP is a date-time, 2023 as
  ``2023-11-16 18:15:46.6805900`` (7 fractional digits), 2024 as
  ``2024-05-10 00:00:00.009930+00:00``. It is parsed exactly, to the nanosecond (up to 9
  fractional digits; Python's datetime would stop at microseconds), with a UTC offset if given
  (then every row must give one); arrival = seconds since the first row's TIMESTAMP.
  ContextTokens (input) is a whole number >= 1, GeneratedTokens (output) >= 0.
- ``burstgpt`` (HPMLL/BurstGPT, README): header ``Timestamp,Model,Request tokens,Response
  tokens,Total tokens,Log Type``. Timestamp is seconds from the trace start (kept as written),
  Request tokens the input (>= 1 unless the row failed), Response tokens the output. A row with
  0 Response tokens is a failed request (the README's "failure"): it is left out of the workload
  and counted. A model filter keeps the rows whose Model equals it exactly (case-sensitive:
  BurstGPT writes ``ChatGPT`` and ``GPT-4``); one that matches no row is an error naming the
  models present. Total tokens, if the column is there, must be a whole number >= 0 but is
  otherwise ignored: a value other than request + response is not an error (the two counts are
  what the planner uses). Log Type (``Conversation log`` / ``API log``) is read and not used.

Columns are found by header name, in any order; extra columns are ignored. A cell that is not
what its column holds is an error naming the line and the column by its header name.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from datetime import date, datetime

import numpy as np

from prfaas_plan import units
from prfaas_plan.core.trace import Trace
from prfaas_plan.errors import SpecError

__all__ = ["csv_format", "read_azure", "read_burstgpt", "whole_tokens"]

_MAX_TOKENS = 2**40  # far above any context; sums over millions of requests stay exact in int64
AZURE = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
BURSTGPT = ("Timestamp", "Model", "Request tokens", "Response tokens")  # + Total tokens, Log Type
_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
                   r"(?:(Z)|([+-])(\d{2}):?(\d{2}))?")
_EPOCH = date(1970, 1, 1).toordinal()
_SECONDS_PER_DAY = 86_400


def whole_tokens(value: int, name: str, minimum: int) -> int:
    if value < minimum:
        raise ValueError(f"{name} must be a whole number of tokens >= {minimum}, got {value}")
    if value > _MAX_TOKENS:
        raise ValueError(f"{name} must be at most 2^40 tokens, got {value}")
    return value


def _header(line: str) -> list[str]:
    return [c.strip() for c in next(csv.reader([line]), [])]


def csv_format(line: str) -> str | None:
    """The CSV format a header line names (by a column only it has), or None."""
    cells = set(_header(line))
    if cells & {"ContextTokens", "GeneratedTokens"}:
        return "azure"
    if cells & {"Request tokens", "Response tokens"}:
        return "burstgpt"
    return None


def _rows(text: str, source: str, required: tuple[str, ...],
          name: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {column: cell}) of each data row, after a header naming every ``required`` column."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    where: dict[str, int] = {}
    for row in reader:
        if not row or not any(c.strip() for c in row):
            continue
        n = reader.line_num
        if header is None:
            header = [c.strip() for c in row]
            missing = [c for c in required if c not in header]
            if missing:
                raise SpecError(f"the header has no column {missing[0]!r} (the {name} trace's header is "
                                f"{','.join(required)}), got {','.join(header)!r}", source=source,
                                field=f"line {n}")
            where = {c: header.index(c) for c in header}
            continue
        if len(row) != len(header):
            raise SpecError(f"{len(row)} cells where the header has {len(header)} columns",
                            source=source, field=f"line {n}")
        yield n, {c: row[i].strip() for c, i in where.items()}


def _tokens(cell: str, minimum: int) -> int:
    try:
        value = int(cell)
    except ValueError:
        try:
            number = float(cell)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number.is_integer()):
            raise ValueError(f"{cell!r} is not a whole number of tokens (>= {minimum})") from None
        value = int(number)
    if value < minimum:
        raise ValueError(f"{cell!r} is not a whole number of tokens >= {minimum}")
    if value > _MAX_TOKENS:
        raise ValueError(f"{cell!r} is more than 2^40 tokens")
    return value


def _instant_ns(cell: str) -> tuple[int, bool]:
    """Nanoseconds since 1970-01-01 (UTC if an offset is given) and whether one was."""
    m = _TIME.fullmatch(cell)
    if m is None:
        raise ValueError(f"{cell!r} is not a date-time like 2023-11-16 18:15:46.6805900 or "
                         "2024-05-10 00:00:00.009930+00:00")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    try:
        datetime(y, mo, d, h, mi, s)  # refuses month 13, Feb 30, hour 24, second 60
    except ValueError as exc:
        raise ValueError(f"{cell!r} is not a date-time ({exc})") from None
    frac = m.group(7) or ""
    offset = 0
    if m.group(9):
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            raise ValueError(f"{cell!r} has a UTC offset out of range")
        offset = (1 if m.group(9) == "+" else -1) * (oh * 3600 + om * 60)
    whole = (date(y, mo, d).toordinal() - _EPOCH) * _SECONDS_PER_DAY + h * 3600 + mi * 60 + s - offset
    return whole * 10**9 + int(frac.ljust(9, "0") or 0), bool(m.group(8) or m.group(9))


def _trace(ts: list[float] | np.ndarray, inp: list[int], out: list[int], source: str, block_tokens: int) -> Trace:
    if not inp:
        raise SpecError("the trace holds no requests", source=source)
    n = len(inp)
    return Trace(arrival_s=np.asarray(ts, dtype=np.float64), input_tokens=np.array(inp, dtype=np.int64),
                 output_tokens=np.array(out, dtype=np.int64), hash_ids=np.zeros(0, dtype=np.int64),
                 hash_offsets=np.zeros(n + 1, dtype=np.int64), block_tokens=block_tokens)


def read_azure(text: str, source: str, block_tokens: int) -> Trace:
    """An Azure LLM inference trace (2023 or 2024), arrivals in seconds since its first row."""
    ns: list[int] = []
    inp: list[int] = []
    out: list[int] = []
    zoned: bool | None = None
    for n, row in _rows(text, source, AZURE, "Azure"):
        column = "TIMESTAMP"
        try:
            t, has_zone = _instant_ns(row[column])
            if zoned is not None and has_zone != zoned:
                raise ValueError(f"{row[column]!r} " + ("gives a UTC offset where the first row gave none"
                                                        if has_zone else "has no UTC offset where the first row "
                                                        "gave one"))
            zoned = has_zone
            column = "ContextTokens"
            i = _tokens(row[column], 1)
            column = "GeneratedTokens"
            o = _tokens(row[column], 0)
        except ValueError as exc:
            raise SpecError(str(exc), source=source, field=f"line {n}, column {column}") from None
        ns.append(t)
        inp.append(i)
        out.append(o)
    first = ns[0] if ns else 0
    return _trace(np.array([t - first for t in ns], dtype=np.float64) * units.NS, inp, out, source, block_tokens)


def _seconds(cell: str) -> float:
    try:
        t = float(cell)
    except ValueError:
        t = math.nan
    if not math.isfinite(t):
        raise ValueError(f"{cell!r} is not a finite number of seconds")
    return t


def read_burstgpt(text: str, source: str, block_tokens: int,
                  model_filter: str | None) -> tuple[Trace, int, int, tuple[str, ...]]:
    """A BurstGPT trace: (trace, failed rows left out, rows of other models, models present)."""
    ts: list[float] = []
    inp: list[int] = []
    out: list[int] = []
    models: set[str] = set()
    failed = filtered = 0
    for n, row in _rows(text, source, BURSTGPT, "BurstGPT"):
        column = "Timestamp"
        try:
            t = _seconds(row[column])
            column = "Model"
            model = row[column]
            if not model:
                raise ValueError("an empty model name")
            column = "Request tokens"
            request = _tokens(row[column], 0)
            column = "Response tokens"
            response = _tokens(row[column], 0)
            if request == 0 and response > 0:  # a failed row may record 0 of both
                column = "Request tokens"
                raise ValueError("'0' is not a whole number of tokens >= 1 (a request that got a response)")
            column = "Total tokens"
            if column in row:
                _tokens(row[column], 0)  # checked, not used (see the module docstring)
        except ValueError as exc:
            raise SpecError(str(exc), source=source, field=f"line {n}, column {column}") from None
        models.add(model)
        if model_filter is not None and model != model_filter:
            filtered += 1
            continue
        if response == 0:
            failed += 1
            continue
        ts.append(t)
        inp.append(request)
        out.append(response)
    present = tuple(sorted(models))
    if model_filter is not None and model_filter not in models:
        raise SpecError(f"no row has Model {model_filter!r}; the models present are "
                        f"{', '.join(present) or 'none'} (the filter is case-sensitive)",
                        source=source, field="model_filter")
    if not inp and failed:
        raise SpecError(f"every request failed ({failed:,} rows with 0 Response tokens): no workload is left",
                        source=source)
    return _trace(ts, inp, out, source, block_tokens), failed, filtered, present
