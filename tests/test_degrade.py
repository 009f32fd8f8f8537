"""`degrade`: each link at fractions of its bandwidth and down, on the bundled scenarios."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan.api.degrade import degrade, parse_levels
from prfaas_plan.api.grid import homogeneous, homogeneous_splits
from prfaas_plan.api.optimize import optimize
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.cli import app
from prfaas_plan.core import latency as lat
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.render import WIDTH, to_json
from prfaas_plan.report.views_degrade import degrade_json

CATALOG = Catalog.default(())
SLO = ["slo.ttft=8s"]
runner = CliRunner()


@pytest.fixture(scope="module")
def case():
    return degrade(None, CATALOG, overrides=SLO)


@pytest.fixture(scope="module")
def regions():
    return degrade("two-regions", CATALOG, overrides=SLO)


def _spec(ref, overrides=()):
    return load_scenario(ref, CATALOG, overrides=[*SLO, *overrides])


def _level(lk, level):
    return next(lv for lv in lk.levels if lv.level == level)


@pytest.mark.slow
def test_levels_are_the_reference_then_the_default_ones(case, regions):
    for r in (case, regions):
        for lk in r.links.values():
            assert [lv.level for lv in lk.levels] == [1.0, 0.5, 0.1, 0.0]
    assert list(case.links) == ["prfaas->local"]
    assert list(regions.links) == ["prefill-east->region-a", "prefill-east->region-b"]
    assert case.rate_rps == 0.7 * case.nominal_lambda_max_rps and case.load == pytest.approx(0.7)


def test_link_down_is_the_best_local_only_split_of_the_site(case):
    sc = _spec(None)
    hom = homogeneous(site_scenario(sc, 0), sc.topology.sites[0].cluster, Method(sc.search.method)).point
    lk = case.links["prfaas->local"]
    down = _level(lk, 0.0).replanned
    assert down.lambda_max_rps == hom.lambda_max_rps == lk.failure.capacity_down_rps  # exactly
    assert (down.sites["local"].n_p, down.sites["local"].n_d) == (hom.n_p, hom.n_d)
    assert down.sites["local"].p_offload == 0 and down.sites["local"].threshold_tokens == sc.workload.lengths.hi
    assert lk.failure.survivable_load == hom.lambda_max_rps / case.nominal_lambda_max_rps
    assert down.lambda_max_rps == pytest.approx(1.4068, abs=1e-4)


@pytest.mark.slow
def test_a_region_down_keeps_the_other_region_and_the_whole_prefill_service(regions):
    sc = _spec("two-regions")
    m = Method(sc.search.method)
    for i, (name, lk) in enumerate(regions.links.items()):
        site = sc.topology.sites[i]
        hom = homogeneous(site_scenario(sc, i), site.cluster, m).point
        f = lk.failure
        assert f.capacity_down_rps == hom.lambda_max_rps
        down = _level(lk, 0.0).replanned
        assert down.sites[site.name].p_offload == 0 and down.n_prfaas == sc.topology.prefill.cluster.instances
        other = next(s for s in down.sites if s != site.name)
        assert down.sites[other].p_offload > 0  # the other region still offloads
        # the site uses no shared compute: its local-only bound or the other region binds
        assert down.lambda_max_rps <= hom.lambda_max_rps / site.demand_share * (1 + 1e-12)
        assert f.lambda_down_rps == down.lambda_max_rps < regions.nominal_lambda_max_rps, name


@pytest.mark.slow
@pytest.mark.parametrize(("ref", "key", "link"), [(None, "link.bandwidth", "prfaas->local"),
                                                  ("two-regions", "links[1].bandwidth", "prefill-east->region-b")])
def test_replanned_is_optimize_at_that_bandwidth(case, regions, ref, key, link):
    r = case if ref is None else regions
    lk = r.links[link]
    for level in (0.5, 0.1):
        gbps = level * lk.nominal_bandwidth_bytes_per_s * 8 / 1e9
        sc = _spec(ref, [f"{key}={gbps:g}Gbps"])
        best = optimize(sc, ttft_slo=False).result.methods[sc.search.method].best
        got = _level(lk, level).replanned
        assert got.lambda_max_rps == best.lambda_max_rps
        if ref is None:
            s = got.sites["local"]
            b = best.sites[0]
            assert (s.threshold_tokens, s.n_p, s.n_d, got.n_prfaas) == (b.threshold_tokens, b.n_p, b.n_d,
                                                                        best.n_prfaas)
        else:
            assert got.n_prfaas == best.n_prfaas
            for sp in best.sites:
                s = got.sites[sp.site]
                assert (s.threshold_tokens, s.n_p, s.n_d) == (sp.threshold_tokens, sp.n_p, sp.n_d)
    # the thin link binds at 10% (t moves up), not at 50%
    assert "link" in _level(lk, 0.1).replanned.binding and "link" not in _level(lk, 0.5).replanned.binding


def test_static_is_never_above_replanned_and_never_rises_as_the_level_falls(case, regions):
    for r in (case, regions):
        for lk in r.links.values():
            static = [lv.static.lambda_max_rps for lv in lk.levels]
            assert static[0] == lk.levels[0].replanned.lambda_max_rps == r.nominal_lambda_max_rps
            assert all(a >= b for a, b in pairwise(static))
            assert all(lv.static.lambda_max_rps <= lv.replanned.lambda_max_rps * (1 + 1e-12) for lv in lk.levels)
            assert static[-1] == 0 and "link" in lk.levels[-1].static.binding  # the held routing uses the dead link
    ten = _level(case.links["prfaas->local"], 0.1)
    assert ten.static.lambda_max_rps == pytest.approx(2.6506, abs=1e-4)
    assert ten.replanned.lambda_max_rps == pytest.approx(3.0637, abs=1e-4)


def test_extra_instances_are_the_fewest_that_serve_the_rate(case, regions):
    checked = 0
    for ref, r in ((None, case), ("two-regions", regions)):
        sc = _spec(ref)
        m = Method(sc.search.method)
        for i, lk in enumerate(r.links.values()):
            f = lk.failure
            si, cluster = site_scenario(sc, i), sc.topology.sites[i].cluster
            assert f.rate_rps == pytest.approx(sc.topology.sites[i].demand_share * r.rate_rps)

            def best(n, si=si, cluster=cluster, m=m):
                return max(op.lambda_max_rps for op in homogeneous_splits(si, replace(cluster, instances=n), m)[1])

            assert f.instances_needed == f.instances + f.extra_instances
            assert best(f.instances_needed) >= f.rate_rps
            if f.extra_instances > 0:
                assert best(f.instances_needed - 1) < f.rate_rps
                checked += 1
    assert checked == 3
    assert case.links["prfaas->local"].failure.extra_instances == 5  # 8 -> 13 at 70% of 3.300 req/s


def test_slo_attainment_is_a_fraction_and_falls_with_the_link(case, regions):
    for r in (case, regions):
        for lk in r.links.values():
            met = [lv.slo_attainment[lk.site] for lv in lk.levels]
            assert all(0.0 <= x <= 1.0 for lv in lk.levels for x in lv.slo_attainment.values())
            assert all(a >= b - 1e-12 for a, b in pairwise(met)), (lk.link, met)
            assert met[0] > 0.98 and met[-1] == 0.0  # at 70% load; down, the site's local prefill diverges
    assert degrade(None, CATALOG, levels=(0.5,)).links["prfaas->local"].levels[0].slo_attainment is None


def test_ttft_is_null_with_the_unstable_stage_above_capacity(case, regions):
    down = _level(case.links["prfaas->local"], 0.0).ttft["local"]
    assert down.ttft_mean_s is None and down.ttft_p99_s is None and "local prefill" in down.unstable
    ref = case.links["prfaas->local"].levels[0].ttft["local"]
    assert ref.unstable is None and 0 < ref.ttft_p50_s < ref.ttft_p90_s < ref.ttft_p99_s
    # region-b's link down: region-b diverges, region-a (which takes the whole prefill service) does not
    b_down = _level(regions.links["prefill-east->region-b"], 0.0).ttft
    assert b_down["region-b"].unstable is not None and b_down["region-a"].unstable is None
    text = to_json(degrade_json(regions))  # refuses NaN and inf
    assert "NaN" not in text and "Infinity" not in text


def test_mixture_tail_is_what_mixture_quantile_inverts():
    rng = np.random.default_rng(1)
    parts = [(0.4, 0.3, 0.5, rng.uniform(1, 3, (50, 1)), np.ones(1)),
             (0.6, 0.0, 0.0, rng.uniform(0.5, 2, (50, 2)), np.array([0.7, 0.3]))]
    for q in (0.5, 0.9, 0.99):  # the quantile is where the tail first drops to 1 - q (the laws have atoms)
        x = lat.mixture_quantile(q, parts)
        assert lat.mixture_tail(x, parts) <= 1 - q + 1e-9 <= lat.mixture_tail(x * (1 - 1e-6), parts) + 2e-9
    assert lat.mixture_tail(0.0, parts) == pytest.approx(1.0) and lat.mixture_tail(1e6, parts) == 0.0


@pytest.mark.parametrize("text", ["150%", "-10%", "1.5", "abc", "50%,,0", "nan"])
def test_levels_outside_zero_one_are_refused(text):
    with pytest.raises(SpecError) as err:
        parse_levels(text)
    assert err.value.field == "--levels"


def test_levels_parse_as_fractions_highest_first():
    assert parse_levels("50%,10%,0") == (0.5, 0.1, 0.0)
    assert parse_levels("0, 0.25,100%,25%") == (1.0, 0.25, 0.0)


@pytest.mark.slow
def test_cli_formats():
    res = runner.invoke(app, ["degrade", "--levels", "50%,0", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert set(d) >= {"scenario", "rate_rps", "load", "links"}
    lk = d["links"]["prfaas->local"]
    assert [lv["level"] for lv in lk["levels"]] == [1.0, 0.5, 0.0]
    assert set(lk["levels"][0]) >= {"level", "bandwidth_gbps", "static", "replanned", "ttft", "slo_attainment"}
    assert set(lk["levels"][0]["replanned"]) >= {"lambda_max_rps", "binding", "sites", "n_prfaas"}
    assert lk["levels"][-1]["ttft"]["local"]["ttft_p90_s"] is None and lk["levels"][-1]["ttft"]["local"]["unstable"]
    assert set(lk["failure"]) >= {"site", "capacity_down_rps", "survivable_load", "extra_instances",
                                  "instances_needed"}
    res = runner.invoke(app, ["degrade", "two-regions", "--rate", "4", "--levels", "0.1", "--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert len(lines) == 1 + 2 * 2  # a header, then (link, level) for 2 links x (100%, 10%)
    assert lines[0].startswith("link,site,level,bandwidth_gbps") and "region-b.slo_attainment" in lines[0]
    res = runner.invoke(app, ["degrade", "two-regions", "--load", "0.5", "--set", "slo.ttft=8s"])
    assert res.exit_code == 0, res.output
    assert max(len(ln) for ln in res.stdout.splitlines()) <= WIDTH
    assert "unstable: local prefill" in res.stdout and "needs +" in res.stdout
    assert "TTFT <= 8 s" in res.stdout


@pytest.mark.parametrize(("args", "option"), [(["--levels", "150%"], "--levels"), (["--levels", "x"], "--levels"),
                                              (["--rate", "0"], "--rate"), (["--rate", "-2"], "--rate"),
                                              (["--load", "0"], "--load"), (["--load", "-0.5"], "--load")])
def test_cli_bad_input_is_one_line_exit_2(args, option):
    res = runner.invoke(app, ["degrade", *args])
    assert res.exit_code == 2
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {option}:"), err
