"""Several models sharing one prefill service (``core.fleet``, ``api.fleet``, `optimize` with ``models:``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.core import fleet as core
from prfaas_plan.core.throughput import Routing
from prfaas_plan.io.fleet import load_plan_input
from prfaas_plan.io.load import Catalog

CASE = Path(__file__).resolve().parents[1] / "prfaas_plan" / "catalog" / "scenarios" / "paper-case-study.yaml"


def _routing(rng: np.random.Generator, k: int) -> Routing:
    """A threshold grid with p falling from 1 (offload all) to 0 (none), positive means."""
    t = np.sort(rng.uniform(100.0, 10_000.0, k))
    p = np.sort(rng.uniform(0.0, 1.0, k))[::-1].copy()
    p[0], p[-1] = 1.0, 0.0
    return Routing(t=t, p=p, l_long=t * 2, l_short=t / 2, t_long_s=rng.uniform(0.2, 3.0, k),
                   s_long_bytes=rng.uniform(1e8, 3e9, k), t_short_s=rng.uniform(0.1, 4.0, k))


def _fleet(rng: np.random.Generator, n_entries: int, k: int, n_site: int, n_prfaas: int
           ) -> tuple[core.Fleet, list[core.Entry]]:
    w = rng.dirichlet(np.ones(n_entries))
    es = [core.Entry(model=f"m{i}", site=0, weight=float(w[i]), routing=_routing(rng, k),
                     decode_rps_per_instance=float(rng.uniform(0.3, 3.0))) for i in range(n_entries)]
    fl = core.Fleet(sites=("local",), links=("prfaas->local",), site_instances=(n_site,),
                    link_bytes_per_s=(float(rng.uniform(1e9, 2e10)),), n_prfaas=n_prfaas)
    return fl, es


def _caps(fl: core.Fleet, es: list[core.Entry]) -> list[core.Caps]:
    """Separate services on one site: the service and the link in proportion to demand."""
    inst = core.proportional(fl.n_prfaas, [e.weight for e in es])
    return [core.Caps(prfaas=n, link_bytes_per_s=fl.link_bytes_per_s[0] * e.weight)
            for n, e in zip(inst, es, strict=True)]


def brute(fl: core.Fleet, es: list[core.Entry], caps: list[core.Caps] | None = None) -> float:
    """Every threshold, every integer split of the site and of the service, every N_p / N_d."""
    n_site, n_pre = fl.site_instances[0], fl.n_prfaas
    options = []
    for i, e in enumerate(es):
        opts = []
        for k in range(len(e.routing.t)):
            for n in range(1, n_site + 1):
                for n_d in range(1, n + 1):
                    for a in ([caps[i].prfaas] if caps else range(n_pre + 1)):
                        opts.append((n, 0 if caps else a, core.Choice(k=k, n_p=n - n_d, n_d=n_d, a=a)))
        options.append(opts)
    best = 0.0
    for combo in itertools.product(*options):
        if sum(c[0] for c in combo) > n_site or sum(c[1] for c in combo) > n_pre:
            continue
        best = max(best, core.evaluate(fl, es, [c[2] for c in combo], caps).lambda_max_rps)
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n_site=st.integers(2, 4), n_prfaas=st.integers(0, 3))
def test_search_equals_brute_force_two_models(seed: int, n_site: int, n_prfaas: int) -> None:
    fl, es = _fleet(np.random.default_rng(seed), 2, 3, n_site, n_prfaas)
    found = core.search(fl, es)
    want = brute(fl, es)
    got = 0.0 if found is None else found.lambda_max_rps
    assert got == pytest.approx(want, rel=1e-8, abs=1e-12)


def test_search_equals_brute_force_three_models() -> None:
    for seed in range(3):
        fl, es = _fleet(np.random.default_rng(100 + seed), 3, 3, 4, 2)
        found = core.search(fl, es)
        assert found is not None
        assert found.lambda_max_rps == pytest.approx(brute(fl, es), rel=1e-8)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n_site=st.integers(2, 4), n_prfaas=st.integers(1, 3))
def test_separate_services_equal_their_brute_force(seed: int, n_site: int, n_prfaas: int) -> None:
    fl, es = _fleet(np.random.default_rng(seed), 2, 3, n_site, n_prfaas)
    caps = _caps(fl, es)
    found = core.search(fl, es, caps=caps)
    got = 0.0 if found is None else found.lambda_max_rps
    assert got == pytest.approx(brute(fl, es, caps), rel=1e-8, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n_models=st.integers(1, 4), n_site=st.integers(4, 12),
       n_prfaas=st.integers(1, 8), k=st.integers(2, 12))
def test_sharing_is_never_below_separate_services(seed: int, n_models: int, n_site: int, n_prfaas: int,
                                                  k: int) -> None:
    fl, es = _fleet(np.random.default_rng(seed), n_models, k, n_site, n_prfaas)
    caps = _caps(fl, es)
    shared, separate = core.search(fl, es), core.search(fl, es, caps=caps)
    if separate is not None:
        assert shared is not None
        assert shared.lambda_max_rps >= separate.lambda_max_rps * (1 - 1e-9)


def test_proportional_largest_remainder() -> None:
    assert core.proportional(4, [0.5, 0.3, 0.2]) == [2, 1, 1]  # 2.0, 1.2, 0.8: the 0.8 remainder first
    assert core.proportional(3, [1, 1]) == [2, 1]  # a tie goes to the first
    assert core.proportional(0, [0.7, 0.3]) == [0, 0]


def test_one_entry_by_hand() -> None:
    """One model, p = 1/2 at its only offloading threshold: the four bounds by hand."""
    ro = Routing(t=np.array([99.0, 1000.0]), p=np.array([1.0, 0.5]), l_long=np.array([500.0, 2000.0]),
                 l_short=np.array([0.0, 400.0]), t_long_s=np.array([1.0, 2.0]), s_long_bytes=np.array([1e9, 2e9]),
                 t_short_s=np.array([1.0, 0.5]))
    e = core.Entry(model="m", site=0, weight=1.0, routing=ro, decode_rps_per_instance=1.0)
    fl = core.Fleet(sites=("s",), links=("p->s",), site_instances=(4,), link_bytes_per_s=(4e9,), n_prfaas=2)
    found = core.search(fl, [e])
    # t index 1: compute 2 / (0.5 x 2) = 2; link 4e9 / (0.5 x 2e9) = 4; N_p = 1: 1 / (0.5 x 0.5) = 4;
    # N_d = 3: 3 -> Lambda 2 (compute); t index 0 (all offloaded): compute 2 / 1 = 2, link 4 -> also 2
    assert found is not None and found.lambda_max_rps == pytest.approx(2.0, rel=1e-12)
    assert found.binding.startswith("prfaas-compute")


def _scenario(tmp_path: Path, name: str, models: list[dict], scale: int = 1) -> Path:
    d = yaml.safe_load(CASE.read_text())
    for k in ("model", "sizing", "baselines"):
        d.pop(k)
    d["clusters"]["prfaas"]["instances"] *= scale
    d["clusters"]["local"]["instances"] *= scale
    d["link"]["bandwidth"] = f"{100 * scale}Gbps"
    d["models"] = models
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(d))
    return p


def _plan(path: Path):
    from prfaas_plan.api.fleet import plan

    fs = load_plan_input(str(path), Catalog.default())
    return plan(fs)


def test_two_identical_models_on_twice_the_fleet_serve_what_one_serves(tmp_path: Path) -> None:
    one = _plan(_scenario(tmp_path, "one", [{"model": "internal-1t", "demand_share": 1.0}]))
    two = _plan(_scenario(tmp_path, "two", [{"model": "internal-1t", "demand_share": 0.5, "name": "a"},
                                            {"model": "internal-1t", "demand_share": 0.5, "name": "b"}], scale=2))
    for m in ("paper", "exact"):
        lam1 = one.methods[m].best.lambda_max_rps
        for e in two.methods[m].best.entries:
            assert e.lambda_rps == pytest.approx(lam1, rel=1e-9)
            ref = one.methods[m].best.entries[0]
            assert (e.n_p, e.n_d, e.n_prfaas) == (ref.n_p, ref.n_d, ref.n_prfaas)
            assert e.threshold_tokens == pytest.approx(ref.threshold_tokens, rel=1e-9)


def test_one_model_fleet_is_optimize(tmp_path: Path) -> None:
    """The case study as a fleet of one: optimize's plan (Table 6: t 19.2K, 3/5 and 4, 3.30 req/s)."""
    from prfaas_plan.api.optimize import optimize
    from prfaas_plan.io.scenario import load_scenario

    fleet = _plan(_scenario(tmp_path, "one", [{"model": "internal-1t", "demand_share": 1.0}]))
    ref = optimize(load_scenario(None, Catalog.default())).result
    for m in ("paper", "exact"):
        e = fleet.methods[m].best.entries[0]
        want, site = ref.methods[m].best, ref.methods[m].best.sites[0]
        assert fleet.methods[m].best.lambda_max_rps == pytest.approx(want.lambda_max_rps, rel=1e-6)
        assert (e.n_p, e.n_d, e.n_prfaas) == (site.n_p, site.n_d, want.n_prfaas)
        assert e.threshold_tokens == pytest.approx(site.threshold_tokens, abs=0.5)
    assert fleet.methods["paper"].best.lambda_max_rps == pytest.approx(3.30, abs=0.005)


