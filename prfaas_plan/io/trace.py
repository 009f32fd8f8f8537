"""Read a Mooncake trace (JSONL) into a ``core.trace.Trace``.

One JSON object per line: ``timestamp`` (ms), ``input_length`` and ``output_length`` (tokens),
``hash_ids`` (list of ints, one per 512-token prefix block). Other keys are ignored, blank lines
skipped. Every problem is a ``SpecError`` naming the file and the line.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.core.trace import DEFAULT_BLOCK_TOKENS, Trace
from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.files import read_text

__all__ = ["load_mooncake_trace"]

_FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
_INT64 = (-(2**63), 2**63 - 1)
_MAX_TOKENS = 2**40  # far above any context; sums over millions of requests stay exact in int64


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _whole(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be a whole number of tokens >= {minimum}, got {_short(value)}")
    if value > _MAX_TOKENS:
        raise ValueError(f"{name} must be at most 2^40 tokens, got {_short(value)}")
    return value


def _record(obj: Any) -> tuple[float, int, int, list[int]]:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {kind_of(obj)}")
    missing = [k for k in _FIELDS if k not in obj]
    if missing:
        raise ValueError(f"missing field {missing[0]!r}")
    ts = obj["timestamp"]
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts):
        raise ValueError(f"timestamp must be a finite number of milliseconds, got {ts!r}")
    hashes = obj["hash_ids"]
    if not isinstance(hashes, list) or not all(type(h) is int for h in hashes):
        bad = hashes if not isinstance(hashes, list) else next(h for h in hashes if type(h) is not int)
        raise ValueError(f"hash_ids must be a list of integers, got {_short(bad)}")
    if hashes and not (_INT64[0] <= min(hashes) and max(hashes) <= _INT64[1]):
        raise ValueError("hash_ids must fit in 64-bit integers")
    return (float(ts), _whole(obj["input_length"], "input_length", 1),
            _whole(obj["output_length"], "output_length", 0), hashes)


def load_mooncake_trace(path: str | os.PathLike[str], *, block_tokens: int = DEFAULT_BLOCK_TOKENS) -> Trace:
    """Parse a Mooncake JSONL trace; timestamps become seconds (``units.MS``)."""
    source = os.fspath(path)
    ts: list[float] = []
    inp: list[int] = []
    out: list[int] = []
    flat: list[int] = []
    offsets = [0]
    text = read_text(Path(source))
    for n, line in enumerate(text.split("\n"), start=1):  # as file iteration counts lines
        if not line.strip():
            continue
        try:
            t, i, o, hashes = _record(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SpecError(f"not valid JSON ({exc.msg}, column {exc.colno})",
                            source=source, field=f"line {n}") from None
        except ValueError as exc:
            raise SpecError(str(exc), source=source, field=f"line {n}") from None
        ts.append(t)
        inp.append(i)
        out.append(o)
        flat.extend(hashes)
        offsets.append(len(flat))
    if not ts:
        raise SpecError("the trace holds no requests", source=source)
    return Trace(arrival_s=units.ms_to_s(np.array(ts, dtype=np.float64)),
                 input_tokens=np.array(inp, dtype=np.int64), output_tokens=np.array(out, dtype=np.int64),
                 hash_ids=np.array(flat, dtype=np.int64), hash_offsets=np.array(offsets, dtype=np.int64),
                 block_tokens=block_tokens)
