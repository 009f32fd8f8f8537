"""The public measurement set (benchmarks/data/public_measurements.csv) as fit points.

One row per measured value, header first, ``#`` lines are comments:

    source,engine,engine_version,gpu,gpus,tp,precision,model,hf_model,input_tokens,batch,quantity,value_s,notes

- ``source``: where the number was published (``github:owner/repo/path@commit`` or a URL); the
  leave-one-source-out validation groups rows by it;
- ``gpu`` a catalog GPU, ``gpus`` the instance's GPU count (tensor/expert parallel over all);
- ``precision`` the weights' (bf16, fp16, fp8, fp4): a catalog model measured in another precision
  is taken with that weight dtype;
- ``model`` a catalog model (``hf_model`` the checkpoint measured, for the reader);
- ``quantity``: ``prefill_s`` (an engine's single-request prefill), ``ttft_s`` (a client's time to
  first token at concurrency 1: prefill plus the request's fixed costs) or ``decode_step_s`` (a
  step at ``batch`` requests, context ``input_tokens``); other quantities (sizes, rates) are kept
  for the reader and skipped by the fit.
Every error names the file, the line and the column, exit code 2.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from prfaas_plan.core.fit import Point
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.hardware import GpuSpec, InstanceSpec
from prfaas_plan.specs.model import DType, ModelSpec

COLUMNS = ("source", "engine", "engine_version", "gpu", "gpus", "tp", "precision", "model", "hf_model",
           "input_tokens", "batch", "quantity", "value_s", "notes")
TIMES = {"prefill_s": "prefill", "ttft_s": "prefill", "decode_step_s": "decode"}
PRECISIONS = {"bf16": DType.BF16, "fp16": DType.FP16, "fp8": DType.FP8, "fp4": DType.FP4}


def source_group(source: str) -> str:
    """A row's source: one published document version (the TensorRT-LLM tables of v0.5, v0.8 and
    v0.9 are three measurement campaigns of three releases), so the source string as it is."""
    return source


def read_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) of every data row; the header must hold every column of COLUMNS."""
    from prfaas_plan.io.files import read_text

    text = read_text(path, encoding="utf-8-sig")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip() and not
             line.lstrip().startswith("#")]
    if not lines:
        raise SpecError("no header and no rows", source=str(path))
    reader = csv.reader([line for _, line in lines])
    header = [h.strip() for h in next(reader)]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SpecError(f"missing column(s) {', '.join(missing)} (header: {', '.join(header)})", source=str(path),
                        field="line 1")
    out = []
    for (n, _), cells in zip(lines[1:], reader, strict=True):
        if len(cells) != len(header):
            raise SpecError(f"{len(cells)} cells, the header has {len(header)}", source=str(path), field=f"line {n}")
        out.append((n, dict(zip(header, (c.strip() for c in cells), strict=True))))
    return out


def _number(path: Path, n: int, row: dict[str, str], column: str, kind: Callable[[str], Any]) -> Any:
    text = row[column]
    try:
        value = kind(text)
    except ValueError:
        raise SpecError(f"not a number: {text!r}", source=str(path), field=f"line {n}, {column}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise SpecError(f"must be a positive finite number, got {text!r}", source=str(path),
                        field=f"line {n}, {column}")
    return value


def read_points(path: Path, model_of: Callable[[str], ModelSpec], gpu_of: Callable[[str], GpuSpec]) -> list[Point]:
    """The time rows of the set as fit points (other quantities skipped)."""
    points = []
    models: dict[tuple[str, str], ModelSpec] = {}
    for n, row in read_rows(path):
        kind = TIMES.get(row["quantity"])
        if kind is None:
            continue
        where = {"source": str(path)}
        precision = PRECISIONS.get(row["precision"].lower())
        if precision is None:
            raise SpecError(f"unknown precision {row['precision']!r} (use {', '.join(PRECISIONS)})",
                            field=f"line {n}, precision", **where)
        key = (row["model"], row["precision"])
        if key not in models:
            try:
                m = model_of(row["model"])
            except SpecError as exc:
                raise SpecError(str(exc.args[0]) if exc.args else str(exc), field=f"line {n}, model", **where) from None
            if precision != m.weight_dtype and not (precision in (DType.FP16, DType.BF16) and
                                                    m.weight_dtype in (DType.FP16, DType.BF16)):
                m = replace(m, weight_dtype=precision, weight_format=None)
            models[key] = m
        try:
            gpu = gpu_of(row["gpu"])
        except SpecError as exc:
            raise SpecError(str(exc.args[0]) if exc.args else str(exc), field=f"line {n}, gpu", **where) from None
        gpus = _number(path, n, row, "gpus", int)
        tokens = _number(path, n, row, "input_tokens", int)
        batch = _number(path, n, row, "batch", int)
        value = _number(path, n, row, "value_s", float)
        points.append(Point(model=models[key], instance=InstanceSpec(gpu=gpu, gpus=gpus), kind=kind, measured_s=value,
                            source=source_group(row["source"]), length=tokens, batch=batch, context=tokens,
                            client=row["quantity"] == "ttft_s", row=n))
    return points
