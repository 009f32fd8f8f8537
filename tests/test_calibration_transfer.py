"""How a calibration carries across GPUs, and how a measured profile carries to other instances.

- every catalog GPU without an efficiency block takes the serving stack's profile (``stacks/``), and
  says so (kv-rate, optimize on the qwen35 scenario, the hardware list);
- the ordering invariant: a GPU at least as fast as another on every peak (bf16 and low-precision
  FLOPS, HBM and scale-up bandwidth) never models slower, prefill and decode, over the catalog and
  over synthetic GPUs scaled up from it (hypothesis);
- a measured profile on X, scaled by T_analytic(Y) / T_analytic(X), for an instance Y without one;
- `perf --tpot` needs a unit.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prfaas_plan.api.perf import gpu_lookup
from prfaas_plan.cli import app
from prfaas_plan.core import decode, prefill
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.core.timing import Source
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.specs.hardware import GpuSpec, InstanceSpec
from prfaas_plan.specs.model import DType

K = 1024
H200_SOURCE = "SGLang v0.5.9, docs/sources.md#table-3 32K, 2026-12-01"
INHERITED = f"stack paper-table3: {H200_SOURCE}"
runner = CliRunner()


@cache
def catalog_gpus() -> tuple[GpuSpec, ...]:
    cat = Catalog.default()
    return tuple(load_gpu(p.stem, cat) for p in cat.files("hardware"))


@cache
def catalog_models() -> tuple:
    cat = Catalog.default()
    return tuple(load_model(p.stem, cat) for p in cat.files("models"))


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# ---------------------------------------------------------------------------------------------
# Inheritance and provenance


def test_every_catalog_gpu_takes_the_stack_profile():
    from prfaas_plan.io.load import load_stack

    default = load_stack()
    assert default.name == "open-engines"
    for stack, source in (("open-engines", f"stack open-engines: {default.source}"), ("paper-table3", INHERITED)):
        gpus = {g.name: g for g in (load_gpu(p.stem, Catalog.default(), stack)
                                    for p in Catalog.default().files("hardware"))}
        ref = gpus["H200"].efficiency
        assert ref.source == source and ref.stack == stack
        for name, g in gpus.items():
            assert g.efficiency == ref, name
    paper = load_gpu("H200", stack="paper-table3").efficiency
    assert (paper.compute, paper.low_precision, paper.prefill_overhead_s) == (0.4602, 0.55, 0.4)


def test_kv_rate_shows_the_stack():
    d = _json("kv-rate", "MiniMax-M2.5", "--hardware", "H100", "--lengths", "32K", "--stack", "paper-table3")
    assert d["sources"] == [{"source": "analytic", "detail": f"H100 efficiency: {INHERITED}"}]
    assert d["stack"]["name"] == "paper-table3"
    row = d["rows"][0]
    assert row["prefill_s_p10"] == pytest.approx(row["prefill_s"] * 0.807)
    assert row["kv_gbps_p10"] == pytest.approx(row["kv_gbps"] / 1.298)
    assert _json("kv-rate", "MiniMax-M2.5", "--hardware", "H100", "--lengths", "32K")["stack"]["name"] == "open-engines"


def test_optimize_qwen35_shows_the_default_stack_on_b200():
    d = _json("optimize", "qwen35-b200-h200")
    for key in ("prefill 8xB200", "prefill 8xH200"):
        assert d["sources"][key].startswith(f"analytic: {key.split('x')[1]} efficiency: stack open-engines: ")
    assert d["sources"]["stack"] == "open-engines"
    assert d["best"]["lambda_max_rps"] == pytest.approx(5.954, abs=1e-3)
    iv = d["lambda_interval"]
    assert iv["lambda_max_rps_p10"] < d["best"]["lambda_max_rps"] < iv["lambda_max_rps_p90"]
    # Lambda_max 6.927 req/s on the paper's stack (B200 there 7.098 on the optimistic defaults 0.5 / 300 ms)
    paper = _json("optimize", "qwen35-b200-h200", "--set", "stack=paper-table3")
    assert paper["best"]["lambda_max_rps"] == pytest.approx(6.927, abs=1e-3)


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


GPU_YAML = """name: {name}
source: test
bf16_dense_tflops: 500
fp8_dense_tflops: 1000
hbm_gb: 100
hbm_tb_per_s: 3
scaleup_gb_per_s_bidirectional: 400
"""


STACK_YAML = """name: mine
engine: vllm
versions: "0.11"
gpus: [H100]
source: my measurements
parameters: {compute: 0.3, low_precision: 0.5, prefill_overhead_ms: 250, source: mine}
prefill_band: {p10: 0.9, p90: 1.1}
band_from: my own check
"""


def test_a_user_gpu_takes_the_stack_and_a_user_stack_reaches_every_gpu(tmp_path):
    cat_dir = tmp_path / "cat"
    _write(cat_dir / "hardware" / "X1.yaml", GPU_YAML.format(name="X1"))
    cat = Catalog.default([cat_dir])
    assert load_gpu("X1", cat).efficiency.stack == "open-engines"
    _write(cat_dir / "stacks" / "mine.yaml", STACK_YAML)
    for name in ("X1", "H100", "H200"):
        e = load_gpu(name, cat, "mine").efficiency
        assert (e.compute, e.low_precision, e.prefill_overhead_s, e.stack) == (0.3, 0.5, 0.25, "mine")
        assert e.source == "stack mine: my measurements"
    # a calibrate overlay is that GPU's own calibration, and wins over any stack
    _write(cat_dir / "hardware" / "H200-calibrated.yaml",
           "overlay: H200\nefficiency: {compute: 0.35, source: own}\n")
    assert load_gpu("H200", cat, "mine").efficiency.compute == 0.35
    assert load_gpu("H100", cat, "mine").efficiency.compute == 0.3


def test_an_unknown_stack_is_one_line():
    from prfaas_plan.errors import SpecError

    with pytest.raises(SpecError, match="unknown stack 'nope'"):
        load_gpu("H100", Catalog.default(), "nope")


def test_a_gpu_with_its_own_block_keeps_it(tmp_path):
    path = _write(tmp_path / "Y.yaml", GPU_YAML.format(name="Y") + "efficiency: {compute: 0.2, source: own}\n")
    e = load_gpu(str(path)).efficiency
    assert (e.compute, e.low_precision, e.source) == (0.2, 1.0, "own")


# ---------------------------------------------------------------------------------------------
# Op classes: the GEMM rate


def test_gemm_rate_by_weight_dtype():
    h200 = load_gpu("H200", stack="paper-table3")
    e = h200.efficiency
    assert h200.gemm_flops_per_s(DType.BF16) == pytest.approx(989e12 * 0.4602)
    assert h200.gemm_flops_per_s(DType.FP8) == pytest.approx(1979e12 * 0.4602 * 0.55)
    # no FP8 tensor cores (A100): FP8 weights run the bf16 path
    a100 = load_gpu("A100-80GB", stack="paper-table3")
    assert a100.gemm_flops_per_s(DType.FP8) == pytest.approx(312e12 * e.compute)
    # FP8 peak barely above bf16: the bf16 path is faster, and is taken
    odd = replace(h200, fp8_flops=1.2 * h200.bf16_flops)
    assert odd.gemm_flops_per_s(DType.FP8) == pytest.approx(h200.bf16_flops * e.compute)


def test_prefill_compute_splits_gemm_and_attention_by_class():
    m, i = load_model("MiniMax-M2.5"), InstanceSpec(gpu=load_gpu("H200", stack="paper-table3"), gpus=8)
    w = prefill.prefill_work(m, 32 * K, gpus=8)
    r = prefill.time_from_work(w, i)
    e = i.gpu.efficiency
    expected = (float(w.gemm_flops + w.moe_flops) / (1979e12 * e.compute * e.low_precision)
                + float(w.attention_flops) / (989e12 * e.compute)) / 8
    assert float(r.compute_s) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# The ordering invariant


def _peaks(g: GpuSpec) -> tuple[float, ...]:
    return (g.bf16_flops, g.peak_flops(DType.FP8), g.peak_flops(DType.FP4), g.hbm_bytes_per_s,
            g.scaleup_bytes_per_s)


def dominates(a: GpuSpec, b: GpuSpec) -> bool:
    """a at least as fast as b on every peak (the effective low-precision peaks included)."""
    return all(x >= y for x, y in zip(_peaks(a), _peaks(b), strict=True))


def _assert_not_slower(model, fast: GpuSpec, slow: GpuSpec, gpus: int, length: float, batch: int, context: float):
    f, s = InstanceSpec(gpu=fast, gpus=gpus), InstanceSpec(gpu=slow, gpus=gpus)
    tf = float(prefill.prefill_time(model, f, length).seconds)
    ts = float(prefill.prefill_time(model, s, length).seconds)
    assert tf <= ts * (1 + 1e-12), f"{model.name} prefill {length:.0f}: {fast.name} {tf} > {slow.name} {ts}"
    df = float(decode.decode_step(model, f, batch, context).seconds)
    ds = float(decode.decode_step(model, s, batch, context).seconds)
    assert df <= ds * (1 + 1e-12), f"{model.name} decode B={batch}: {fast.name} {df} > {slow.name} {ds}"


def test_catalog_has_dominating_pairs():
    pairs = [(a.name, b.name) for a, b in itertools.permutations(catalog_gpus(), 2) if dominates(a, b)]
    assert ("H200", "H100") in pairs and ("B200", "H200") in pairs and ("H200", "H20") in pairs
    assert len(pairs) >= 15


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data(), length=st.floats(128, 256 * K), batch=st.integers(1, 512),
       context=st.floats(1 * K, 256 * K), gpus=st.sampled_from([1, 2, 8]))
def test_a_dominating_catalog_gpu_never_models_slower(data, length, batch, context, gpus):
    pairs = [(a, b) for a, b in itertools.permutations(catalog_gpus(), 2) if dominates(a, b)]
    fast, slow = data.draw(st.sampled_from(pairs))
    model = data.draw(st.sampled_from(catalog_models()))
    _assert_not_slower(model, fast, slow, gpus, length, batch, context)


scale = st.floats(1.0, 4.0)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data(), s=st.tuples(scale, scale, scale, scale, scale), length=st.floats(128, 256 * K),
       batch=st.integers(1, 512), context=st.floats(1 * K, 256 * K))
def test_a_gpu_scaled_up_on_any_peaks_never_models_slower(data, s, length, batch, context):
    """Synthetic GPUs: each peak of a catalog GPU scaled by its own factor >= 1 (FP8 can fall below
    2x bf16, where the GEMM takes the bf16 path)."""
    base = data.draw(st.sampled_from(catalog_gpus()))
    up = replace(base, name=base.name + "-up", bf16_flops=base.bf16_flops * s[0],
                 fp8_flops=base.fp8_flops * s[1] if base.fp8_flops else None,
                 fp4_flops=base.fp4_flops * s[2] if base.fp4_flops else None,
                 hbm_bytes_per_s=base.hbm_bytes_per_s * s[3], scaleup_bytes_per_s=base.scaleup_bytes_per_s * s[4])
    if not dominates(up, base):  # a bf16 peak scaled past a missing FP4 peak's fallback
        return
    model = data.draw(st.sampled_from(catalog_models()))
    _assert_not_slower(model, up, base, 8, length, batch, context)


def test_the_invariant_catches_what_the_issue_reported():
    """The oracle can fail: H100 on the old optimistic defaults (compute 0.5, 300 ms) against the
    calibrated H200, which dominates it, modelled H100 faster (0.912 s vs 1.036 s at 32K)."""
    h200 = load_gpu("H200", stack="paper-table3")
    old_h100 = replace(load_gpu("H100", stack="paper-table3"),
                       efficiency=replace(h200.efficiency, compute=0.5, low_precision=1.0, prefill_overhead_s=0.3,
                                          source="default"))
    assert dominates(h200, old_h100)
    with pytest.raises(AssertionError, match="prefill"):
        _assert_not_slower(load_model("MiniMax-M2.5"), h200, old_h100, 8, 32 * K, 8, 32 * K)


def test_weak_fp8_tensor_cores_never_lose_to_none():
    """A GPU whose FP8 peak is barely above bf16 still dominates the same GPU without FP8: the
    bf16 path bounds the GEMM rate, so FP8 models are not slower on it."""
    a100 = load_gpu("A100-80GB")
    weak = replace(a100, name="A100-fp8", fp8_flops=1.1 * a100.bf16_flops)
    assert dominates(weak, a100)
    for m in catalog_models():
        if m.weight_dtype in (DType.FP8, DType.FP4):
            _assert_not_slower(m, weak, a100, 8, 32 * K, 64, 32 * K)


def test_prefill_ordering_at_32k_h100_h200_b200():
    """The closing note's ordering: T(H100) > T(H200) > T(B200) at 32K (seconds, analytic)."""
    expected = {"MiniMax-M2.5": (1.1086, 1.0475, 0.7146), "Qwen3.5-397B-A17B": (1.2451, 1.1538, 0.7773),
                "Kimi-Linear-48B-A3B": (0.5835, 0.5640, 0.4821)}
    for name, times in expected.items():
        got = [d["rows"][0]["prefill_s"] for d in
               (_json("kv-rate", name, "--hardware", h, "--lengths", "32K", "--source", "analytic", "--stack",
                      "paper-table3")
                for h in ("H100", "H200", "B200"))]
        np.testing.assert_allclose(got, times, atol=1e-4)
        assert got[0] > got[1] > got[2]