def test_bundled_three_models() -> None:
    res = CliRunner().invoke(app, ["optimize", "three-models", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert set(d["models"]) == {"Kimi-Linear-48B-A3B", "DeepSeek-V3", "Llama-3.1-70B"}
    kv = [d["models"][m]["kv_bytes_per_token"] for m in ("Kimi-Linear-48B-A3B", "DeepSeek-V3", "Llama-3.1-70B")]
    assert kv == sorted(kv) and kv[2] / kv[0] > 10  # hybrid < MLA MoE < dense GQA
    best = d["best"]
    assert sum(e["n_prfaas"] for e in best["entries"]) <= 4
    assert sum(e["n_p"] + e["n_d"] for e in best["entries"]) == 8
    lam = best["lambda_max_rps"]
    for e in best["entries"]:  # each model at its share of Lambda
        assert e["lambda_rps"] == pytest.approx(lam * d["models"][e["model"]]["demand_share"], rel=1e-12)
    assert d["ratios"]["shared_vs_separate"] >= 1.0
    link = best["links"]["prfaas->local"]
    assert link["egress_gbps"] == pytest.approx(sum(e["egress_gbps"] for e in best["entries"]), rel=1e-9)
    assert link["egress_gbps"] <= link["usable_gbps"] * (1 + 1e-9)


@pytest.mark.parametrize(("setting", "code", "line"), [
    ("models[1].demand_share=0.5", 2, "three-models.yaml: models: the models' demand shares sum to 1.2, not 1"),
    ("models[1].model=NoSuch", 2, "--set models[1].model: unknown model 'NoSuch'"),
    ("models[1].workload={input: {kind: lognormal, mu: x, sigma: 1}, output_tokens: 10}", 2,
     "--set models[1].workload.input.mu: Input should be a valid number"),
    ("models[0].colour=red", 2, "--set models[0].colour: unknown key 'colour'"),
    ("model=DeepSeek-V3", 2, "--set model: give each model under models:"),
    ("models[2].demand_share=true", 2, "--set models[2].demand_share: expected a share in (0, 1], got True"),
    ("models=[]", 2, "--set models: expected a list of models (each with model: and demand_share:), got an empty list"),
    ("clusters.local.instances=2", 1, "site local has 2 instances for 3 models"),
    ("models[1].sites=[local]", 2, "--set models[1].sites: a model's sites: needs the scenario's sites: form"),
])
def test_bad_fleet_input_is_one_line(setting: str, code: int, line: str) -> None:
    res = CliRunner().invoke(app, ["optimize", "three-models", "--set", setting])
    assert res.exit_code == code
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and line in err[0], err


def test_one_model_commands_refuse_a_fleet() -> None:
    res = CliRunner().invoke(app, ["thresholds", "three-models"])
    assert res.exit_code == 2
    assert ("models: this scenario lists several models; optimize, simulate, latency, size, degrade, study and "
            "report take such a scenario") in res.stderr


def test_simulate_a_fleet_from_the_cli() -> None:
    res = CliRunner().invoke(app, ["simulate", "three-models", "--requests", "3000", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    shared, separate = d["systems"]["prfaas"], d["systems"]["separate"]
    assert shared["pools"] == {"Kimi-Linear-48B-A3B": 1, "DeepSeek-V3": 2, "Llama-3.1-70B": 1}
    assert sum(separate["pools"].values()) == 4  # the same service, cut by demand share: 2 / 1 / 1
    assert separate["pools"] == {"Kimi-Linear-48B-A3B": 2, "DeepSeek-V3": 1, "Llama-3.1-70B": 1}
    # at the same rate the shared plan runs further from its capacity (54% vs 80% load)
    assert shared["load"] < separate["load"] == pytest.approx(0.8)
    assert d["rate_rps"] == pytest.approx(0.8 * separate["capacity_rps"], rel=1e-12)
    for system in (shared, separate):
        sites = system["simulated"]["sites"]
        assert set(sites) == {"Kimi-Linear-48B-A3B", "DeepSeek-V3", "Llama-3.1-70B"}
        assert sum(s["rate_rps"] for s in sites.values()) == pytest.approx(d["rate_rps"], rel=1e-12)


@pytest.mark.validation
def test_simulated_saturation_is_the_analytic_capacity() -> None:
    """The bundled three-models plan fed at 1.5x its exact-method capacity: the sustained rate
    within 1% (1,000,000 requests: the offloaded DeepSeek-V3 prefill times are heavy-tailed, so
    at 200,000 one seed's sample mean alone moves the estimate by up to 1.4%)."""
    from prfaas_plan.api.context import planning
    from prfaas_plan.api.fleet_sim import fleet_systems
    from prfaas_plan.sim.fleet import saturation_fleet

    with planning():
        fs = load_plan_input("three-models", Catalog.default())
        system, scs = fleet_systems(fs)["prfaas"]
        sat = saturation_fleet(scs, system, np.random.default_rng(0), 1_000_000)
    assert system.capacity_binding == "prfaas-compute DeepSeek-V3"
    assert sat.bottleneck == "prfaas:DeepSeek-V3"
    assert sat.throughput_rps == pytest.approx(system.capacity_rps, rel=0.01)


def _size_json(args: list[str]) -> dict:
    res = CliRunner().invoke(app, ["size", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_fleet_of_one_model_sizes_as_size_does(tmp_path: Path) -> None:
    """The case study as a fleet of one: the cheapest fleet of `size` ($294.50/h at 3 req/s:
    6 x 8xH200 and 5 x 8xH20 behind a 100 Gbps port)."""
    d = yaml.safe_load(CASE.read_text())
    d.pop("model")
    d.pop("baselines")
    d["models"] = [{"model": "internal-1t", "demand_share": 1.0}]
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(d))
    fleet, single = _size_json([str(path)]), _size_json([])
    assert fleet["cost"]["per_hour"] == pytest.approx(single["best"]["cost"]["per_hour"], rel=1e-12)
    assert fleet["cost"]["per_hour"] == pytest.approx(294.50, abs=1e-9)
    assert fleet["prefill"]["instances"] == single["best"]["prefill_service"]["instances"] == 6


def test_the_sized_fleet_serves_its_demand() -> None:
    """size three-models, then optimize on what it bought: Lambda_max >= demand / headroom."""
    d = _size_json(["three-models"])
    assert d["cost"]["per_hour"] <= d["baselines"]["separate_per_hour"] + 1e-9
    assert d["cost"]["per_hour"] <= d["baselines"]["homogeneous_per_hour"] + 1e-9
    site = d["sites"]["local"]
    res = CliRunner().invoke(app, ["optimize", "three-models", "--format", "json", "--set",
                                   f"clusters.prfaas.instances={max(d['prefill']['instances'], 1)}", "--set",
                                   f"clusters.local.instances={site['instances']}", "--set",
                                   f"clusters.local.hardware={site['hardware']}", "--set",
                                   f"link.bandwidth={site['link_tier_gbps']}Gbps"])
    assert res.exit_code == 0, res.output
    lam = json.loads(res.stdout)["best"]["lambda_max_rps"]
    assert lam >= d["demand_rps"] / d["headroom"] * (1 - 1e-9)


def test_fleet_size_equals_brute_force(tmp_path: Path) -> None:
    """On a coarse threshold grid, every combination of the models' thresholds, every local kind
    and every tier: the cheapest total is size's."""
    from prfaas_plan.api import fleet_size as fz

    fs = load_plan_input("three-models", Catalog.default(), overrides=["search.threshold.step=16K"])
    spec = fs.models[0].scenario.sizing
    got = fz.size(fs).per_hour
    lam = spec.demand_rps / spec.headroom
    entries = fz.entries_by_site(fs, spec)["local"]
    best = np.inf
    for pre in spec.prfaas.options:
        for loc in spec.local.options:
            cands = [fz.candidates(e, spec, pre, loc, lam, spec.demand_rps, False) for e in entries]
            law = entries[0].law
            tiers = [(None, 0.0)] + [(fz.usable_at_tier(law, t), t.price_per_hour) for t in spec.tiers]
            for combo in itertools.product(*(range(len(c.cost)) for c in cands)):
                cost = sum(c.cost[k] for c, k in zip(cands, combo, strict=True))
                carried = sum(c.carried[k] for c, k in zip(cands, combo, strict=True))
                for usable, price in tiers:
                    if (carried <= 0 if usable is None else carried <= usable * (1 + 1e-9)):
                        best = min(best, cost + price)
    assert got == pytest.approx(best, rel=1e-12)


def test_degrade_a_fleet() -> None:
    """The plan held loses what its link bytes say (B x level / bytes per request); re-planned it
    never serves less, and with the link down it offloads nothing."""
    res = CliRunner().invoke(app, ["degrade", "three-models", "--levels", "50%,10%,0", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    nominal = d["nominal"]
    lam = nominal["lambda_max_rps"]
    per_request = nominal["links"]["prfaas->local"]["egress_gbps"] / lam  # Gbit per request of Lambda
    levels = d["links"]["prfaas->local"]
    assert [lv["level"] for lv in levels] == [1.0, 0.5, 0.1, 0.0]
    assert levels[0]["static_rps"] == pytest.approx(lam, rel=1e-12)
    assert levels[0]["replan"]["lambda_max_rps"] == pytest.approx(lam, rel=1e-12)
    for lv in levels[1:]:
        assert lv["static_rps"] == pytest.approx(min(lam, lv["usable_gbps"] / per_request), rel=1e-9)
        assert lv["replan"]["lambda_max_rps"] >= lv["static_rps"] * (1 - 1e-12)
    down = levels[-1]["replan"]
    assert all(e["p_offload"] == 0 and e["n_prfaas"] == 0 for e in down["entries"])
    assert CliRunner().invoke(app, ["degrade", "three-models", "--load", "0.5"]).exit_code == 2


def test_a_study_of_a_fleet(tmp_path: Path) -> None:
    """Each point's row is what the command prints for that point: optimize's Lambda_max, size's cost."""
    import csv

    (tmp_path / "study.yaml").write_text(yaml.safe_dump({"scenario": "three-models", "command": "optimize",
                                                         "axes": {"link.bandwidth": ["50Gbps", "100Gbps"]}}))
    res = CliRunner().invoke(app, ["study", str(tmp_path / "study.yaml"), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader((tmp_path / "o.csv").open()))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    for r in rows:
        args = ["optimize", "three-models", "--set", f"link.bandwidth={r['link.bandwidth']}", "--format", "json"]
        want = json.loads(CliRunner().invoke(app, args).stdout)["best"]
        assert float(r["lambda_max_rps"]) == pytest.approx(want["lambda_max_rps"], rel=1e-9)
        assert r["binding"] == want["binding"]
    (tmp_path / "size.yaml").write_text(yaml.safe_dump({"scenario": "three-models", "command": "size",
                                                        "axes": {"sizing.demand": ["4rps"]}}))
    res = CliRunner().invoke(app, ["study", str(tmp_path / "size.yaml"), "-o", str(tmp_path / "s.csv")])
    assert res.exit_code == 0, res.output
    (row,) = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert float(row["cost_per_hour"]) == pytest.approx(_size_json(["three-models"])["cost"]["per_hour"], rel=1e-12)
    (tmp_path / "lat.yaml").write_text(yaml.safe_dump({"scenario": "three-models", "command": "latency",
                                                       "axes": {"link.bandwidth": ["100Gbps"]},
                                                       "options": {"load": 0.7}}))
    res = CliRunner().invoke(app, ["study", str(tmp_path / "lat.yaml"), "-o", str(tmp_path / "l.csv")])
    assert res.exit_code == 0, res.output
    (row,) = list(csv.DictReader((tmp_path / "l.csv").open()))
    want = json.loads(CliRunner().invoke(app, ["latency", "three-models", "--load", "0.7", "--format",
                                               "json"]).stdout)["systems"]["prfaas"]
    assert float(row["ttft_p90_s"]) == pytest.approx(want["ttft_p90_s"], rel=1e-9)


def test_report_of_a_fleet(tmp_path: Path) -> None:
    """One self-contained page: the decision holds optimize's and size's numbers, nothing is
    fetched, and the same inputs give the same bytes."""
    import re

    out = [tmp_path / "a.html", tmp_path / "b.html"]
    for o in out:
        res = CliRunner().invoke(app, ["report", "three-models", "-o", str(o)])
        assert res.exit_code == 0, res.output
    text = out[0].read_text()
    assert text.replace("a.html", "b.html") == out[1].read_text()
    assert not re.search(r"(src|href)=\"https?:", text)
    best = json.loads(CliRunner().invoke(app, ["optimize", "three-models", "--format", "json"]).stdout)["best"]
    assert f"{best['lambda_max_rps']:.3f} req/s in total, each model at its demand share" in text
    cost = _size_json(["three-models"])["cost"]["per_hour"]
    assert f"${cost:,.2f}/h for 4.000 req/s" in text
    for title in ("The decision", "The plan (optimize)", "TTFT (latency)", "What to buy (size)",
                  "When the link misbehaves (degrade)"):
        assert title in text
    res = CliRunner().invoke(app, ["report", "three-models", "-o", str(tmp_path / "c.html"), "--plan-at", "rate=p90"])
    assert res.exit_code == 2 and "--plan-at" in res.stderr


@pytest.mark.slow
def test_report_of_a_fleet_says_why_it_has_no_sizing(tmp_path: Path) -> None:
    """Without a sizing: section, or with one no fleet meets, the page's sizing section says why
    (as one model's report does) rather than vanishing or failing the page."""
    import yaml

    from prfaas_plan.api.fleet_report import NO_SIZING

    base = yaml.safe_load((Path(__file__).parent.parent / "prfaas_plan" / "catalog" / "scenarios" /
                           "three-models.yaml").read_text())
    dropped = {k: v for k, v in base.items() if k != "sizing"}
    unfit = base | {"sizing": base["sizing"] | {"local": base["sizing"]["local"] | {"max_instances": 2}}}
    for name, doc, want in (("dropped", dropped, NO_SIZING),
                            ("unfit", unfit, "is left out: no plan meets the constraints: local needs 10 instances")):
        path, out = tmp_path / f"{name}.yaml", tmp_path / f"{name}.html"
        path.write_text(yaml.safe_dump(doc))
        res = CliRunner().invoke(app, ["report", str(path), "-o", str(out)])
        assert res.exit_code == 0, res.output
        html = out.read_text()
        body = html[html.index('<section id="sizing"'):]
        body = body[:body.index("</section>")]
        assert "<table" not in body and want.replace("`", "") in body.replace("<code>", "").replace("</code>", ""), body


def test_size_a_fleet_under_ttft_slos() -> None:
    """With a TTFT SLO the fleet is sized with less headroom until every model meets it; `latency`
    on what it bought (the scenario with those instances and that link, at the demand) gives the
    same TTFT."""
    slo = ["--set", "models[1].slo={decode_tokens_per_s: 40, ttft: 6s}",
           "--set", "models[2].slo={decode_tokens_per_s: 40, ttft: 6s}"]
    d = _size_json(["three-models", *slo])
    assert d["headroom"] < d["asked_headroom"] == 0.8
    assert {t["model"] for t in d["ttft"]} == {"DeepSeek-V3", "Llama-3.1-70B"}
    assert all(t["ttft_s"] <= t["bound_s"] for t in d["ttft"])
    plain = _size_json(["three-models"])
    assert d["cost"]["per_hour"] > plain["cost"]["per_hour"]
    site = d["sites"]["local"]
    res = CliRunner().invoke(app, ["latency", "three-models", *slo, "--rate", str(d["demand_rps"]), "--format", "json",
                                   "--set", f"clusters.prfaas.instances={d['prefill']['instances']}",
                                   "--set", f"clusters.local.instances={site['instances']}",
                                   "--set", f"clusters.local.hardware={site['hardware']}",
                                   "--set", f"link.bandwidth={site['link_tier_gbps']}Gbps"])
    assert res.exit_code == 0, res.output
    entries = json.loads(res.stdout)["systems"]["prfaas"]["entries"]
    for t in d["ttft"]:
        assert entries[t["model"]]["ttft_p90_s"] == pytest.approx(t["ttft_s"], rel=1e-9)
    res = CliRunner().invoke(app, ["size", "three-models", "--set", "slo.ttft=1s"])
    assert res.exit_code == 1 and "the TTFT SLO is missed even at headroom" in res.stderr


def test_degrade_times_the_replanned_fleet() -> None:
    """Each level's TTFT is `latency` on the scenario with the link at that level, at the same rate."""
    d = json.loads(CliRunner().invoke(app, ["degrade", "three-models", "--levels", "50%", "--format", "json"]).stdout)
    half = d["links"]["prfaas->local"][1]
    res = CliRunner().invoke(app, ["latency", "three-models", "--set", "link.bandwidth=50Gbps", "--rate",
                                   repr(d["rate_rps"]), "--format", "json"])
    want = json.loads(res.stdout)["systems"]["prfaas"]["entries"]
    for label, e in half["ttft"]["entries"].items():
        assert e["ttft_p90_s"] == pytest.approx(want[label]["ttft_p90_s"], rel=1e-9)
    assert d["rate_rps"] == pytest.approx(0.7 * d["nominal"]["lambda_max_rps"], rel=1e-12)


def test_size_names_the_model_no_candidate_can_hold() -> None:
    """Kimi-K2 (974 GiB of weights) fits neither 8xH20 nor 8xH200 beside a request's KV: size
    names the model, its site and why, in one line, exit 1."""
    res = CliRunner().invoke(app, ["size", "three-models", "--set", "models[1].model=Kimi-K2-Instruct"])
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert "Kimi-K2-Instruct at local: no candidate meets its decode SLO" in line
    assert "8xH20 cannot hold Kimi-K2-Instruct: the weights (974 GiB)" in line
