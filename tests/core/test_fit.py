"""The stack fit (core.fit) recovers parameters it generated, leaves sources out honestly, and the
public measurement set reads (io.measurement_set), with one line per bad cell."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from prfaas_plan.core import fit
from prfaas_plan.errors import SpecError
from prfaas_plan.io import measurement_set as ms
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec

ROOT = Path(__file__).resolve().parents[2]
TRUE = Efficiency(compute=0.6, low_precision=0.7, memory=0.75, comm=0.7, prefill_overhead_s=0.03,
                  decode_overhead_s=0.002, gemm_half_tokens=300.0, peak_exponent=0.3, moe=0.25,
                  decode_layer_s=4e-5, collective_latency_s=2e-5)
BASE = Efficiency(compute=0.5, low_precision=0.6, memory=0.7, comm=0.7, prefill_overhead_s=0.05,
                  decode_overhead_s=0.003)


def _synthetic() -> list[fit.Point]:
    cat = Catalog.default()
    models = [load_model(n, cat) for n in ("Llama-3.1-8B", "Llama-3.1-70B", "Qwen3-235B-A22B")]
    gpus = [load_gpu(n, cat) for n in ("H100", "B200", "A100-80GB")]
    pts = []
    for i, m in enumerate(models):
        for j, g in enumerate(gpus):
            inst = InstanceSpec(gpu=g, gpus=8)
            for length in (512, 2048, 8192, 32768):
                pts.append(fit.Point(model=m, instance=inst, kind="prefill", measured_s=0.0, source=f"s{(i + j) % 4}",
                                     length=length))
            pts.append(fit.Point(model=m, instance=inst, kind="decode", measured_s=0.0, source=f"s{(i + j) % 4}",
                                 batch=1, context=4096))
    times = fit.predict(pts, TRUE)
    return [replace(p, measured_s=float(t)) for p, t in zip(pts, times, strict=True)]


def test_the_fit_recovers_the_parameters_that_made_the_times():
    pts = _synthetic()
    names = ("compute", "moe", "gemm_half_tokens", "peak_exponent", "prefill_overhead_s", "memory",
             "decode_overhead_s", "decode_layer_s")
    f = fit.fit_stack(pts, replace(BASE, collective_latency_s=2e-5), names, loss="linear")
    np.testing.assert_allclose(f.ratio, 1.0, rtol=1e-4)
    for n in ("compute", "moe", "gemm_half_tokens", "peak_exponent", "prefill_overhead_s"):
        assert getattr(f.efficiency, n) == pytest.approx(getattr(TRUE, n), rel=1e-3), n


@pytest.mark.slow
def test_leaving_a_source_out_predicts_it_from_the_others():
    pts = _synthetic()
    names = ("compute", "moe", "gemm_half_tokens", "peak_exponent", "prefill_overhead_s")
    held = fit.leave_one_source_out([p for p in pts if p.kind == "prefill"],
                                    replace(TRUE, compute=0.5, moe=None, gemm_half_tokens=0.0, peak_exponent=0.0,
                                            prefill_overhead_s=0.05), names, loss="linear")
    np.testing.assert_allclose(held, 1.0, rtol=1e-3)  # a model the data follow exactly is predicted exactly


def test_parameters_the_points_cannot_see_are_not_fitted():
    pts = [p for p in _synthetic() if p.kind == "prefill" and p.model.moe is None]
    assert fit.identified(pts, fit.PREFILL_PARAMETERS + fit.DECODE_PARAMETERS) == (
        "compute", "gemm_half_tokens", "peak_exponent", "prefill_overhead_s", "collective_latency_s")
    with pytest.raises(SpecError, match="cannot fit"):
        fit.fit_stack(pts[:2], BASE, ("compute", "gemm_half_tokens", "prefill_overhead_s"))


HEADER = ",".join(ms.COLUMNS)


def _csv(tmp_path, *rows: str) -> Path:
    path = tmp_path / "m.csv"
    path.write_text("# a comment\n" + HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def _read(path: Path):
    cat = Catalog.default()
    return ms.read_points(path, lambda n: load_model(n, cat), lambda g: load_gpu(g, cat))


def test_the_set_reads_times_and_skips_other_quantities(tmp_path):
    path = _csv(tmp_path,
                "github:a/b/c.json@0123,sglang,0.5.9,H100,8,8,fp8,Llama-3.1-70B,x,1024,1,ttft_s,0.1,n",
                "https://e.x/p,vllm,0.11,H100,1,1,bf16,Llama-3.1-8B,x,4096,1,decode_step_s,0.007,n",
                "https://e.x/p,vllm,0.11,H100,1,1,bf16,Llama-3.1-8B,x,4096,1,kv_bytes,1e6,n")
    pts = _read(path)
    assert [(p.kind, p.length, p.measured_s, p.source, p.row) for p in pts] == [
        ("prefill", 1024, 0.1, "github:a/b/c.json@0123", 3), ("decode", 4096, 0.007, "https://e.x/p", 4)]
    assert pts[0].model.weight_dtype.value == "fp8" and pts[0].instance.gpus == 8


@pytest.mark.parametrize(("cell", "message"), [
    ("H100,8,8,fp8,Llama-3.1-70B,x,abc,1,ttft_s,0.1", "line 3, input_tokens: not a number: 'abc'"),
    ("H100,8,8,fp8,Llama-3.1-70B,x,1024,1,ttft_s,-1", "line 3, value_s: must be a positive finite number"),
    ("H100,8,8,fp8,Llama-3.1-70B,x,1024,1,ttft_s,inf", "line 3, value_s: must be a positive finite number"),
    ("H100,8,8,int3,Llama-3.1-70B,x,1024,1,ttft_s,0.1", "line 3, precision: unknown precision 'int3'"),
    ("H100,8,8,fp8,NoSuchModel,x,1024,1,ttft_s,0.1", "line 3, model: unknown model 'NoSuchModel'"),
    ("X9,8,8,fp8,Llama-3.1-70B,x,1024,1,ttft_s,0.1", "line 3, gpu: unknown hardware 'X9'"),
])
def test_a_bad_cell_is_one_line_naming_file_line_and_column(tmp_path, cell, message):
    path = _csv(tmp_path, f"s,sglang,1,{cell},n")
    with pytest.raises(SpecError) as exc:
        _read(path)
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_the_shipped_set_reads_and_names_its_sources():
    path = ROOT / "benchmarks" / "data" / "public_measurements.csv"
    pts = _read(path)
    assert len(pts) >= 45
    assert all(p.source.startswith(("github:", "https://")) for p in pts)
    assert len({p.source for p in pts}) >= 10
