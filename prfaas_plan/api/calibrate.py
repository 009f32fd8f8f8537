"""`calibrate` into a serving-stack profile: measurements as people have them -> stacks/NAME.yaml.

Inputs, each detected: the public measurement set's CSV (``io.measurement_set``: every row names
its GPU, instance, model and source), or a serving benchmark's output (``io.bench_formats``:
SGLang, vLLM, genai-perf, AIPerf, the PrfaaS reproduction), which names neither the GPU nor the
instance, so ``--hardware``, ``--gpus`` and (when the file names no catalog model) ``--model``
say them. The fit (``core.fit``) starts from the base profile (the default stack, or ``--stack``)
and fits only what the points identify, at most one parameter per two points, in the order of
``PRIORITY``; the rest is the base's. With three sources or more, the band is
leave-one-source-out; with fewer, the in-sample residuals' P10-P90, and the profile says so. A
source is a file of a benchmark's output, or a row's ``source`` in the public set's CSV.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from prfaas_plan.api.inputs import stack_of
from prfaas_plan.core import fit
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.report.stack_yaml import stack_yaml
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.perf import StackCalibration, StackPoint
from prfaas_plan.specs.stack import StackSpec

# which parameters a few points fit first (the rest stay the base profile's)
PRIORITY = ("prefill_overhead_s", "compute", "request_overhead_s", "gemm_half_tokens", "memory", "decode_overhead_s",
            "moe", "attention_linear", "low_precision", "moe_low_precision", "moe_layer_s", "moe_expert_s",
            "decode_layer_s",
            "peak_exponent", "collective_latency_s")


def is_measurement_set(path: Path) -> bool:
    """A CSV whose header has the measurement set's ``source`` and ``quantity`` columns."""
    if path.suffix.lower() != ".csv":
        return False
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for line in fh:
                if line.strip() and not line.lstrip().startswith("#"):
                    header = next(csv.reader([line]))
                    return "source" in header and "quantity" in header
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return False


def _bench_points(path: Path, *, hardware: str | None, gpus: int | None, model: str | None, catalog: Catalog,
                  input_tokens: int | None, batch: int | None) -> list[fit.Point]:
    from prfaas_plan.io.bench_formats import read_bench

    if hardware is None or gpus is None:
        raise SpecError("a benchmark file does not say its GPU or instance: give --hardware and --gpus",
                        source=str(path))
    points = read_bench(path, input_tokens=input_tokens, batch=batch)
    inst = InstanceSpec(gpu=load_gpu(hardware, catalog), gpus=gpus)
    out = []
    for b in points:
        name = model or b.model
        if name is None:
            raise SpecError("names no model: give --model (a catalog name or model YAML)", source=str(path),
                            field=f"line {b.line}")
        try:
            spec = load_model(name, catalog)
        except SpecError as exc:
            if model is None:  # the file's own id (a hub name) is not a catalog model
                raise SpecError(f"its model {name!r} is not in the catalog: give --model", source=str(path),
                                field=f"line {b.line}") from None
            raise exc.at(field="--model") from None
        out.append(fit.Point(model=spec, instance=inst, kind=b.kind, measured_s=b.seconds, source=str(path),
                             length=b.input_tokens, batch=b.batch, context=b.input_tokens,
                             client=b.quantity == "ttft_s", row=b.line))
    return out


def calibrate_stack(paths: Sequence[Path], *, name: str, catalog: Catalog, hardware: str | None = None,
                    gpus: int | None = None, model: str | None = None, base: str | None = None,
                    input_tokens: int | None = None, batch: int | None = None) -> StackCalibration:
    """Fit a serving-stack profile on the points of ``paths``; its YAML, its parameters and residuals."""
    from prfaas_plan.io import measurement_set as ms

    prof = stack_of(base, catalog)
    points: list[fit.Point] = []
    for path in paths:
        if is_measurement_set(path):
            points += ms.read_points(path, lambda n: load_model(n, catalog), lambda g: load_gpu(g, catalog))
        else:
            points += _bench_points(path, hardware=hardware, gpus=gpus, model=model, catalog=catalog,
                                    input_tokens=input_tokens, batch=batch)
    if not points:
        raise SpecError("no prefill or decode time to fit on", source=", ".join(str(p) for p in paths))
    seen = fit.identified(points, PRIORITY)
    names = tuple(n for n in PRIORITY if n in seen)[: max(1, len(points) // 2)]
    whole = fit.fit_stack(points, prof.efficiency, names, source=f"calibrated on {', '.join(p.name for p in paths)}")
    sources = sorted({p.source for p in points})
    if len(sources) >= 3:
        held = fit.leave_one_source_out(points, prof.efficiency, names)
        band_from = f"measured / predicted on held-out sources ({len(sources)}, each left out of the fit in turn)"
    else:
        held = whole.ratio
        band_from = (f"in-sample measured / predicted over {len(points)} points of {len(sources)} source(s): "
                     "no source was held out, so the band is optimistic")
    lo, hi = (float(q) for q in np.quantile(held, [0.1, 0.9]))
    spec = StackSpec(name=name, engine=prof.engine if base else "measured", versions="as measured",
                     gpus=tuple(sorted({p.instance.gpu.name for p in points})),
                     description=f"fitted by prfaas-plan calibrate on {len(points)} points",
                     source=whole.efficiency.source, efficiency=replace(whole.efficiency, stack=name),
                     measurements=", ".join(str(p) for p in paths),
                     points=len(points), sources=len(sources), prefill_band=(min(lo, 1.0), max(hi, 1.0)),
                     decode_band=None, band_from=band_from)
    rows = tuple(StackPoint(
        file=p.source, line=p.row, model=p.model.name, instance=p.instance.name, kind=p.kind, tokens=p.length,
        batch=p.batch, measured_s=p.measured_s, predicted_s=float(whole.predicted_s[i]),
        rel_error=float(whole.predicted_s[i] / p.measured_s - 1), held_out_ratio=float(held[i]))
        for i, p in enumerate(points))
    return StackCalibration(profile=spec, base=prof.name, fitted=tuple(whole.fitted), rows=rows,
                            median_abs_rel_error=float(np.median(np.abs(1 / whole.ratio - 1))),
                            stack_yaml=stack_yaml(spec))
