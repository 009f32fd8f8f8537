"""More numbers the README quotes, held to the commands that print them (see
tests/test_readme_numbers.py): the link model, decode staging, bandwidth laws, failure, the
router's table, traces, the what-if beyond the paper, the time model, the replayed day, the fleet
study and the catalog."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app
from tests.conftest import ROOT
from tests.readme_quotes import pct, quoted, run, signed, t_of

pytestmark = pytest.mark.slow


def test_the_link_model_prose():
    base = run("latency", "--load", "0.7")["systems"]["prfaas"]
    slow = run("latency", "--load", "0.7", "--set", "link.handoff=200ms")["systems"]["prfaas"]
    zero = {k: {name: p["zero_load_ttft_mean_s"] for name, p in d["per_path"].items()}
            for k, d in (("base", base), ("slow", slow))}
    quoted(f"rises by {zero['slow']['prfaas'] - zero['base']['prfaas']:.3f} s and local ones do not move")
    assert zero["slow"]["local"] == pytest.approx(zero["base"]["local"], rel=1e-12)
    streams = run("optimize", "--set", "link.connections=8", "--set", "link.max_window=16MiB", "--set",
                  "link.rtt=30ms")
    quoted(f"30 ms reach {streams['link']['usable_gbps']:.1f} Gbps of the 100 Gbps line: enough here, since the "
           f"plan needs {streams['best']['egress_gbps']:.2f}")


def test_decode_staging_prose():
    at = ("--set", "model=MiniMax-M2.5", "--set", "decode.mode=derived", "--set", "decode.memory_fraction=0.5")
    five = run("optimize", *at, "--set", "link.bandwidth=5Gbps")
    hundred = run("optimize", *at)
    d5, d100 = five["decode"], hundred["decode"]
    n_d = five["best"]["n_d"]
    assert five["best"]["binding"] == "decode"  # so Lambda_max unstaged is N_d x the unstaged rate
    unstaged = n_d * d5["rps_per_instance_unstaged"]
    unstaged100 = hundred["best"]["n_d"] * d100["rps_per_instance_unstaged"]
    quoted(f"stages {d5['staged_requests_per_instance']:.2f} requests per instance (tau {d5['staging_s']:.1f} s, "
           f"{d5['staged_slot_weight']:.2f} slots each), BS_max {d5['bs_max_unstaged']} -> {d5['bs_max']:.2f} "
           f"({d5['bs_max_lost']:.2f} lost), Lambda_max {unstaged:.3f} -> {five['best']['lambda_max_rps']:.3f} req/s "
           f"({signed(five['best']['lambda_max_rps'] / unstaged - 1)})",
           f"at 100 Gbps {d100['bs_max_lost']:.2f} lost ({d100['staged_slot_weight']:.2f} slots each), "
           f"{signed(hundred['best']['lambda_max_rps'] / unstaged100 - 1)}")
    default = run("optimize", "--set", "model=MiniMax-M2.5", "--set", "decode.mode=derived")["decode"]
    quoted(f"With the default memory fraction its BS_max ({default['bs_max']:.0f}) is set by the TPOT SLO")
    assert default["bound_by"] == "slo" or default["bs_slo"] <= default["bs_memory"]


def test_bandwidth_that_varies():
    series = "link.bandwidth={kind: series, file: tests/fixtures/bandwidth/diurnal.csv}"
    rb = run("optimize", "--set", series)["robustness"]
    lk = rb["links"]["prfaas->local"]
    quoted(f"has P50 {lk['p50_gbps']:.2f}, P10 {lk['p10_gbps']:.2f}, P1 {lk['p1_gbps']:.2f} Gbps",
           f"{pct(rb['plans']['nominal']['fits_fraction'])} of the time the demand (0.8 x Lambda_max) fits")
    capped = run("optimize", "--set", series, "--set", "link.share_cap=0.2")["robustness"]
    for name, label in (("nominal", "nominal (median)"), ("safe", "safe (P10)")):
        p = capped["plans"][name]
        s = p["sites"]["local"]
        lam = " / ".join(f"{p['lambda_max_rps'][q]:.3f}" for q in ("p50", "p10", "p1"))
        quoted(f"| {label} | {t_of(s['threshold_tokens'])} | {p['n_prfaas']}/{s['n_p']}/{s['n_d']} | {lam} | "
               f"{p['expected_served_rps']:.3f} req/s ({pct(p['served_fraction'])}) | {pct(p['fits_fraction'])} |")


def test_failure_prose():
    d = run("degrade")
    f = d["links"]["prfaas->local"]["failure"]
    quoted(f"best local-only split ({f['n_p']}/{f['n_d']}) serves {f['capacity_down_rps']:.3f} req/s",
           f"survives a failure up to {pct(f['survivable_load'])} load",
           f"needs +{f['extra_instances']} instances ({f['instances']} -> {f['instances_needed']})")
    two = run("degrade", "two-regions")["links"]
    a, b = two["prefill-east->region-a"]["failure"], two["prefill-east->region-b"]["failure"]
    quoted(f"region-a's failure is survivable to {pct(a['survivable_load'])} load (+{a['extra_instances']} at 70%), "
           f"region-b's to {pct(b['survivable_load'])} (+{b['extra_instances']})")


def test_the_routers_table():
    d = run("thresholds", "--bandwidths", "2,5,10,20,100Gbps", "--loads", "0.5,0.8,1.0")
    rows = d["sites"]["local"]
    at = {(r["bandwidth_gbps"], r["load"]): r for r in rows}
    bws = (2.0, 5.0, 10.0, 20.0, 100.0)
    star = " / ".join(t_of(at[(b, 1.0)]["threshold_tokens"]) for b in bws)
    half = " / ".join(t_of(at[(b, 0.5)]["threshold_tokens"]) for b in bws)
    cuts = [1 - at[(b, 0.5)]["ttft_s"] / at[(b, 0.5)]["ttft_star_s"] for b in bws]
    quoted(f"t* is {star} tokens", f"({half}) and cuts P90 by {min(cuts) * 100:.0f}-{max(cuts) * 100:.0f}%")


def test_traces_prose():
    trace = "tests/fixtures/traces/mooncake_synthetic_trace.jsonl"
    hits = {gib: run("optimize", "--trace", trace, "--set", f"workload.input.cache_capacity_gib={gib}")["workload"]
            ["prefix_hit_rate"] for gib in (100, 10)}
    quoted(f"and hits {pct(hits[100])}; 10 GiB hits {pct(hits[10])}")
    sim = run("simulate", "--trace", trace)
    quoted(f"cluster prefilled ({pct(sim['recompute_avoided_rate'])})",
           f"the same prefix hit rate as `optimize --trace` (the PD cluster's cache over every replayed request, "
           f"{pct(sim['prefix_hit_rate'])})")
    abundant = run("simulate", "--trace", trace, "--set", "cache_mode=bandwidth-abundant")
    assert f"{abundant['link_utilization'] * 100:.2f}" == f"{sim['link_utilization'] * 100:.2f}"
    quoted(f"(link utilisation {sim['link_utilization'] * 100:.2f}% in both modes)")


def test_a_what_if_beyond_the_paper():
    d = run("optimize", "qwen35-b200-h200")
    b, r, iv = d["best"], d["ratios"], d["lambda_interval"]
    hom = d["baselines"]["homogeneous"]
    quoted(f"offloads the {b['p_offload'] * 100:.0f}% of requests above {units.format_length(b['threshold_tokens'])} "
           f"tokens (link {b['link_utilization'] * 100:.0f}% busy) and serves {b['lambda_max_rps']:.2f} req/s against "
           f"{hom['lambda_max_rps']:.2f} for {hom['instances']} x 8xH200 homogeneous PD "
           f"({r['prfaas_vs_homogeneous']:.2f}x; {r['prfaas_vs_homogeneous_equal_cost']:.2f}x at equal cost)",
           f"Lambda_max is {iv['lambda_max_rps_p10']:.2f}-{iv['lambda_max_rps_p90']:.2f} req/s, the "
           f"{iv['dominant']}'s band dominating")
    paper = run("optimize", "qwen35-b200-h200", "--set", "stack=paper-table3")
    quoted(f"(With `--set stack=paper-table3`: {paper['best']['lambda_max_rps']:.2f} against "
           f"{paper['baselines']['homogeneous']['lambda_max_rps']:.2f}.)")


def test_the_time_model_prose():
    eq2 = {m: run("kv-rate", m, "--lengths", "32K", "--instances", "64", "--stack", "paper-table3")["rows"][0]
           ["egress_gbps"] for m in ("MiniMax-M2.5", "Qwen3-235B-A22B", "Ring-2.5-1T")}
    quoted(f"MiniMax-M2.5 {eq2['MiniMax-M2.5'] / 1000:.2f} Tbps (paper 3.8), Qwen3-235B "
           f"{eq2['Qwen3-235B-A22B'] / 1000:.2f} Tbps (2.1), Ring-2.5-1T {eq2['Ring-2.5-1T']:.0f} Gbps (~170)")
    quoted(f"serves {run('optimize', '--set', 'clusters.prfaas.hardware=B200')['best']['lambda_max_rps']:.3f} req/s "
           "against 3.300 on the measured H200")
    res = CliRunner().invoke(app, ["optimize", "--set", "clusters.prfaas.hardware=H100"])
    assert res.exit_code == 1 and "8xH100 cannot hold internal-1t" in res.output  # "on H100 it is refused"

    def t32(model: str, gpu: str) -> str:
        rows = run("kv-rate", model, "--hardware", gpu, "--stack", "paper-table3", "--lengths", "32K")["rows"]
        return f"{rows[0]['prefill_s']:.3f}"

    quoted(" / ".join(t32("MiniMax-M2.5", g) for g in ("H100", "H200", "B200")) + " s on H100 / H200 / B200 for "
           "MiniMax-M2.5, " + " / ".join(t32("Qwen3.5-397B-A17B", g) for g in ("H100", "H200", "B200"))
           + " s for Qwen3.5-397B and " + " / ".join(t32("Kimi-Linear-48B-A3B", g) for g in ("H100", "H200", "B200"))
           + " s for Kimi-Linear")


TABLE3 = {"Kimi-Linear-48B-A3B": 3.87, "MiMo-V2-Flash": 4.66, "Qwen3.5-397B-A17B": 8.25, "Ring-2.5-1T": 2.59,
          "MiniMax-M2.5": 59.93, "Qwen3-235B-A22B": 33.35}


def test_the_table3_fit_table():
    errors = []
    for model, paper in TABLE3.items():
        rows = run("kv-rate", model, "--stack", "paper-table3", "--lengths", "1K,8K,32K,128K",
                   "--allow-beyond-context")["rows"]
        gbps = [r["kv_gbps"] for r in rows]
        err = gbps[2] / paper - 1
        errors.append(err)
        bold = "**" if abs(err) > 0.3 else ""
        quoted(f"| {model} | {paper:.2f} | {gbps[2]:.2f} | {bold}{signed(err)}{bold} (",
               " / ".join(f"{g:.2f}" for g in gbps) + " |")
    rms = (sum(e * e for e in errors) / len(errors)) ** 0.5
    quoted(f"RMS error {rms * 100:.1f}%", f"max {max(abs(e) for e in errors) * 100:.1f}%")
    both = run("kv-rate", "internal-1t", "--source", "both", "--stack", "paper-table3")["rows"]
    measured = {r["length_tokens"]: r["prefill_s"] for r in both if r["source"] == "measured"}
    analytic = [r["prefill_s"] / measured[r["length_tokens"]] - 1 for r in both if r["source"] == "analytic"]
    quoted("the analytic model is " + " / ".join(f"{e * 100:+.0f}%" for e in analytic) + " at 1K / 8K / 32K / 128K")
    h20 = run("kv-rate", "internal-1t", "--hardware", "H20", "--source", "analytic", "--stack", "paper-table3",
              "--lengths", "10224,27486")["rows"]  # against the two times Table 6 implies (docs/model.md)
    quoted(f"against the two H20 times Table 6 implies, {h20[0]['prefill_s'] / 1.829 - 1:+.0%} / "
           f"{h20[1]['prefill_s'] / 4.265 - 1:+.0%}")


def test_open_engines_against_a_measured_model():
    def gbps(stack: str) -> list[float]:
        return [r["kv_gbps"] for r in run("kv-rate", "Qwen2.5-72B", "--hardware", "H100", "--gpus", "8", "--lengths",
                                          "1K,16K", "--stack", stack)["rows"]]

    oe, pt = gbps("open-engines"), gbps("paper-table3")
    quoted(f"measured 41 and 56 Gbps of Phi_kv by the PrfaaS reproduction; `open-engines` says {oe[0]:.1f} and "
           f"{oe[1]:.1f} ({oe[0] / 41 - 1:+.0%}, {oe[1] / 56 - 1:+.0%}), `paper-table3` {pt[0]:.1f} and {pt[1]:.1f}")


def test_latency_prose():
    s = run("latency", "--load", "0.7")["systems"]
    pr, hom = s["prfaas"], s["homogeneous"]
    quoted(f"PrfaaS-PD cuts mean TTFT by {(1 - pr['ttft_mean_s'] / hom['ttft_mean_s']) * 100:.0f}% and P90 by "
           f"{(1 - pr['ttft_p90_s'] / hom['ttft_p90_s']) * 100:.0f}% against homogeneous PD")


def test_the_replayed_day():
    d = run("replay", "--series", "tests/fixtures/bandwidth/diurnal.csv", "--set", "slo.ttft=8s")
    p = d["policies"]
    quoted(f"runs the day at 70% of capacity ({d['rate_rps']:.3f} req/s, {p['static']['requests']:,} requests)")
    t = run("optimize")["best"]["threshold_tokens"]
    for name, label in (("static", f"static t ({t_of(t)})"), ("rule", "the paper's link-utilisation rule"),
                        ("table", "the threshold table")):
        r = p[name]
        quoted(f"| {label} | {r['ttft_mean_s']:.3f} s | {r['ttft_p90_s']:.3f} s | {r['ttft_p99_s']:.3f} s | "
               f"{pct(r['slo_attainment'])} |")
    assert p["table"]["ttft_p99_s"] / p["static"]["ttft_p99_s"] == pytest.approx(5.8, abs=0.05)  # "5.8x"
    quoted("its P99 is 5.8x static t's")


def test_the_catalog_counts():
    models = run("models")["models"]
    gpus = [h["name"] for h in run("hardware")["hardware"]]
    quoted(f"`models/` ({len(models)} models:", "`hardware/` (" + ", ".join(
        ["H200", "H20", "H100", "B200", "B300", "GB300", "A100-80GB", "L40S", "MI300X", "MI355X"]) + ")")
    assert sorted(gpus) == sorted(["H200", "H20", "H100", "B200", "B300", "GB300", "A100-80GB", "L40S", "MI300X",
                                   "MI355X"])
    two = run("optimize", "two-regions")
    best = two["best"]
    quoted(f"(two-regions: ${best['price_per_hour']:.0f}/h, ${best['cost_per_million_requests']:,.0f} per 1M requests,"
           f" naive {two['baselines']['naive_heterogeneous']['lambda_max_rps']:.3f} req/s, "
           f"{two['ratios']['prfaas_vs_homogeneous_equal_cost']:.2f}x at equal cost)")


def test_the_fleet_study(tmp_path):
    """The README's study (216 points) and what `study-report` reads off it."""
    out = tmp_path / "fleet.parquet"
    res = CliRunner().invoke(app, ["study", str(ROOT / "scenarios" / "studies" / "fleet.yaml"), "-o", str(out),
                                   "--workers", "2"])
    assert res.exit_code == 0, res.output
    d = json.loads(CliRunner().invoke(app, ["study-report", str(out), "--format", "json"]).stdout)
    assert d["points"] == d["counts"]["ok"] == 216
    quoted(f"{d['points']} points, each against 12 local-GPU instances of homogeneous PD. "
           f"All {d['counts']['ok']} plan.")
    lines = d["breakeven"]
    h200 = [b for b in lines if b["line"].startswith("prfaas H200")]
    assert all(b["pays_from_bytes_per_s"] is None for b in h200)
    quoted(f"({min(b['best_gain'] for b in h200):.2f}-{max(b['best_gain'] for b in h200):.2f}x at best)")
    words = []
    for model, name in (("internal-1t", "internal-1t"), ("Qwen3.5-397B-A17B", "Qwen3.5-397B"),
                        ("MiniMax-M2.5", "MiniMax-M2.5")):
        b200 = [b for b in lines if b["panel"].startswith(model + ",") and b["line"] == "prfaas B200 · local H200"]
        start = {units.bytes_per_s_to_gbps(b["pays_from_bytes_per_s"]) for b in b200}
        assert len(start) == 1  # the same tier for every traffic mix
        gains = {b["panel"].split(", ")[1]: b["best_gain"] for b in b200}
        words.append((name, start.pop(), gains))
    (n1, s1, g1), (n2, s2, g2), (_, s3, g3) = words

    def span(g: dict) -> str:
        return f"{min(g.values()):.2f}-{max(g.values()):.2f}x"

    quoted(f"{n1} from {s1:.0f} Gbps ({span(g1)}), {n2} from {s2:.0f} Gbps ({span(g2)})",
           f"only at {s3:.0f} Gbps ({span(g3)})",
           f"{n1} goes {g1['chat']:.2f}x (chat) -> {g1['paper']:.2f}x (the paper's) -> {g1['long-context']:.2f}x "
           f"(long context), {n2} {g2['chat']:.2f}x -> {g2['paper']:.2f}x -> {g2['long-context']:.2f}x")


def test_the_joint_search_size():
    quoted(f"({run('optimize', 'two-regions')['search']['evaluations']:,} candidates here")
