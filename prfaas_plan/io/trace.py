"""Read a request trace, in the format its first line shows, into a ``core.trace.TraceFile``.

Formats (``TRACE_FORMATS``; ``format="auto"`` detects from the first non-blank line):

- ``mooncake``: kvcache-ai/Mooncake FAST25-release/traces (mooncake_trace.jsonl,
  conversation_trace.jsonl, toolagent_trace.jsonl). JSONL: ``timestamp`` (ms), ``input_length``,
  ``output_length`` (tokens), ``hash_ids`` (one per 512-token prefix block). Other keys ignored.
- ``bailian``: alibaba-edu/qwen-bailian-usagetraces-anon. JSONL as Mooncake plus ``chat_id``
  (required: it tells the two apart), ``parent_chat_id``, ``type``, ``turn`` (read, not used);
  ``timestamp`` in seconds; ``hash_ids`` over 16-token blocks.
- ``azure``, ``burstgpt``: CSV, see ``io/trace_csv.py``; they record no prefix hashes.

A first line starting with ``{`` or ``[`` is JSONL (Bailian if its object has ``chat_id`` or
``parent_chat_id``, else Mooncake); any other is a CSV header. A forced ``format`` that the first
line shows to be another format is refused, naming both; where the first line decides nothing the
forced format's reader says what is missing. Blank lines are skipped; every problem is one
``SpecError`` naming the file and the line (and, in a CSV, the column by its header name).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.core.trace import DEFAULT_BLOCK_TOKENS, FORMAT_BLOCK_TOKENS, TRACE_FORMATS, Trace, TraceFile
from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.files import note, read_text
from prfaas_plan.io.trace_csv import csv_format, read_azure, read_burstgpt, whole_tokens

__all__ = ["FORMAT_CHOICES", "detect_format", "load_mooncake_trace", "load_trace"]

FORMAT_CHOICES = ("auto", *TRACE_FORMATS)
_FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
_INT64 = (-(2**63), 2**63 - 1)
_SHAPES = ("mooncake (JSONL: timestamp, input_length, output_length, hash_ids), "
           "bailian (JSONL: the same plus chat_id, parent_chat_id), "
           "azure (CSV: TIMESTAMP,ContextTokens,GeneratedTokens), "
           "burstgpt (CSV: Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type)")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _whole(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise ValueError(f"{name} must be a whole number of tokens >= {minimum}, got {_short(value)}")
    return whole_tokens(value, name, minimum)


def _record(obj: Any, fields: tuple[str, ...], unit: str) -> tuple[float, int, int, list[int]]:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {kind_of(obj)}")
    missing = [k for k in fields if k not in obj]
    if missing:
        raise ValueError(f"missing field {missing[0]!r}")
    ts = obj["timestamp"]
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts):
        raise ValueError(f"timestamp must be a finite number of {unit}, got {ts!r}")
    hashes = obj["hash_ids"]
    if not isinstance(hashes, list) or not all(type(h) is int for h in hashes):
        bad = hashes if not isinstance(hashes, list) else next(h for h in hashes if type(h) is not int)
        raise ValueError(f"hash_ids must be a list of integers, got {_short(bad)}")
    if hashes and not (_INT64[0] <= min(hashes) and max(hashes) <= _INT64[1]):
        raise ValueError("hash_ids must fit in 64-bit integers")
    return (float(ts), _whole(obj["input_length"], "input_length", 1),
            _whole(obj["output_length"], "output_length", 0), hashes)


def _read_jsonl(text: str, source: str, fmt: str, block_tokens: int) -> Trace:
    """Mooncake (timestamps in ms) or Bailian (in s, and ``chat_id`` required) JSONL."""
    fields, unit, scale = ((*_FIELDS, "chat_id"), "seconds", 1.0) if fmt == "bailian" else \
        (_FIELDS, "milliseconds", units.MS)
    ts: list[float] = []
    inp: list[int] = []
    out: list[int] = []
    flat: list[int] = []
    offsets = [0]
    own = block_tokens == FORMAT_BLOCK_TOKENS.get(fmt)
    blocks_of = f"{block_tokens}-token blocks" + ("" if own else " (block_tokens)")
    for n, line in enumerate(text.split("\n"), start=1):  # as file iteration counts lines
        if not line.strip():
            continue
        try:
            t, i, o, hashes = _record(json.loads(line), fields, unit)
        except json.JSONDecodeError as exc:
            raise SpecError(f"not valid JSON ({exc.msg}, column {exc.colno})",
                            source=source, field=f"line {n}") from None
        except ValueError as exc:
            raise SpecError(str(exc), source=source, field=f"line {n}") from None
        blocks = -(-i // block_tokens)  # ceil: the last block may be partial
        if len(hashes) > blocks:
            raise SpecError(f"hash_ids: {len(hashes):,} ids are {len(hashes) * block_tokens:,} tokens of "
                            f"{blocks_of}, more than input_length {i:,} holds (at most {blocks:,})",
                            source=source, field=f"line {n}")
        ts.append(t)
        inp.append(i)
        out.append(o)
        flat.extend(hashes)
        offsets.append(len(flat))
    if not ts:
        raise SpecError("the trace holds no requests", source=source)
    return Trace(arrival_s=np.array(ts, dtype=np.float64) * scale,
                 input_tokens=np.array(inp, dtype=np.int64), output_tokens=np.array(out, dtype=np.int64),
                 hash_ids=np.array(flat, dtype=np.int64), hash_offsets=np.array(offsets, dtype=np.int64),
                 block_tokens=block_tokens)


def _first_line(text: str) -> tuple[int, str]:
    for n, line in enumerate(text.split("\n", 200), start=1):
        if line.strip():
            return n, line
    return 0, ""  # read_text refuses a blank file, so not reached


def detect_format(text: str) -> str | None:
    """The format the first non-blank line of ``text`` shows, or None when it matches none."""
    _, line = _first_line(text)
    head = line.lstrip("\ufeff \t")
    if head.startswith(("{", "[")):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            return "mooncake"  # JSONL by its first character; the reader says what is wrong
        return "bailian" if isinstance(obj, dict) and ("chat_id" in obj or "parent_chat_id" in obj) else "mooncake"
    return csv_format(head)


# per process, by file and options: a study's worker reads a trace once for all its points (a file
# edited since, by size or modification time, is read again)
_READ: dict[tuple[Any, ...], TraceFile] = {}
_READ_MAX = 4


def load_trace(path: str | os.PathLike[str], *, format: str | None = None, model_filter: str | None = None,
               block_tokens: int | None = None) -> TraceFile:
    """Read the trace at ``path`` (once per process for the same file and options; see ``_read``)."""
    p = Path(os.fspath(path))
    try:
        st = p.stat()
        key = (os.path.abspath(p), st.st_size, st.st_mtime_ns, format, model_filter, block_tokens) \
            if p.is_file() else None
    except OSError:
        key = None
    if key is not None and key in _READ:
        note(p)  # a cached scenario built on it still depends on it
        return _READ[key]
    tf = _read(path, format=format, model_filter=model_filter, block_tokens=block_tokens)
    if key is not None:
        if len(_READ) >= _READ_MAX:
            _READ.pop(next(iter(_READ)))
        _READ[key] = tf
    return tf


def _read(path: str | os.PathLike[str], *, format: str | None = None, model_filter: str | None = None,
          block_tokens: int | None = None) -> TraceFile:
    """Read the trace at ``path``; ``format`` None or "auto" detects it from the first line.

    ``model_filter`` keeps only BurstGPT rows whose Model equals it exactly (case-sensitive);
    given for another format it is refused. ``block_tokens`` None takes the format's own block
    size (``FORMAT_BLOCK_TOKENS``: Mooncake 512, Bailian 16); a value overrides it.
    """
    source = os.fspath(path)
    fmt = "auto" if format is None else format
    if fmt not in FORMAT_CHOICES:
        raise SpecError(f"unknown trace format {fmt!r}: use one of {', '.join(FORMAT_CHOICES)}",
                        field="--trace-format")
    text = read_text(Path(source))
    if text.startswith("\ufeff"):
        text = text[1:]
    seen = detect_format(text)
    n, line = _first_line(text)
    if fmt == "auto":
        if seen is None:
            raise SpecError(f"the first line {_short(line.strip())} matches no trace format; the formats read are "
                            f"{_SHAPES}", source=source, field=f"line {n}")
        fmt = seen
    elif seen is not None and seen != fmt:
        raise SpecError(f"the first line shows a {seen} trace, not {fmt} (--trace-format {fmt}); drop the option "
                        "to read it as it is", source=source, field=f"line {n}")
    if model_filter is not None and fmt != "burstgpt":
        raise SpecError(f"a model filter applies to BurstGPT traces (their Model column); this is a {fmt} trace",
                        source=source, field="model_filter")
    bt = int(FORMAT_BLOCK_TOKENS.get(fmt, DEFAULT_BLOCK_TOKENS) if block_tokens is None else block_tokens)
    if fmt in ("mooncake", "bailian"):
        return TraceFile(trace=_read_jsonl(text, source, fmt, bt), format=fmt, has_hashes=True, source=source)
    if fmt == "azure":
        return TraceFile(trace=read_azure(text, source, bt), format=fmt, has_hashes=False, source=source)
    trace, failed, filtered, models = read_burstgpt(text, source, bt, model_filter)
    return TraceFile(trace=trace, format=fmt, has_hashes=False, failed_excluded=failed, filtered_out=filtered,
                     models=models, source=source)


def load_mooncake_trace(path: str | os.PathLike[str], *, block_tokens: int = DEFAULT_BLOCK_TOKENS) -> Trace:
    """Parse a Mooncake JSONL trace; timestamps become seconds (``units.MS``)."""
    return load_trace(path, format="mooncake", block_tokens=block_tokens).trace
