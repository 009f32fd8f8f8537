"""Seeded simulator runs whose per-request results are held fixed (issue 13: a faster simulator
gives identical results for a seed). ``record`` writes tests/sim/identity.json from the code it
runs: per case and array, a SHA-256 of its float64 bytes (exact identity) and its sum and length
(to read); tests/sim/test_identity.py reruns every case and compares. The reference was recorded
from the event-per-step simulator before the issue-13 changes (commit 5ccb815).

Usage (only to re-record, from the old implementation): python -m tests.sim.identity_cases
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from prfaas_plan.api.systems import systems, topology_systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.replay import BandwidthSeries, TableLookup
from prfaas_plan.sim.run import simulate
from prfaas_plan.sim.topology import saturation_throughput, simulate_topology
from prfaas_plan.specs.system import ControlConfig

DATA = Path(__file__).resolve().parent / "identity.json"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REC_KEYS = ("arrived_at", "prefill_started_at", "prefill_completed_at", "kv_transfer_completed_at",
            "decode_started_at", "completed_at", "ttft_s")


def _hist(h) -> list[float]:
    return [float(h.n), float(h.total), float(h.lo), float(h.hi), *map(float, h.counts)]


def _result(res) -> dict[str, np.ndarray]:
    out = {"hist": np.array(_hist(res.ttft)), "events": np.array([float(res.events)])}
    for name, h in sorted(res.ttft_paths.items()):
        out[f"hist_{name}"] = np.array(_hist(h))
    if res.records is not None:
        recs = res.records
        out["i"] = np.array([r["i"] for r in recs], dtype=np.float64)
        out["offload"] = np.array([r["path"] == "prfaas" for r in recs], dtype=np.float64)
        for k in REC_KEYS:
            out[k] = np.array([r[k] for r in recs], dtype=np.float64)
    stats = [res.span_s, res.throughput_rps or 0.0, float(res.kept_local), float(res.role_changes),
             res.link_utilization if res.link_utilization is not None else -1.0]
    out["stats"] = np.array(stats, dtype=np.float64)
    return out


def _case_study(system: str, seed: int, n: int = 3000, overrides=(), **kw) -> dict[str, np.ndarray]:
    sc = load_scenario(None, Catalog.default(), overrides=list(overrides))
    c = systems(sc)[system]
    rate = kw.pop("load", 0.8) * c.capacity_rps
    return _result(simulate(sc, c, rate_rps=rate, n_requests=n, rng=np.random.default_rng(seed), records=True, **kw))


def _trace(system: str, mode: str, seed: int = 0) -> dict[str, np.ndarray]:
    sc = load_scenario(None, Catalog.default(), trace=str(FIXTURES / "mooncake_300.jsonl"),
                       overrides=[f"cache_mode={mode}"])
    c = systems(sc)[system]
    return _result(simulate(sc, c, rate_rps=0.9 * c.capacity_rps, rng=np.random.default_rng(seed), records=True))


def _two_regions(seed: int) -> dict[str, np.ndarray]:
    sc = load_scenario("two-regions", Catalog.default())
    out: dict[str, np.ndarray] = {}
    for name, ts in topology_systems(sc).items():
        res = simulate_topology(sc, ts, rate_rps=0.7 * ts.capacity_rps, n_requests=4000,
                                rng=np.random.default_rng(seed))
        out[f"{name}_hist"] = np.array(_hist(res.ttft))
        out[f"{name}_events"] = np.array([float(res.events)])
        for site, r in sorted(res.sites.items()):
            out[f"{name}_{site}_hist"] = np.array(_hist(r.ttft))
    return out


def _saturation(seed: int) -> dict[str, np.ndarray]:
    sc = load_scenario(None, Catalog.default())
    out = {}
    for name, c in systems(sc).items():
        sat = saturation_throughput(sc, c, np.random.default_rng(seed), 6000)
        out[name] = np.array([sat.throughput_rps, sat.completion_rps, *(v for _, v in sorted(sat.stage_rps.items()))])
    return out


def _series(bw: float) -> BandwidthSeries:
    t = np.array([0.0, 300.0, 500.0, 700.0, 900.0])
    line = np.array([bw, 0.1 * bw, 0.0, 0.5 * bw, bw])
    return BandwidthSeries(times_s=t, line_bytes_per_s=line, usable_bytes_per_s=line)


def _replay(policy: str, seed: int) -> dict[str, np.ndarray]:
    sc = load_scenario(None, Catalog.default(), overrides=["slo.ttft=4s"])
    c = systems(sc)["prfaas"]
    bw = c.link_bytes_per_s
    lookup = TableLookup(bandwidths=(0.05 * bw, 0.5 * bw), rates=((99.0,), (99.0,)), thresholds=((60e3,), (15e3,)),
                         n_p=(2, 3))
    replay = {"series": _series(bw), "policy": policy, "window_s": 100.0, "lookup": lookup}
    control = ControlConfig(max_link_utilization=0.5, margin=0.5, window_s=20.0) if policy == "rule" else None
    res = simulate(sc, c, rate_rps=0.6 * c.capacity_rps, duration_s=1500, rng=np.random.default_rng(seed),
                   records=True, replay=replay, control=control)
    out = _result(res)
    out["tl_thr"] = np.asarray(res.timeline.threshold_tokens, dtype=np.float64)
    out["tl_p90"] = np.asarray(res.timeline.ttft_p90_s, dtype=np.float64)
    return out


CASES: dict[str, Callable[[], dict[str, np.ndarray]]] = {
    **{f"case_{s}_{seed}": (lambda s=s, seed=seed: _case_study(s, seed))
       for s in ("prfaas", "homogeneous", "naive_heterogeneous") for seed in (0, 1)},
    "case_prfaas_load095": lambda: _case_study("prfaas", 7, 4000, load=0.95),
    "case_prfaas_duration": lambda: _case_study("prfaas", 2, None, duration_s=1500.0),
    "case_prfaas_handoff": lambda: _case_study("prfaas", 3, overrides=("link.rtt=50ms", "link.handoff=20ms")),
    "case_naive_handoff_nopipe": lambda: _case_study("naive_heterogeneous", 4, overrides=("link.rtt=30ms",
                                                                                         "layerwise_pipelining=false")),
    "case_prfaas_thin_link": lambda: _case_study("prfaas", 5, overrides=("link.bandwidth=3Gbps",)),
    "case_control_link": lambda: _case_study("prfaas", 6, overrides=("link.bandwidth=3Gbps",),
                                             control=ControlConfig(max_link_utilization=0.2, margin=1.0)),
    "case_control_roles": lambda: _case_study("prfaas", 8, 4000, load=0.9,
                                              control=ControlConfig(period_s=5.0, queue_per_instance=1.0)),
    **{f"trace_{s}_{m}": (lambda s=s, m=m: _trace(s, m)) for s in ("prfaas", "homogeneous", "naive_heterogeneous")
       for m in ("bandwidth-scarce", "bandwidth-abundant")},
    "two_regions_0": lambda: _two_regions(0),
    "saturation_0": lambda: _saturation(0),
    **{f"replay_{p}": (lambda p=p: _replay(p, 3)) for p in ("static", "rule", "table")},
}


def run_case(name: str) -> dict[str, np.ndarray]:
    return CASES[name]()


def digest(arrays: dict[str, np.ndarray]) -> dict[str, list]:
    """Per array: its SHA-256 (of the float64 bytes) and its sum, length."""
    return {k: [hashlib.sha256(np.ascontiguousarray(v, dtype=np.float64).tobytes()).hexdigest(),
                float(np.nansum(v)), len(v)] for k, v in sorted(arrays.items())}


def record() -> None:
    DATA.write_text(json.dumps({name: digest(run_case(name)) for name in CASES}, indent=1) + "\n")


if __name__ == "__main__":
    record()
