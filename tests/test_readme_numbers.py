"""The numbers the README quotes in its prose and its own tables, held to the commands that print
them (issue 23, part 5). The README's `$ prfaas-plan ...` blocks are held line by line by
tests/test_docs.py; here are the numbers the text around them repeats or adds: the paper
comparison, the baselines, the link and model what-ifs, topologies and sizing
(tests/test_readme_numbers_more.py: the link model, staging, bandwidth laws, failure, the router's
table, traces, the time model, the replayed day, the study and the catalog).

Each test formats a command's JSON as the README writes it and asks for that text in the README,
so a change of the planner that moves a quoted number fails here until the README says it too.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app
from tests.readme_quotes import pct, quoted, run, signed, t_of, tok

pytestmark = pytest.mark.slow


def test_the_quote_check_can_fail():
    with pytest.raises(AssertionError):
        quoted("a sentence the README never says, 12,345.678 req/s")


def test_the_paper_comparison_table():
    d = run("optimize")
    m = {k: d["methods"][k] for k in ("paper", "exact")}
    b = {k: v["best"] for k, v in m.items()}
    hom = {k: v["baselines"]["homogeneous"] for k, v in m.items()}
    nv = {k: v["baselines"]["naive_heterogeneous"] for k, v in m.items()}
    r = {k: v["ratios"] for k, v in m.items()}
    P, E = "paper", "exact"
    quoted(
        f"| threshold t | 19.4K (19,400 tokens) | {t_of(b[P]['threshold_tokens'])} tokens | "
        f"{t_of(b[E]['threshold_tokens'])} tokens |",
        "| N_prfaas / N_p / N_d | 4 / 3 / 5 | " + " | ".join(f"{b[k]['n_prfaas']} / {b[k]['n_p']} / {b[k]['n_d']}"
                                                          for k in (P, E)) + " |",
        "| Theta_prfaas / Theta_pd-p / Theta_pd-d | 1.61 / 1.64 / 3.91 | " + " | ".join(
            f"{b[k]['theta_prfaas_rps']:.2f} / {b[k]['theta_pd_p_rps']:.2f} / {b[k]['theta_pd_d_rps']:.2f}"
            for k in (P, E)) + " |",
        "| Lambda_max (req/s) | 3.24 | " + " | ".join(
            f"{b[k]['lambda_max_rps']:.2f} ({signed(b[k]['lambda_max_rps'] / 3.24 - 1)})" for k in (P, E)) + " |",
        f"| p (offloaded) | 49.6% | {pct(b[P]['p_offload'])} | {pct(b[E]['p_offload'])} |",
        f"| l_long | ~44K | {tok(b[P]['l_long_tokens'])} | {tok(b[E]['l_long_tokens'])} |",
        f"| PrfaaS egress | ~13 Gbps | {b[P]['egress_gbps']:.2f} Gbps | {b[E]['egress_gbps']:.2f} Gbps |",
        f"| homogeneous PD (12 x 8xH20) | 9 / 3, 2.11 | {hom[P]['n_p']} / {hom[P]['n_d']}, "
        f"{hom[P]['lambda_max_rps']:.2f} | {hom[E]['n_p']} / {hom[E]['n_d']}, {hom[E]['lambda_max_rps']:.2f} |",
        f"| naive heterogeneous | 4 / 8, 2.45 | {nv[P]['n_prfaas']} / {nv[P]['n_d']}, {nv[P]['lambda_max_rps']:.2f} "
        f"({signed(nv[P]['lambda_max_rps'] / 2.45 - 1)}) | {nv[E]['n_prfaas']} / {nv[E]['n_d']}, "
        f"{nv[E]['lambda_max_rps']:.2f} |",
        "| PrfaaS-PD vs homogeneous | 1.54x | " + " | ".join(f"{r[k]['prfaas_vs_homogeneous']:.2f}x" for k in (P, E))
        + " |",
        "| naive vs homogeneous | 1.16x | " + " | ".join(f"{r[k]['naive_vs_homogeneous']:.2f}x" for k in (P, E)) + " |",
        "| at equal cost (H200 = 2 x H20) | ~1.15x | " + " | ".join(
            f"{r[k]['prfaas_vs_homogeneous_equal_cost']:.2f}x" for k in (P, E)) + " |",
    )
    # naive heterogeneous prefills every request at the mean length: T = N_prfaas / Theta_prfaas
    mean = d["workload"]["mean_uncached_tokens"]
    quoted(f"at the mean length {mean:,.0f}, where this gives {nv[P]['n_prfaas'] / nv[P]['theta_prfaas_rps']:.3f} s",
           f"the link {b[P]['link_utilization'] * 100:.0f}% busy")
    fixed = run("optimize", "--set", "workload.input={kind: fixed, value: 8K}")["best"]
    quoted(f"with every request 8K tokens it is {fixed['n_prfaas']} / {fixed['n_p']} / {fixed['n_d']} at "
           f"{fixed['lambda_max_rps']:.3f} req/s")


def test_a_dense_model_on_the_same_fleet():
    d = run("optimize", "--set", "model=MiniMax-M2.5")
    b, r = d["best"], d["ratios"]
    mm = run("kv-rate", "MiniMax-M2.5", "--lengths", "32K", "--stack", "paper-table3")["rows"][0]["kv_gbps"]
    ours = run("kv-rate", "internal-1t", "--lengths", "32K")["rows"][0]["kv_gbps"]
    quoted(f"Its KV throughput at 32K is {mm:.0f} Gbps per instance against internal-1t's {ours:.1f}",
           f"({b['theta_prfaas_link_rps']:.2f} req/s of link against {b['theta_prfaas_compute_rps']:.2f} of compute)",
           f"the link runs {b['link_utilization'] * 100:.0f}% full",
           f"gains {(r['prfaas_vs_homogeneous'] - 1) * 100:.0f}% over homogeneous PD "
           f"({r['prfaas_vs_homogeneous']:.2f}x; {r['prfaas_vs_homogeneous_equal_cost']:.2f}x at equal cost)",
           f"naive heterogeneous is link-bound at {r['naive_vs_homogeneous']:.2f}x")
    assert d["baselines"]["naive_heterogeneous"]["binding"] == "link"


def test_two_regions_prose():
    d = run("optimize", "two-regions")
    share = d["baselines"]["independent"]["n_prfaas_per_site"]
    b = d["best"]["sites"]["region-b"]
    quoted(f"({share['region-a']:.1f} and {share['region-b']:.1f} instances here)",
           f"it offloads only the {pct(b['p_offload'])} above {units.format_length(b['threshold_tokens'])} tokens",
           f"({d['ratios']['prfaas_vs_independent']:.2f}x)")
    link_b = d["best"]["links"]["prefill-east->region-b"]
    quoted(f"the 20 Gbps link runs {link_b['utilization'] * 100:.0f}% full")
    sweep = run("sweep", "two-regions", "--set", "links[1].bandwidth=2Gbps..8Gbps:7")["rows"]
    at = {r["value_text"]: r for r in sweep}
    quoted(f"({d['best']['lambda_max_rps']:.2f} to {at['2Gbps']['lambda_max_rps']:.2f} req/s at 2 Gbps)",
           f"({at['5Gbps']['prfaas_vs_independent']:.2f}x at 5 Gbps)")
    same = run("optimize", "two-regions", "--set",
               "sites.region-b.workload={input: {kind: lognormal, mu: 9.90, sigma: 1.00, min: 128, max: 128K}}")
    quoted(f"the gain is {same['ratios']['prfaas_vs_independent']:.3f}x (the shares still differ)")


def test_two_regions_ttft_slo_prose():
    """The searched configuration under P90 <= 4 s and the rate of the throughput plan held (its
    largest rate meeting the bound at every site, bisected here on the full node grid)."""
    from prfaas_plan.api import context
    from prfaas_plan.api.latency import system_latency
    from prfaas_plan.api.systems import PRFAAS, topology_systems
    from prfaas_plan.core.roots import bisect
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    slo = run("optimize", "two-regions", "--set", "slo.ttft=4s")["ttft_slo"]["prfaas"]
    a, b = slo["sites"]["region-a"], slo["sites"]["region-b"]
    sc = load_scenario("two-regions", Catalog.default(), overrides=["slo.ttft=4s"])
    with context.planning():
        held = topology_systems(sc, which=(PRFAAS,))[PRFAAS]

    def meets(rate: float) -> bool:
        r = system_latency(sc, held, rate)
        return r.stable and all(t.ttft_p90_s <= 4.0 for t in r.sites.values())

    rate = bisect(meets, held.capacity_rps * 1e-3, held.capacity_rps * (1 - 1e-6), iterations=30)[0]
    quoted(f"serves {slo['lambda_ttft_rps']:.3f} req/s at {units.format_length(a['threshold_tokens'])} "
           f"{a['n_p']}/{a['n_d']} and {units.format_length(b['threshold_tokens'])} {b['n_p']}/{b['n_d']}, where its "
           f"throughput plan held serves {rate:.3f}")


def _cheapest_homogeneous(size: dict) -> dict:
    return min((p for p in size["homogeneous"].values() if isinstance(p, dict) and "cost" in p),
               key=lambda p: p["cost"]["per_hour"])


def test_sizing_prose():
    s = run("size")
    best = s["best"]["cost"]["per_hour"]
    h20, h200 = s["homogeneous"]["8xH20"], s["homogeneous"]["8xH200"]
    quoted(f"It saves {pct(1 - best / h20['cost']['per_hour'])} against the cheapest homogeneous H20 fleet "
           f"(${h20['cost']['per_hour']:.0f}/h, {h20['sites']['local']['instances']} instances) and "
           f"{pct(1 - best / h200['cost']['per_hour'])} against homogeneous H200")
    tiers = {t["bandwidth_gbps"]: t for t in s["link_tiers"]}
    ten = tiers[10.0]
    quoted(f"(t {t_of(ten['plan']['sites']['local']['threshold_tokens'])}), which costs {ten['extra_gpus']} more "
           f"GPUs and ${ten['extra_cost_per_hour']:.2f}/h")
    # "at 1 Gbps and at 400 Gbps ($90/h) PrfaaS stops paying and the cheapest plan buys no link"
    assert tiers[1.0]["plan"]["sites"]["local"]["p_offload"] == 0.0 and tiers[400.0]["price_per_hour"] == 90.0
    assert not tiers[400.0]["beats_homogeneous"] and not tiers[1.0]["beats_homogeneous"]
    big = run("size", "--demand", "30rps")
    bb = big["best"]["cost"]["per_hour"]
    h20, h200 = (big["homogeneous"][k]["cost"]["per_hour"] for k in ("8xH20", "8xH200"))
    quoted(f"At 30 req/s the 200 Gbps tier wins and PrfaaS saves {pct(1 - bb / h20)} against H20 "
           f"({pct(1 - bb / h200)} against H200)")
    assert big["best"]["sites"]["local"]["link"]["bandwidth_gbps"] == 200.0
    two = run("size", "two-regions")
    hom = _cheapest_homogeneous(two)
    tb = two["best"]["cost"]["per_hour"]
    quoted(f"${tb:,.2f}/h: {pct(1 - tb / 640)} below homogeneous H20 or H200 ($640/h), but only "
           f"{pct(1 - tb / hom['cost']['per_hour'])} below the cheapest homogeneous fleet")
    assert two["homogeneous"]["8xH20"]["cost"]["per_hour"] == two["homogeneous"]["8xH200"]["cost"]["per_hour"] == 640


def test_sizing_against_optimize_on_the_plan(tmp_path):
    plan = tmp_path / "plan.yaml"
    res = CliRunner().invoke(app, ["size", "--demand", "30rps", "-o", str(plan)])
    assert res.exit_code == 0, res.output
    d = run("optimize", str(plan))
    b = d["best"]
    hom = d["baselines"]["homogeneous"]
    size_t = run("size", "--demand", "30rps")["best"]["sites"]["local"]["threshold_tokens"]
    quoted(f"finds Lambda_max {b['lambda_max_rps']:.3f} req/s = 30 / 0.8",
           f"(its t is {t_of(b['threshold_tokens'])} against size's {t_of(size_t)}",
           f"the {hom['instances']} x 8xH20 fleet, at Lambda_max {hom['lambda_max_rps']:.2f}",
           f"{d['ratios']['prfaas_vs_homogeneous_equal_cost']:.2f}x the requests of homogeneous PD at equal GPU cost",
           f"${hom['price_per_hour']:,.0f} / ${b['price_per_hour']:,.0f} of GPUs")
    small = tmp_path / "small.yaml"
    assert CliRunner().invoke(app, ["size", "-o", str(small)]).exit_code == 0
    quoted(f"At 3 req/s `optimize` on the plan finds {run('optimize', str(small))['best']['lambda_max_rps']:.3f} "
           ">= 3.75 req/s")


def test_egress_and_ttft_sizing_prose():
    e = run("size", "--set", "sizing.egress_price_per_gb=0.02")
    nv, hom = e["naive_heterogeneous"], _cheapest_homogeneous(e)
    assert e["best"]["prefill_service"] is None  # the cheapest plan is then homogeneous H20
    assert run("size", "--demand", "30rps", "--set", "sizing.egress_price_per_gb=0.02")["best"]["prefill_service"] \
        is None
    best = e["best"]["cost"]["per_hour"]
    quoted(f"at 3 req/s {e['best']['sites']['local']['instances']} x 8xH20, ${best:.0f}/h, with homogeneous H200 "
           f"{pct(1 - hom['cost']['per_hour'] / best)} cheaper at ${hom['cost']['per_hour']:.0f}/h), and naive "
           f"heterogeneous costs {pct(nv['cost']['per_hour'] / best - 1)} more (${nv['cost']['per_hour']:,.2f}/h)")
    crossing = run("size")["best"]["sites"]["local"]  # at the demand, where egress is paid
    quoted(f"the KV crossing at 3 req/s ({crossing['egress_gbps']:.1f} Gbps) costs "
           f"${crossing['egress_bytes_per_s'] * 3600 / 1e9 * 0.02:.0f}/h")
    t = run("size", "--set", "slo.ttft=4s")
    quoted(f"one more H200 instance brings it to {t['ttft']['value_s']:.2f} s for "
           f"${t['best']['cost']['per_hour']:.2f}/h")
    h200 = t["homogeneous"]["8xH200"]["cost"]["per_hour"]
    quoted(f"homogeneous H200 can for ${h200:.0f}/h, so PrfaaS saves {pct(1 - t['best']['cost']['per_hour'] / h200)}")
    frontier = {f["bound_s"]: f for f in t["ttft_frontier"]}
    assert frontier[2.0]["per_hour"] is None and frontier[3.0]["per_hour"] is None
    assert frontier[6.0]["per_hour"] == frontier[8.0]["per_hour"] == frontier[12.0]["per_hour"]
    lowest = re.search(r"the lowest found is ([\d.]+) s", frontier[2.0]["infeasible"]).group(1)
    floor = re.search(r"the lowest found is ([\d.]+) s", t["homogeneous"]["8xH20"]["infeasible"]).group(1)
    quoted(f"infeasible, infeasible, ${frontier[4.0]['per_hour']:.2f}, then ${frontier[6.0]['per_hour']:.2f}/h",
           f"the throughput plan's p90 is {frontier[6.0]['ttft_s']:.2f} s",
           f"(+${frontier[4.0]['per_hour'] - frontier[6.0]['per_hour']:.0f})",
           f"its p90 floor is {floor} s", f"below {lowest} s nothing within the maxima can")


def test_several_models_prose():
    d = run("optimize", "three-models")
    b = d["best"]
    e = {x["model"]: x for x in b["entries"]}
    r = d["ratios"]
    quoted(f"Separate services cut the same four instances and the 100 Gbps link in proportion to demand "
           f"(2 / 1 / 1 instances, 50 / 30 / 20 Gbps): {r['shared_vs_separate']:.2f}x fewer requests.",
           f"Homogeneous PD on all 96 GPUs serves {r['shared_vs_homogeneous']:.2f}x fewer.",
           f"cross the link at {e['Kimi-Linear-48B-A3B']['egress_gbps']:.1f} Gbps")
    assert e["DeepSeek-V3"]["n_prfaas"] == 2 and e["Kimi-Linear-48B-A3B"]["p_offload"] == 1.0
    s = run("simulate", "three-models")
    shared, sep = s["systems"]["prfaas"], s["systems"]["separate"]
    quoted(f"At the same {s['rate_rps']:.2f} req/s the shared plan runs at {shared['load'] * 100:.0f}% of its "
           f"capacity and its P90 TTFT is {shared['simulated']['ttft_p90_s']:.1f} s against "
           f"{sep['simulated']['ttft_p90_s']:.1f} s for separate services at {sep['load'] * 100:.0f}% of theirs.",
           f"within 1% of the analytic {shared['capacity_rps']:.3f} req/s")
    z = run("size", "three-models")
    site = z["sites"]["local"]
    quoted(f"`optimize` on what it bought ({z['prefill']['instances']} x 8xH200, {site['instances']} x 8xH20, "
           f"{site['link_tier_gbps']:.0f} Gbps)",
           f"Sized alone, each model buys its own service and link: "
           f"${z['baselines']['separate_per_hour'] - z['cost']['per_hour']:.0f}/h more.")
    lam = run("optimize", "three-models", "--set", f"clusters.prfaas.instances={z['prefill']['instances']}",
              "--set", f"clusters.local.instances={site['instances']}")["best"]["lambda_max_rps"]
    quoted(f"serves {lam:.3f} req/s, at least the {z['demand_rps'] / z['headroom']:.3f} it was sized for")


def test_several_models_degrade_prose():
    d = run("degrade", "three-models")
    half, down = d["links"]["prfaas->local"][1], d["links"]["prfaas->local"][-1]
    e = {x["model"]: x for x in half["replan"]["entries"]}
    assert half["level"] == 0.5 and down["level"] == 0.0
    assert e["DeepSeek-V3"]["p_offload"] == 1.0
    quoted(f"At half the link the plan held is link-bound at {half['static_rps']:.3f} req/s; re-planned, DeepSeek-V3 "
           f"offloads every request and Llama-3.1-70B only those above "
           f"{units.shown_threshold(e['Llama-3.1-70B']['threshold_tokens']):,} tokens, for "
           f"{half['replan']['lambda_max_rps']:.3f}.",
           f"With the link down the fleet prefills everything locally: {down['replan']['lambda_max_rps']:.3f} req/s.")


def test_several_models_ttft_sizing_prose():
    d = run("size", "three-models", "--set", "models[1].slo={decode_tokens_per_s: 40, ttft: 6s}",
            "--set", "models[2].slo={decode_tokens_per_s: 40, ttft: 6s}")
    quoted(f"With a P90 of at most 6 s for DeepSeek-V3 and Llama-3.1-70B it costs ${d['cost']['per_hour']:,.2f}/h, "
           f"sized at headroom {d['headroom']:.3g}.")