# ---------------------------------------------------------------------------------------------
# A measured profile carried to another instance


def test_scaled_profile_is_the_measurement_times_the_analytic_ratio():
    m = load_model("internal-1t")
    h100, h200 = (InstanceSpec(gpu=load_gpu(n, stack="paper-table3"), gpus=8) for n in ("H100", "H200"))
    t = prefill_timer(m, h100, gpu_of=gpu_lookup(Catalog.default()))
    assert t.source == Source.SCALED
    assert t.detail.startswith("PrfaaS paper Table 5, measured on 8xH200 (SGLang), scaled by the analytic ratio "
                               f"T(8xH100) / T(8xH200) (H100 efficiency: {INHERITED})")
    lengths = np.array([1 * K, 8 * K, 32 * K, 128 * K])
    ratio = prefill.prefill_time(m, h100, lengths).seconds / prefill.prefill_time(m, h200, lengths).seconds
    np.testing.assert_allclose(t(lengths), np.array([0.44, 0.72, 1.84, 7.40]) * ratio, rtol=1e-12)
    assert np.all(ratio > 1)  # same FLOPS, less HBM bandwidth
    # without a GPU lookup nothing is transferred; --source measured never scales
    assert prefill_timer(m, h100).source == Source.ANALYTIC
    with pytest.raises(Exception, match="no measured profile"):
        prefill_timer(m, h100, source="measured", gpu_of=gpu_lookup(Catalog.default()))


