"""`optimize` and `sweep` end to end: docs/sources.md#table-6, the link what-if, traces, bad input."""

import json

import pytest
from typer.testing import CliRunner

from prfaas_plan.api.plan import plan
from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.plan_json import plan_json

runner = CliRunner()


def run_json(*args):
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def case_study():
    return plan_json(plan(load_scenario(None, Catalog.default())).result)


@pytest.mark.paper
def test_table6_paper_method(case_study):
    m = case_study["methods"]["paper"]
    b, hom, nv, ratios = m["best"], m["baselines"]["homogeneous"], m["baselines"]["naive_heterogeneous"], m["ratios"]
    assert b["threshold_tokens"] == pytest.approx(19400, abs=1024)  # t = 19.4K within 1K
    assert (b["n_prfaas"], b["n_p"], b["n_d"]) == (4, 3, 5)
    assert b["lambda_max_rps"] == pytest.approx(3.24, rel=0.03)
    assert (hom["n_p"], hom["n_d"]) == (9, 3)
    assert hom["lambda_max_rps"] == pytest.approx(2.11, rel=0.03)
    assert (nv["n_prfaas"], nv["n_d"]) == (4, 8)
    assert nv["lambda_max_rps"] == pytest.approx(2.45, rel=0.03)
    assert ratios["prfaas_vs_homogeneous"] == pytest.approx(1.54, abs=0.05)
    assert ratios["naive_vs_homogeneous"] == pytest.approx(1.16, abs=0.05)
    assert b["p_offload"] == pytest.approx(0.496, abs=0.015)
    assert b["l_long_tokens"] == pytest.approx(44 * 1024, abs=2 * 1024)
    assert b["egress_gbps"] == pytest.approx(13, abs=1.5)
    assert b["theta_pd_d_rps"] == pytest.approx(3.91, abs=0.005)
    # the optimum balances the PrfaaS cluster (compute-bound, as the paper says) and PD-P (Eq. 7)
    assert b["binding"] == "prfaas-compute"
    assert set(b["tight"]) == {"prfaas-compute", "pd-prefill"}


@pytest.mark.paper
def test_table6_exact_method(case_study):
    m = case_study["methods"]["exact"]
    b = m["best"]
    assert (b["n_prfaas"], b["n_p"], b["n_d"]) == (4, 3, 5)
    assert b["threshold_tokens"] == pytest.approx(19400, abs=1024)
    assert b["lambda_max_rps"] == pytest.approx(3.24, rel=0.03)
    # Jensen: T is convex in l, so every exact prefill bound sits below the paper method's
    assert b["lambda_max_rps"] < case_study["methods"]["paper"]["best"]["lambda_max_rps"]


def test_optimize_cli_json_contract():
    d = run_json("optimize")
    for key in ("threshold_tokens", "n_prfaas", "n_p", "n_d", "lambda_max_rps", "p_offload", "l_long_tokens",
                "l_short_tokens", "theta_prfaas_rps", "theta_pd_p_rps", "theta_pd_d_rps", "egress_gbps", "binding"):
        assert key in d["best"]
    assert d["baselines"]["homogeneous"]["lambda_max_rps"] > 0
    assert d["baselines"]["naive_heterogeneous"]["n_d"] == 8
    assert d["workload"]["mean_input_tokens"] == pytest.approx(27486, rel=1e-3)
    assert d["workload"]["prefix_hit_rate"] is None
    assert set(d["methods"]) == {"paper", "exact"}
    assert "prfaas_vs_homogeneous" in d["ratios"]


def test_link_what_if_moves_t_up_and_binds_the_link():
    base = run_json("optimize")["best"]
    ten = run_json("optimize", "--set", "link.bandwidth=10Gbps")["best"]
    two = run_json("optimize", "--set", "link.bandwidth=2Gbps")["best"]
    assert base["threshold_tokens"] < ten["threshold_tokens"] < two["threshold_tokens"]
    assert ten["binding"] == "link" and two["binding"] == "link"
    assert two["egress_gbps"] == pytest.approx(2.0, rel=1e-6)  # the link runs full


