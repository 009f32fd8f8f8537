"""Analytic TTFT against textbook queueing results, and the case study's latency claims."""

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan.api.latency import latency
from prfaas_plan.cli import app
from prfaas_plan.core import latency as lat
from prfaas_plan.core.lengths import Fixed, Gamma
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario


def test_mm1_sojourn_is_exponential():
    # L ~ Exp (Gamma shape 1), T(L) = L / 1000 s: service Exp(mu = 1); lambda = 0.5.
    # M/M/1 sojourn time is Exp(mu - lambda): mean 2 s, quantile q at -ln(1 - q) / 0.5.
    dist = Gamma(shape=1.0, scale=1000.0, lo=1e-6)
    nodes = lat.Nodes.of(dist, 0.0, above=True, n=20000).lengths
    path = lat.path_latency("x", share=1.0, rate_rps=0.5, servers=1, lengths=nodes, t_prefill=lambda l: l / 1000)
    assert path.wait_mean_s == pytest.approx(1.0, rel=2e-3)  # rho / (mu - lambda)
    assert path.ttft_mean_s == pytest.approx(2.0, rel=2e-3)
    for q, value in path.ttft_quantiles_s.items():
        assert value == pytest.approx(-math.log(1 - q) / 0.5, rel=1e-2)


def test_md1_mean_wait_is_pollaczek_khinchine():
    # fixed length: deterministic service 1 s; lambda 0.7: Wq = rho / (2 mu (1 - rho)) = 1.1667 s
    nodes = lat.Nodes.of(Fixed(value=1000.0), 0.0, above=True).lengths
    path = lat.path_latency("x", share=1.0, rate_rps=0.7, servers=1, lengths=nodes, t_prefill=lambda l: l / 1000)
    assert path.wait_mean_s == pytest.approx(0.7 / (2 * 0.3), rel=1e-9)
    assert path.ttft_mean_s == pytest.approx(1 + 0.7 / 0.6, rel=1e-9)


def test_mmc_mean_wait_is_erlang_c():
    # M/M/2, lambda 1.5, mu 1: C = 0.642857, Wq = C / (c mu - lambda) = 1.2857 s
    dist = Gamma(shape=1.0, scale=1000.0, lo=1e-6)
    nodes = lat.Nodes.of(dist, 0.0, above=True, n=20000).lengths
    path = lat.path_latency("x", share=1.0, rate_rps=1.5, servers=2, lengths=nodes, t_prefill=lambda l: l / 1000)
    assert path.p_wait == pytest.approx(0.642857, rel=5e-3)
    assert path.wait_mean_s == pytest.approx(1.285714, rel=5e-3)


def test_link_processor_sharing_and_pipelining():
    nodes = lat.Nodes.of(Fixed(value=1000.0), 0.0, above=True).lengths
    kw = {"share": 1.0, "rate_rps": 1e-9, "servers": 1, "lengths": nodes, "t_prefill": lambda l: l / 1000 + 0 * l,
          "link_bytes_per_s": 1e9, "kv_bytes": lambda l: 2e9 + 0 * l, "n_layers": 10, "rtt_s": 0.01}
    # 2 s transfer alone, link 50% busy: 4 s; without pipelining all of it is exposed
    off = lat.path_latency("x", link_rho=0.5, pipelining=False, **kw)
    assert off.transfer_mean_s == pytest.approx(4.0 + 0.01)
    # pipelined behind a 1 s prefill: 4 - 1 x 9/10 = 3.1 s exposed
    on = lat.path_latency("x", link_rho=0.5, pipelining=True, **kw)
    assert on.transfer_mean_s == pytest.approx(3.1 + 0.01)
    # at zero load: 1 s prefill + (2 - 0.9) s exposed + RTT
    assert on.zero_load_ttft_mean_s == pytest.approx(1 + 1.1 + 0.01)


@pytest.fixture(scope="module")
def case_study():
    return load_scenario(None, Catalog.default())


