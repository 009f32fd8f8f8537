"""Invariants over random valid scenarios (issue "Every real input works", "Keep it so").

More bandwidth, more PrfaaS instances or a GPU faster on every peak never lowers Lambda_max; the
offloaded fraction p falls as t rises; TTFT at (nearly) zero load is no more than at a load; the
same seed gives identical simulator output.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prfaas_plan.api.latency import latency
from prfaas_plan.api.plan import plan
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import FIXTURES, ROOT
from tests.simulated import simulate_systems

CI = bool(os.environ.get("CI"))
CATALOG = Catalog.default()
MODELS = ["internal-1t", "Kimi-Linear-48B-A3B", "Qwen3.5-397B-A17B", "MiniMax-M2.5", "Ring-2.5-1T", "DeepSeek-V3.2"]


def cases(n: int):
    return settings(max_examples=n, deadline=None, derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def scenario_overrides(draw) -> list[str]:
    """A valid case-study variant: model, fleet, link and workload drawn from sensible ranges."""
    return [
        f"model={draw(st.sampled_from(MODELS))}",
        f"clusters.prfaas.hardware={draw(st.sampled_from(['H200', 'H100', 'B200']))}",
        f"clusters.prfaas.instances={draw(st.integers(min_value=1, max_value=6))}",
        f"clusters.local.instances={draw(st.integers(min_value=2, max_value=10))}",
        f"link.bandwidth={draw(st.floats(min_value=1, max_value=400)):.3f}Gbps",
        f"workload.input.mu={draw(st.floats(min_value=8.0, max_value=10.8)):.3f}",
        f"workload.input.sigma={draw(st.floats(min_value=0.3, max_value=1.5)):.3f}",
    ]


def lam(overrides: list[str], catalog: Catalog = CATALOG, method: str = "paper") -> float:
    """Lambda_max; 0 for a fleet that cannot hold the model (``core.memory``: it serves nothing)."""
    sc = load_scenario(None, catalog, overrides=[*overrides, f"search.method={method}"])
    try:
        return plan(sc, methods=(method,)).result.head.best.lambda_max_rps
    except InfeasibleError as exc:
        if exc.binding != "memory":
            raise
        return 0.0


def _with(overrides: list[str], key: str, value: str) -> list[str]:
    return [o for o in overrides if not o.startswith(key + "=")] + [f"{key}={value}"]


@pytest.mark.slow
@cases(12)
@given(scenario_overrides(), st.floats(min_value=1.05, max_value=20), st.sampled_from(["paper", "exact"]))
def test_more_bandwidth_never_lowers_lambda(overrides, factor, method):
    bw = float(next(o for o in overrides if o.startswith("link.bandwidth=")).split("=")[1].removesuffix("Gbps"))
    before = lam(overrides, method=method)
    after = lam(_with(overrides, "link.bandwidth", f"{bw * factor:.3f}Gbps"), method=method)
    assert after >= before * (1 - 1e-9)


@pytest.mark.slow
@cases(12)
@given(scenario_overrides(), st.integers(min_value=1, max_value=4), st.sampled_from(["paper", "exact"]))
def test_more_prfaas_instances_never_lowers_lambda(overrides, extra, method):
    n = int(next(o for o in overrides if o.startswith("clusters.prfaas.instances=")).split("=")[1])
    before = lam(overrides, method=method)
    after = lam(_with(overrides, "clusters.prfaas.instances", str(n + extra)), method=method)
    assert after >= before * (1 - 1e-9)


@pytest.fixture(scope="module")
def faster_gpus(tmp_path_factory):
    """Catalog GPUs scaled up on every peak (FLOPS, HBM bandwidth and capacity, scale-up)."""
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "hardware").mkdir()
    names = {}
    for base in ("H200", "H100", "H20"):
        raw = yaml.safe_load((ROOT / "hardware" / f"{base}.yaml").read_text())
        for tag, k in (("x1", 1.0), ("x13", 1.3)):
            fast = dict(raw, name=f"{base}-{tag}")
            fast.pop("efficiency", None)  # an uncalibrated GPU: the rule for those must hold too
            for key in ("bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops", "hbm_tb_per_s",
                        "scaleup_gb_per_s_bidirectional"):
                if key in fast:
                    fast[key] = fast[key] * k
            (folder / "hardware" / f"{base}-{tag}.yaml").write_text(yaml.safe_dump(fast))
            names[(base, tag)] = f"{base}-{tag}"
    return Catalog.default([folder]), names


@pytest.mark.slow
@cases(10)
@given(scenario_overrides(), st.sampled_from(["H200", "H100"]))
def test_a_faster_gpu_never_lowers_lambda(faster_gpus, overrides, base):
    catalog, names = faster_gpus
    slow = lam(_with(overrides, "clusters.prfaas.hardware", names[(base, "x1")]), catalog)
    fast = lam(_with(overrides, "clusters.prfaas.hardware", names[(base, "x13")]), catalog)
    assert fast >= slow * (1 - 1e-9)


WORKLOADS = [
    {"kind": "lognormal", "mu": 9.9, "sigma": 1.0, "min": 128, "max": "128K"},
    {"kind": "uniform", "min": 100, "max": 50000},
    {"kind": "fixed", "value": 4096},
    {"kind": "gamma", "shape": 0.8, "scale": 15000, "min": 1, "max": "128K"},
]


@pytest.mark.slow
@cases(25)
@given(st.sampled_from([*range(len(WORKLOADS)), "trace"]),
       st.lists(st.floats(min_value=0, max_value=140_000), min_size=2, max_size=30))
def test_p_falls_as_t_rises(which, thresholds):
    if which == "trace":
        sc = load_scenario(None, CATALOG, trace=str(FIXTURES / "mooncake_small.jsonl"))
    else:
        sc = _workload(WORKLOADS[which])
    t = np.sort(np.asarray(thresholds))
    p = np.asarray(sc.workload.lengths.tail_prob(t), dtype=float)
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(np.diff(p) <= 0)
    lengths = sc.workload.lengths
    assert float(lengths.tail_prob(lengths.lo - 1)) == 1.0  # below the shortest: everything, exactly
    assert float(lengths.tail_prob(lengths.hi)) == 0.0  # at the longest: nothing, exactly


def _workload(spec: dict):
    import tempfile
    from pathlib import Path

    raw = yaml.safe_load((ROOT / "scenarios" / "paper-case-study.yaml").read_text())
    raw["workload"]["input"] = spec
    path = Path(tempfile.mkdtemp()) / "w.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_scenario(str(path), CATALOG)


@pytest.mark.slow
@cases(8)
@given(scenario_overrides(), st.floats(min_value=0.2, max_value=0.9))
def test_zero_load_ttft_is_no_more_than_loaded(overrides, load):
    sc = load_scenario(None, CATALOG, overrides=overrides)
    assume(lam(overrides) > 0)  # a fleet that holds the model
    idle = latency(sc, load=1e-6).systems
    busy = latency(sc, load=load).systems
    for name, r in busy.items():
        for key in ("ttft_mean_s", "ttft_p90_s"):
            assert getattr(idle[name], key) <= getattr(r, key) * (1 + 1e-9), (name, key)


@cases(3)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_same_seed_same_simulation(seed):
    sc = load_scenario(None, CATALOG)
    a = simulate_systems(sc, load=0.7, n_requests=400, seed=seed)
    b = simulate_systems(sc, load=0.7, n_requests=400, seed=seed)
    assert _results(a) == _results(b)
    assert a["ttft_mean_s"] > 0


def _results(payload):
    """Everything but the run's own speed (CPU and wall seconds differ run to run)."""
    if isinstance(payload, dict):
        return {k: _results(v) for k, v in payload.items() if k != "sim"}
    return payload


DOMINATES = [("H200", "H100"), ("B200", "H200"), ("B200", "H100"), ("H200", "H20")]


@pytest.mark.slow
@cases(10)
@given(scenario_overrides(), st.sampled_from(DOMINATES))
def test_catalog_gpu_faster_on_every_peak_never_lowers_lambda(overrides, pair):
    """Calibrated or not, measured profile or not: H200 >= H100 on every peak, so it serves no less."""
    fast, slow = pair
    assert lam(_with(overrides, "clusters.prfaas.hardware", fast)) >= \
        lam(_with(overrides, "clusters.prfaas.hardware", slow)) * (1 - 1e-9)