def test_scaled_profile_keeps_the_ordering_against_the_measurement():
    m = load_model("internal-1t")
    h200 = InstanceSpec(gpu=load_gpu("H200"), gpus=8)
    measured = prefill_timer(m, h200)
    assert measured.source == Source.MEASURED
    lengths = np.geomspace(128, 256 * K, 200)
    for g in catalog_gpus():
        if g.name == "H200":
            continue
        t = prefill_timer(m, InstanceSpec(gpu=g, gpus=8), gpu_of=gpu_lookup(Catalog.default()))
        assert t.source == Source.SCALED
        if dominates(g, h200.gpu):
            assert np.all(t(lengths) <= measured(lengths) * (1 + 1e-12)), g.name
        if dominates(h200.gpu, g):
            assert np.all(t(lengths) >= measured(lengths) * (1 - 1e-12)), g.name


@pytest.mark.parametrize(("hardware", "lam", "source"), [
    ("H200", 3.300251355675281, "measured"), ("B200", 4.6875, "scaled")])
def test_case_study_with_the_prfaas_cluster_moved(hardware, lam, source):
    """Before: H100 analytic on the optimistic defaults gave 3.906 req/s, above H200's measured 3.300;
    8xH100 no longer plans at all: 931 GiB of fp8 weights are more than 0.9 x 8 x 80 GB (issue 26)."""
    d = _json("optimize", "--set", f"clusters.prfaas.hardware={hardware}")
    assert d["best"]["lambda_max_rps"] == pytest.approx(lam, rel=1e-9)
    assert d["sources"][f"prefill 8x{hardware}"].startswith(f"{source}: PrfaaS paper Table 5, measured on 8xH200")


def test_case_study_on_8xh100_cannot_hold_the_weights():
    res = runner.invoke(app, ["optimize", "--set", "clusters.prfaas.hardware=H100"])
    assert res.exit_code == 1
    assert res.stderr == ("error: prefill service (clusters.prfaas): 8xH100 cannot hold internal-1t: the weights "
                          "(931 GiB) and one request's KV at 131,072 tokens (2.28 GiB) do not fit in 0.9 of its "
                          "596 GiB of HBM (536 GiB)\n")


# ---------------------------------------------------------------------------------------------
# perf --tpot


def test_perf_tpot_needs_a_unit():
    result = runner.invoke(app, ["perf", "internal-1t", "--tpot", "25"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --tpot: '25' needs a unit, e.g. 25ms or 0.025s"
    ms = _json("perf", "internal-1t", "--tpot", "25ms", "--lengths", "1K", "--batches", "1")
    s = _json("perf", "internal-1t", "--tpot", "0.025s", "--lengths", "1K", "--batches", "1")
    assert ms["decode_capacity"]["tpot_s"] == s["decode_capacity"]["tpot_s"] == pytest.approx(0.025)
    assert ms["bs_max"] == s["bs_max"]