@pytest.mark.paper
def test_prfaas_cuts_mean_and_p90_ttft(case_study):
    # docs/model.md#the-case-study: PrfaaS-PD cuts mean TTFT by 50% and P90 by 64% against homogeneous PD
    r = latency(case_study, load=0.7)
    pf, hom = r.systems["prfaas"], r.systems["homogeneous"]
    mean_cut = 1 - pf.ttft_mean_s / hom.ttft_mean_s
    p90_cut = 1 - pf.ttft_p90_s / hom.ttft_p90_s
    # the model gives 52.9% and 64.6% (analytic, deterministic)
    assert mean_cut == pytest.approx(0.50, abs=0.05)
    assert p90_cut == pytest.approx(0.64, abs=0.02)


def test_above_capacity_names_the_unstable_stage(case_study):
    r = latency(case_study, load=1.2)
    hom = r.at_site("local")["homogeneous"]
    assert not hom.stable and "local prefill" in hom.unstable_stages
    assert hom.ttft_mean_s is None
    assert r.systems["prfaas"].stable


def test_ttft_grows_with_load(case_study):
    means = [latency(case_study, load=x, which=("prfaas",)).systems["prfaas"].ttft_mean_s
             for x in (0.2, 0.5, 0.8, 0.95)]
    assert np.all(np.diff(means) > 0)


runner = CliRunner()


@pytest.mark.parametrize("args", [["--rate", "-1"], ["--load", "-0.5"], ["--rate", "1", "--load", "0.5"], []])
def test_latency_bad_input_exit_2(args):
    res = runner.invoke(app, ["latency", *args])
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1


def test_latency_over_capacity_exit_0_json():
    import json

    res = runner.invoke(app, ["latency", "--load", "1.5", "--format", "json"])
    assert res.exit_code == 0
    d = json.loads(res.stdout)
    for key in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_s", "per_path", "systems"):
        assert key in d
    assert set(d["systems"]) == {"prfaas", "homogeneous", "naive_heterogeneous"}
    assert d["systems"]["homogeneous"]["unstable_stages"]


def test_a_stage_at_capacity_within_round_off_is_unstable():
    assert lat.Stage(name="x", utilization=0.99999964).stable is False  # latency --load 1.0 called this stable
    assert lat.Stage(name="x", utilization=1.0).stable is False
    assert lat.Stage(name="x", utilization=0.9999).stable is True


def test_load_one_names_the_binding_stage_of_each_system_at_capacity():
    sc = load_scenario(None, Catalog.default())
    r = latency(sc, load=1.0)
    assert r.sites == ("local",) and not r.systems["homogeneous"].stable
    hom = r.at_site("local")["homogeneous"]  # the smallest capacity: exactly at it
    assert hom.load == pytest.approx(1.0, rel=1e-12)
    assert hom.stable is False and hom.unstable_stages == ("local prefill",)  # bound by pd-prefill
    assert hom.ttft_mean_s is None
    # the others are below their capacity and keep finite numbers
    for name in ("prfaas", "naive_heterogeneous"):
        s = r.systems[name]
        assert s.load < 0.9 and s.stable and math.isfinite(s.ttft_mean_s)


@pytest.mark.parametrize("args", [["--load", "inf"], ["--rate", "inf"], ["--load", "nan"], ["--rate", "-inf"]])
def test_cli_infinite_rate_or_load_refused(args):
    res = CliRunner().invoke(app, ["latency", *args])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and args[0] in res.stderr


def test_a_system_with_no_capacity_is_infeasible_not_divided_by():
    from dataclasses import replace

    from prfaas_plan.api.latency import resolve_rate
    from prfaas_plan.api.systems import systems
    from prfaas_plan.errors import InfeasibleError

    configs = systems(load_scenario(None, Catalog.default()))
    configs["naive_heterogeneous"] = replace(configs["naive_heterogeneous"], capacity_rps=0.0,
                                             capacity_binding="pd-prefill")
    with pytest.raises(InfeasibleError, match="naive_heterogeneous serves no load: bound by pd-prefill"):
        resolve_rate(configs, 1.0, None)
