"""Decode staging (issue 11 item 2; ``core.decode.DecodeStaging``, ``api.staging``): an offloaded
request's KV slot is reserved before its KV lands, so lambda p tau requests (Little's law) hold
slots over the site's N_d instances while in flight. Derived decode: r_d = min(bs_slo / (T L),
bs_memory / (T L + p tau)), the plan searched at r_d of its own threshold (a fixed point);
pinned decode: the rate is kept and the staged requests are reported.

MiniMax-M2.5 (62 GQA layers, 254 KB of KV a token) decodes on the case study's 8xH20 at 40
tokens/s with bs_slo 38 and bs_memory 63 (memory_fraction 0.9); at memory_fraction 0.5,
bs_memory is 21 and memory binds BS_max, so every staged request costs a decoding slot."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from prfaas_plan.api import staging
from prfaas_plan.api import topology as api_topology
from prfaas_plan.api.grid import homogeneous
from prfaas_plan.api.laws import search_space, timing
from prfaas_plan.api.plan import plan
from prfaas_plan.cli import app
from prfaas_plan.core.decode import decode_capacity, decode_staging, staging_time
from prfaas_plan.core.optimize import search
from prfaas_plan.core.throughput import Method, routing
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.plan_json import decode_json

CAT = Catalog.default()
MINIMAX = ["model=MiniMax-M2.5", "decode.mode=derived"]
TIGHT = [*MINIMAX, "decode.memory_fraction=0.5"]  # bs_memory 21 < bs_slo 38: memory binds BS_max
L_OUT = 1024


def _sc(*overrides: str, name: str | None = None):
    return load_scenario(name, CAT, overrides=list(overrides))


def _unstaged(sc, m: Method):
    """The search at the unstaged decode rate (what the planner did before staging)."""
    t = timing(sc)
    return search(sc.workload.lengths, t.curves, search_space(sc), method=m,
                  link_bytes_per_s=sc.link.usable_bytes_per_s,
                  decode_rps_per_instance=t.decode_rps_per_instance).best


def _tau(sc, t, threshold: float, m: Method) -> tuple[float, float]:
    """(p, tau) at ``threshold`` by hand: E[S_kv | L > t] / B_out + RTT + handoff."""
    r = routing(sc.workload.lengths, t.curves, [threshold], m)
    return float(r.p[0]), float(r.s_long_bytes[0]) / sc.link.usable_bytes_per_s + sc.link.rtt_s + sc.link.handoff_s


def _weight(sc, t, threshold: float, m: Method) -> float:
    """A staged request's KV in decode slots, by hand: S_kv at the offloaded mean length plus the
    mean cached prefix, over S_kv at the mean input plus the output."""
    from prfaas_plan.core import kv

    r = routing(sc.workload.lengths, t.curves, [threshold], m)
    w = sc.workload
    cached = max(w.input_total_mean - float(w.lengths.mean), 0.0)
    s_kv = kv.footprint(sc.model).s_kv
    return float(s_kv(float(r.l_long[0]) + cached)) / float(s_kv(w.input_total_mean + w.output_tokens))


def test_rate_by_hand_from_decode_capacity():
    sc = _sc(*MINIMAX)
    context = sc.workload.input_total_mean + L_OUT
    cap = decode_capacity(sc.model, sc.local.instance, tpot_s=sc.tpot_slo_s, context=context, output_tokens=L_OUT)
    assert (cap.bs_slo, cap.bs_memory, cap.bs_max) == (38, 63, 38)
    hold = cap.step_s * L_OUT  # T_step x L_out: a slot's decoding time, ~25.3 s
    assert hold == pytest.approx(25.30, abs=0.01)
    # memory binds once p tau > hold (63 / 38 - 1) = ~16.7 s of staging per request on average
    for p, tau in ((0.2, 1.5), (1.0, 20.0), (0.5, 60.0), (0.7, 0.0)):
        st = decode_staging(requests_per_s=cap.requests_per_s, bs_max=cap.bs_max, bs_memory=cap.bs_memory,
                            step_s=cap.step_s, output_tokens=L_OUT, p_offload=p, staging_s=tau)
        want = min(38 / hold, 63 / (hold + p * tau))
        assert st.requests_per_s == pytest.approx(want, rel=1e-12)
        # Little's law: r x hold slots decode (<= bs_slo), r x (hold + p tau) are held (<= bs_memory)
        assert st.requests_per_s * hold <= 38 * (1 + 1e-12)
        assert st.requests_per_s * (hold + p * tau) <= 63 * (1 + 1e-12)
        assert st.bs_staged == pytest.approx(st.requests_per_s * hold, rel=1e-12)
        assert st.bs_lost == pytest.approx(38 - st.bs_staged, abs=1e-12)
        if p * tau <= hold * (63 / 38 - 1):
            assert st.requests_per_s == cap.requests_per_s and st.bs_lost == 0.0  # bit for bit
    binding = decode_staging(requests_per_s=cap.requests_per_s, bs_max=38, bs_memory=63, step_s=cap.step_s,
                             output_tokens=L_OUT, p_offload=0.5, staging_s=60.0)
    assert binding.requests_per_s == pytest.approx(63 / (hold + 30.0), rel=1e-12)  # 1.139 req/s, not 1.502
    assert binding.bs_staged == pytest.approx(63 * hold / (hold + 30.0), rel=1e-12)  # 28.8 of 38
    # tau: 16.5 GB over 12.5 GB/s, plus 30 ms RTT and a 200 ms handoff
    assert staging_time(16.5e9, 12.5e9, rtt_s=0.03, handoff_s=0.2) == pytest.approx(1.32 + 0.23, rel=1e-12)
    assert math.isfinite(staging_time(1e10, 1e-300))


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [[], [*MINIMAX, "link.bandwidth=5Gbps"], [*TIGHT, "link.bandwidth=5Gbps"],
                                       [*TIGHT, "link.bandwidth=100Gbps"], [*TIGHT, "link.rtt=50ms"]],
                         ids=["case-study", "minimax-5g", "tight-5g", "tight-100g", "tight-rtt"])
def test_staging_never_raises_lambda(overrides):
    sc = _sc(*overrides)
    p = plan(sc)
    unstaged_rate = timing(sc).decode_rps_per_instance
    for m, mp in p.result.methods.items():
        assert mp.best.lambda_max_rps <= _unstaged(sc, Method(m)).lambda_max_rps * (1 + 1e-12)
        assert decode_json(mp.decode["local"])["rps_per_instance"] <= unstaged_rate
        if mp.grid.naive is not None:  # every request staged: naive heterogeneous at its own rate
            assert mp.grid.naive.point.theta_pd_d_rps <= sc.local.instances * unstaged_rate * (1 + 1e-12)


def test_no_offload_no_staging():
    """tau = 0 (nothing offloaded: homogeneous PD, or a threshold at the longest length) changes nothing."""
    sc = _sc(*TIGHT)
    t = timing(sc)
    for threshold in (None, float(sc.workload.lengths.hi)):
        st = staging.site_staging(t, sc, threshold, Method.EXACT)
        assert st.staging_s == 0.0 and st.factor == 1.0 and st.requests_per_s == t.decode_rps_per_instance
    hom = homogeneous(sc, sc.homogeneous, Method.EXACT).point
    assert hom.p_offload == 0.0 and hom.theta_pd_d_rps == hom.n_d * t.decode_rps_per_instance
    d = decode_json(staging.detail(t, sc, staging.site_staging(t, sc, None, Method.EXACT), lambda_rps=3.0,
                                   p_offload=0.0, n_d=4, rounds=1))
    assert d["staged_requests_per_instance"] == 0.0 and d["bs_max_lost"] == 0.0 and d["bs_max"] == 21


@pytest.mark.parametrize("bandwidth", ["5Gbps", "100Gbps"])
def test_fixed_point_rate_is_r_d_at_the_plans_own_threshold(bandwidth):
    sc = _sc(*TIGHT, f"link.bandwidth={bandwidth}", "link.rtt=20ms", "link.handoff=100ms")
    p = plan(sc)
    t = timing(sc)
    for m, mp in p.result.methods.items():
        b, d = mp.grid.best, decode_json(mp.decode["local"])
        pp, tau = _tau(sc, t, b.threshold_tokens, Method(m))
        hold = d["t_decode_s"] * L_OUT
        w = _weight(sc, t, b.threshold_tokens, Method(m))
        assert w > 1 and d["staged_slot_weight"] == pytest.approx(w, rel=1e-12)  # the long requests stage
        want = min(d["bs_slo"] / hold, d["bs_memory"] / (hold + pp * tau * w))
        assert d["staging_s"] == pytest.approx(tau, rel=1e-12)
        assert d["rps_per_instance"] == pytest.approx(want, rel=1e-9)
        assert b.theta_pd_d_rps == pytest.approx(b.n_d * want, rel=1e-9)  # the plan was searched at it
        assert d["bs_max"] == pytest.approx(want * hold, rel=1e-9)
        assert d["bs_max_lost"] == pytest.approx(d["bs_max_unstaged"] - d["bs_max"], abs=1e-12) and d["bs_max_lost"] > 0
        assert 2 <= d["staging_rounds"] <= staging.ROUNDS
        assert d["staged_requests_per_instance"] == pytest.approx(b.lambda_max_rps * pp * tau / b.n_d, rel=1e-9)
    assert p.staged().decode_rps_per_instance == pytest.approx(p.result.site.decode.rps_per_instance, rel=1e-12)


def test_fixed_point_per_site_of_a_topology():
    sc = _sc(*TIGHT, name="two-regions")
    tp = plan(sc, methods=("paper",))
    m = tp.result.head
    for i, (sp, info) in enumerate(zip(m.best.sites, tp.result.sites, strict=True)):
        d = decode_json(info.decode)
        si = api_topology.site_scenario(sc, i)
        t = tp.timings[i]
        pp, tau = _tau(si, t, sp.threshold_tokens, Method.PAPER)
        hold = d["t_decode_s"] * si.workload.output_tokens
        w = _weight(si, t, sp.threshold_tokens, Method.PAPER)
        want = min(d["bs_slo"] / hold, d["bs_memory"] / (hold + pp * tau * w))
        assert d["rps_per_instance"] == pytest.approx(want, rel=1e-9)
        assert sp.theta_pd_d_rps == pytest.approx(sp.n_d * want, rel=1e-9)
        assert tp.models[i].decode_rps_per_instance == pytest.approx(want, rel=1e-9)
        assert d["staged_requests_per_instance"] == pytest.approx(sp.lambda_rps * pp * tau / sp.n_d, rel=1e-9)
    assert m.best.lambda_max_rps <= api_topology.joint_plan(
        api_topology.site_models(sc)[0], search_space(sc).thresholds, search_space(sc).n_prfaas,
        Method.PAPER)[1].lambda_max_rps


def test_fixed_point_stops_after_its_rounds():
    rounds = staging.fixed_point(lambda r: r[0], lambda s: (2.0 if s == 1.0 else 1.0,), (1.0,))
    assert len(rounds) == staging.ROUNDS and not staging.converged(rounds)
    rounds = staging.fixed_point(lambda r: r[0], lambda s: (0.5,), (1.0,))
    assert len(rounds) == 2 and staging.converged(rounds)


def test_pinned_decode_keeps_lambda_and_reports_staged_requests():
    sc = _sc("link.rtt=30ms", "link.handoff=200ms")  # the case study: pinned BS_max 20 at 25 ms
    p = plan(sc)
    t = timing(sc)
    for m, mp in p.result.methods.items():
        b, d = mp.grid.best, decode_json(mp.decode["local"])
        assert b.lambda_max_rps == _unstaged(sc, Method(m)).lambda_max_rps
        pp, tau = _tau(sc, t, b.threshold_tokens, Method(m))
        assert tau == pytest.approx(float(routing(sc.workload.lengths, t.curves, [b.threshold_tokens], Method(m))
                                          .s_long_bytes[0]) / 12.5e9 + 0.23, rel=1e-12)
        assert d["staging_s"] == pytest.approx(tau, rel=1e-12)
        assert d["staged_requests_per_instance"] == pytest.approx(b.lambda_max_rps * pp * tau / b.n_d, rel=1e-12)
        assert d["rps_per_instance"] == 20 / (0.025 * L_OUT) and d["staging_rounds"] == 1
        # internal-1t's 1 TB of weights do not fit 8xH20 in the decode model: no headroom to compare with
        assert d["bs_memory"] == 0 and d["memory_headroom"] is None and d["staging_exceeds_headroom"] is None
    # MiniMax-M2.5 pinned at BS_max 20: the model's memory allows 63, so 43 slots to spare
    d = decode_json(plan(_sc("model=MiniMax-M2.5", "link.bandwidth=5Gbps")).result.site.decode)
    assert (d["bs_memory"], d["memory_headroom"], d["staging_exceeds_headroom"]) == (63, 43, False)
    # pinned at its memory limit, the staged requests pass the headroom: said so
    d = decode_json(plan(_sc("model=MiniMax-M2.5", "decode.bs_max=63", "link.bandwidth=5Gbps")).result.site.decode)
    assert d["memory_headroom"] == 0 and d["staged_requests_per_instance"] > 0 and d["staging_exceeds_headroom"]


def test_minimax_slow_link_loses_more_bs_max():
    lost, lam = {}, {}
    for bw in ("5Gbps", "100Gbps"):
        sc = _sc(*TIGHT, f"link.bandwidth={bw}")
        r = plan(sc).result
        d = decode_json(r.site.decode)
        assert d["bs_max_unstaged"] == 21 and d["staging_binds"]
        lost[bw] = d["bs_max_lost"]
        lam[bw] = (_unstaged(sc, Method.PAPER).lambda_max_rps, r.head.best.lambda_max_rps)
    assert lost["5Gbps"] > lost["100Gbps"] > 0
    # a staged request is a long one: 4.35 slots' KV on 5 Gbps (t higher, the offloaded longer), 2.52 on 100
    assert lost["5Gbps"] == pytest.approx(1.971, abs=1e-3) and lost["100Gbps"] == pytest.approx(0.763, abs=1e-3)
    assert lam["5Gbps"] == pytest.approx((2.4124, 2.1861), abs=1e-4)  # -9.4%: decode binds with staging
    assert lam["100Gbps"] == pytest.approx((3.6186, 3.4871), abs=1e-4)  # -3.6%
    # with memory to spare (memory_fraction 0.9: bs_memory 63 > bs_slo 38) nothing is lost, even on 5 Gbps
    d = decode_json(plan(_sc(*MINIMAX, "link.bandwidth=5Gbps")).result.site.decode)
    assert d["bs_max_lost"] == 0.0 and d["bs_max"] == 38 and d["staged_requests_per_instance"] == pytest.approx(0.5)


@pytest.mark.slow
def test_optimize_prints_and_writes_the_staging():
    args = ["optimize", *[a for kv in TIGHT for a in ("--set", kv)], "--set", "link.bandwidth=5Gbps"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("decode staging: 0.453 requests/instance staged (tau 50.433 s, unloaded transfer), "
                           "4.35 slots each")
    assert "BS_max 21 -> 19.03 (1.97 lost)" in line
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    d = json.loads(res.stdout)
    for dec in (d["decode"], d["methods"]["exact"]["decode"]):
        assert {"staged_requests_per_instance", "staging_s", "bs_max_unstaged", "bs_max", "bs_max_lost"} <= set(dec)
    tail = CliRunner().invoke(app, ["optimize", "two-regions"]).stdout.strip().splitlines()[-3:]
    assert tail[-1].startswith("Lambda_max P10-P90: a point")  # measured prefill, pinned decode
    tail = tail[:2]
    assert [ln.split(":")[0] for ln in tail] == ["decode staging at region-a", "decode staging at region-b"]
    assert all(ln.endswith("pinned BS_max 20") for ln in tail)