def test_sweep_link_bandwidth():
    d = run_json("sweep", "--set", "link.bandwidth=1Gbps..100Gbps:5", "--log")
    rows = d["rows"]
    assert [r["value"] for r in rows] == pytest.approx([1, 3.1623, 10, 31.623, 100], rel=1e-4)
    # scarce link: the link binds (at 1 Gbps even the best split is decode-bound with the link 95% full)
    assert [r["binding"] for r in rows] == ["decode", "link", "link", "prfaas-compute", "prfaas-compute"]
    lam = [r["lambda_max_rps"] for r in rows]
    assert lam == sorted(lam)
    thresholds = [r["threshold_tokens"] for r in rows]
    assert thresholds == sorted(thresholds, reverse=True)


def test_trace_workload(shared_data):
    trace = shared_data / "traces" / "mooncake_synthetic_trace.jsonl"
    d = run_json("optimize", "--trace", str(trace))
    w = d["workload"]
    assert 0 < w["prefix_hit_rate"] < 1
    assert w["mean_input_tokens"] == pytest.approx(15325, rel=1e-3)  # shared/data/README.md
    assert w["requests"] == 3993
    assert w["output_tokens"] == pytest.approx(149, abs=1)
    b = d["best"]
    assert 0 < b["p_offload"] < 1 and b["l_long_tokens"] > b["threshold_tokens"]


def _scenario(tmp_path, **edits):
    import yaml

    from prfaas_plan.io.load import PACKAGED_CATALOG

    data = yaml.safe_load((PACKAGED_CATALOG / "scenarios" / "paper-case-study.yaml").read_text())
    for path, value in edits.items():
        node = data
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump(data))
    return str(f)


@pytest.mark.slow
@pytest.mark.parametrize(("edits", "needle"), [
    ({"clusters__local__instances": 1}, "clusters.local.instances"),
    ({"link__bandwidth": 0}, "link.bandwidth"),
    ({"link__bandwidth": "-5Gbps"}, "link.bandwidth"),
    ({"workload__input__sigma": 0}, "sigma"),
    ({"workload__input__min": 200000}, "min"),
    ({"search__threshold": {"min": 200000, "max": 300000}}, "search.threshold"),
    ({"link__bandwith": 10}, "bandwith"),
])
def test_bad_scenario_exit_2_one_line(tmp_path, edits, needle):
    res = runner.invoke(app, ["optimize", _scenario(tmp_path, **edits)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "s.yaml" in lines[0]


def test_bad_trace_line_names_the_line(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}\n{oops\n')
    res = runner.invoke(app, ["optimize", "--trace", str(f)])
    assert res.exit_code == 2
    assert "line 2" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_unmeetable_slo_exit_1_names_decode():
    res = runner.invoke(app, ["optimize", "--set", "slo.decode_tokens_per_s=100"])
    assert res.exit_code == 1
    assert "decode" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_set_unknown_key_and_bad_value():
    res = runner.invoke(app, ["optimize", "--set", "link.colour=red"])
    assert res.exit_code == 2 and "colour" in res.stderr
    res = runner.invoke(app, ["optimize", "--set", "nonsense"])
    assert res.exit_code == 2 and "key=value" in res.stderr
    res = runner.invoke(app, ["sweep", "--set", "link.bandwidth=1Gbps..x:3"])
    assert res.exit_code == 2


def test_plot_writes_png(tmp_path):
    out = tmp_path / "fig5.png"
    res = runner.invoke(app, ["optimize", "--plot", str(out)])
    assert res.exit_code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dense_model_is_link_limited_with_little_gain():
    # the paper's motivation: MiniMax-M2.5 (dense GQA) on the same fleet and link
    d = run_json("optimize", "--set", "model=MiniMax-M2.5")
    b = d["best"]
    assert b["prfaas_limited_by"] == "link"
    assert b["link_utilization"] > 0.5
    assert d["ratios"]["prfaas_vs_homogeneous"] < 1.1
    assert d["baselines"]["naive_heterogeneous"]["binding"] == "link"
    hybrid = run_json("optimize")
    assert hybrid["best"]["prfaas_limited_by"] == "prfaas-compute"
    assert hybrid["ratios"]["prfaas_vs_homogeneous"] > 1.4


def test_derived_decode_says_why_it_is_infeasible():
    # 1T parameters in fp8 do not fit in 8 x 96 GB x 0.9: the paper pins BS_max instead
    res = runner.invoke(app, ["optimize", "--set", "decode.mode=derived"])
    assert res.exit_code == 1
    assert "decode" in res.stderr and "do not fit" in res.stderr


def test_derived_decode_on_a_model_that_fits():
    # Qwen3-235B's context is 40,960 tokens (its hub config): the workload stops there
    d = run_json("optimize", "--set", "model=Qwen3-235B-A22B", "--set", "decode.mode=derived",
                 "--set", "workload.input.max=40960", "--set", "search.threshold.max=40960")
    assert d["decode"]["mode"] == "derived"
    assert d["decode"]["bs_max"] >= 1 and d["decode"]["t_decode_s"] <= 0.025


def test_empirical_histogram_workload(tmp_path):
    csv = tmp_path / "lengths.csv"
    csv.write_text("length,count\n4096,3\n65536,1\n")
    d = run_json("optimize", "--set", f"workload.input={{kind: empirical, file: '{csv}'}}")
    assert d["workload"]["mean_input_tokens"] == pytest.approx((3 * 4096 + 65536) / 4)
    # two lengths: the best threshold separates them (or sends everything one way)
    assert d["best"]["p_offload"] in (0.0, pytest.approx(0.25), 1.0)


@pytest.mark.parametrize("spec", ["{kind: uniform, min: 1K, max: 64K}", "{kind: gamma, shape: 2, scale: 8K, max: 128K}",
                                  "{kind: fixed, value: 32K}"])
def test_parametric_workloads(spec):
    d = run_json("optimize", "--set", f"workload.input={spec}")
    assert d["best"]["lambda_max_rps"] > 0


def test_bad_empirical_row(tmp_path):
    csv = tmp_path / "lengths.csv"
    csv.write_text("length\n4096\nlots\n")
    res = runner.invoke(app, ["optimize", "--set", f"workload.input={{kind: empirical, file: '{csv}'}}"])
    assert res.exit_code == 2
    assert res.stderr == f"error: {csv}: line 3 column 1: 'lots' is not a token length (a number >= 1)\n"


@pytest.mark.slow
def test_ttft_slo_bounds_the_rate():
    d = run_json("optimize", "--set", "slo.ttft=8s")
    slo = d["ttft_slo"]
    pf, nv = slo["prfaas"], slo["naive_heterogeneous"]
    assert slo["statistic"] == "p90" and slo["bound_s"] == 8.0
    for s in (pf, nv):
        assert s["lambda_ttft_rps"] < s["capacity_rps"] and s["binding"] == "ttft"
        assert s["ttft_p90_s"] <= 8.0 and s["ttft_p90_s"] == pytest.approx(8.0, rel=0.01)
    assert pf["lambda_ttft_rps"] > nv["lambda_ttft_rps"]
    # homogeneous PD prefills 128K requests on H20 (22 s): its P90 misses 8 s even at zero load
    assert slo["homogeneous"] is None
    # the throughput optimum is still reported as it was
    assert d["best"]["lambda_max_rps"] == pytest.approx(3.30, rel=0.01)


@pytest.mark.slow
def test_ttft_slo_nothing_meets_exit_1():
    res = runner.invoke(app, ["optimize", "--set", "slo.ttft=0.5s"])
    assert res.exit_code == 1
    assert "ttft" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_sizing_the_prfaas_cluster_never_loses():
    fixed = run_json("optimize")["best"]
    sized = run_json("optimize", "--set", "search.size_prfaas=true", "--set", "search.max_prfaas_instances=8")["best"]
    assert sized["lambda_max_rps"] >= fixed["lambda_max_rps"] * (1 - 1e-9)
    assert 1 <= sized["n_prfaas"] <= 8
    # more PrfaaS instances than 4 only help while decode does not bind: 5 decode instances cap at 3.91
    assert sized["lambda_max_rps"] <= 8 * 0.78125 + 1e-9


def test_idle_stage_does_not_waste_instances():
    # one length: everything is offloaded (H200 beats H20 on every request), PD-P idles; the tie between
    # splits goes to the one with the most decode headroom (N_p = 1), not an arbitrary one
    d = run_json("optimize", "--set", "workload.input={kind: fixed, value: 32K}", "--set", "search.threshold=null")
    b = d["best"]
    assert b["p_offload"] == 1.0 and b["binding"] == "prfaas-compute"
    assert (b["n_p"], b["n_d"]) == (1, 7)


@pytest.mark.parametrize("spec", ["{kind: lognormal, mu: 9.9, sigma: 1}", "{kind: gamma, shape: 2, scale: 8K}"])
def test_unbounded_workload_with_the_default_threshold_range(spec):
    # no max length and no search.threshold: the range ends at the 1 - 1e-6 quantile
    d = run_json("optimize", "--set", f"workload.input={spec}", "--set", "search.threshold=null")
    b = d["best"]
    assert 0 < b["p_offload"] < 1 and b["lambda_max_rps"] > 0
    assert d["search"]["thresholds"] <= 20_001


def test_trace_cache_capacity_from_the_kv_engine(shared_data):
    trace = str(shared_data / "traces" / "mooncake_synthetic_trace.jsonl")
    rates = [run_json("optimize", "--trace", trace, "--set", f"workload.input.cache_capacity_gib={c}")["workload"]
             ["prefix_hit_rate"] for c in (1, 100)]
    unbounded = run_json("optimize", "--trace", trace)["workload"]["prefix_hit_rate"]
    assert rates[0] < rates[1] < unbounded
    assert rates[0] < 0.05  # 1 GiB holds ~60K tokens of internal-1t KV (17,280 B/token): little reuse


def test_sources_name_the_share_of_requests_outside_a_measured_profile():
    """Item 6 of 'Every real input works': the case study's lognormal runs from 128 tokens, below
    Table 5's first point (1K): that share is extrapolated and the sources say so; inside [1K, 128K]
    they do not. Oracle: the truncated log-normal CDF, (F(1023) - F(128)) / (F(128K) - F(128))."""
    import math

    from scipy.stats import norm

    cdf = lambda x: norm.cdf((math.log(x) - 9.9) / 1.0)  # noqa: E731
    share = (cdf(1023) - cdf(128)) / (cdf(131072) - cdf(128))
    sources = plan(load_scenario(None, Catalog.default()), methods=("paper",)).result.sources
    assert f"extrapolated below the measured 1K for {share:.2%} of requests" in sources["prefill 8xH200"]
    inside = load_scenario(None, Catalog.default(), overrides=["workload.input.min=1K"])
    assert not any("extrapolated" in v for v in plan(inside, methods=("paper",)).result.sources.values())


@pytest.mark.slow
@pytest.mark.parametrize(("option", "needle"), [
    ("clusters.local.instances=4000", None),  # 4,000 splits x 1,024 thresholds: within the bound
    ("clusters.local.instances=9000", "the search would weigh 9,214,976 candidates (1,024 thresholds x 8,999 "
                                      "splits x 1 PrfaaS sizes); at most 5,000,000"),
    ("clusters.local.instances=10001", "Input should be less than or equal to 10000 (got 10001)"),
    ("baselines.homogeneous.instances=10000000", "less than or equal to 10000"),
])
def test_search_space_and_fleet_sizes_are_bounded(option, needle):
    """A fleet of 1e7 instances asked for 76 GiB (a MemoryError traceback) or ran for minutes; the
    search is bounded at 5,000,000 candidates and a cluster at 10,000 instances, both named."""
    res = runner.invoke(app, ["optimize", "--set", option, "--format", "json"])
    if needle is None:
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["best"]["lambda_max_rps"] > 0
    else:
        assert res.exit_code == 2 and needle in res.stderr and option.split("=")[0] in res.stderr + "search"
