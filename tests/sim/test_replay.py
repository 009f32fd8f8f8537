"""A bandwidth series replayed on the link, and the router's threshold policies (sim.replay)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.replay import BandwidthSeries, TableLookup
from prfaas_plan.sim.run import simulate
from prfaas_plan.sim.stations import SharedLink


def test_a_transfer_waits_while_the_link_is_down():
    eng = Engine()
    done = {}
    link = SharedLink(eng, 1.0, lambda j: done.setdefault(j, eng.now))
    link.submit("a", 10.0)
    eng.schedule_at(5.0, lambda: link.set_bandwidth(0.0))
    eng.schedule_at(8.0, lambda: link.set_bandwidth(2.0))
    eng.run()
    assert done["a"] == pytest.approx(8.0 + 5.0 / 2.0)  # 5 bytes by t=5, none 5..8, 5 more at 2 B/s
    assert link.bytes_carried == pytest.approx(10.0)
    assert link.busy_s == pytest.approx(10.5)  # waiting on a dead link counts as busy


def test_table_lookup_by_hand():
    t = TableLookup(bandwidths=(1e9, 5e9), rates=((1.0, 2.0), (1.0, 3.0)), thresholds=((math.inf, 40e3), (20e3, 10e3)))
    assert t.threshold(0.0, 1.0) == math.inf  # down: nothing offloaded
    assert t.threshold(0.5e9, 0.5) == math.inf  # below the grid: its lowest row
    assert t.threshold(2e9, 1.5) == 40e3  # row 1 Gbps, the first entry serving 1.5 req/s
    assert t.threshold(5e9, 0.2) == 20e3 and t.threshold(9e9, 2.5) == 10e3 and t.threshold(9e9, 99.0) == 10e3


@pytest.fixture(scope="module")
def case():
    sc = load_scenario(None, Catalog.default(), overrides=["slo.ttft=4s"])
    return sc, systems(sc, which=(PRFAAS,))[PRFAAS]


def _run(case, series, policy="static", seed=3):
    sc, c = case
    return simulate(sc, c, rate_rps=0.6 * c.capacity_rps, duration_s=3000, rng=np.random.default_rng(seed),
                    replay=None if series is None else {"series": series, "policy": policy, "window_s": 100.0})


def test_a_constant_series_is_the_plain_link(case):
    bw = case[1].link_bytes_per_s
    flat = BandwidthSeries(times_s=np.array([0.0, 1000.0]), line_bytes_per_s=np.array([bw, bw]),
                           usable_bytes_per_s=np.array([bw, bw]))
    a, b = _run(case, None), _run(case, flat)
    assert a.ttft.mean == b.ttft.mean and a.ttft.quantile(0.9) == b.ttft.quantile(0.9)
    tl = b.timeline
    assert len(tl.starts_s) == 30 and tl.arrived.sum() == b.requests
    assert np.nanmax(tl.link_utilization) < 0.3 and np.all(tl.capacity_bytes_per_s == bw)


def test_a_drop_shows_in_the_timeline_and_passes(case):
    bw = case[1].link_bytes_per_s
    drop = BandwidthSeries(times_s=np.array([0.0, 1000.0, 1300.0]), line_bytes_per_s=np.array([bw, 0.05 * bw, bw]),
                           usable_bytes_per_s=np.array([bw, 0.05 * bw, bw]))
    r = _run(case, drop)
    tl = r.timeline
    before, during = tl.ttft_p90_s[:9], tl.ttft_p90_s[10:14]
    assert np.nanmax(before) < 6 and np.nanmax(during) > 3 * np.nanmax(before)
    assert np.nanmin(tl.attainment[10:14]) < np.nanmin(tl.attainment[:9])
    assert tl.capacity_bytes_per_s[11] == pytest.approx(0.05 * bw)
    assert np.nanmax(tl.link_utilization[10:13]) > 0.9  # the thin link runs full
    assert tl.ttft_p90_s[-1] < 2 * np.nanmax(before)  # and the queue drains once it is back


def test_the_table_policy_routes_by_the_current_row(case):
    from prfaas_plan.api.replay import replay, series_of

    sc, c = case
    bw = sc.link.bandwidth_bytes_per_s
    s = series_of(sc, [0.0, 1000.0, 2000.0], [bw, 0.1 * bw, bw])
    lk = TableLookup(bandwidths=(0.05 * bw, 0.5 * bw), rates=((99.0,), (99.0,)), thresholds=((60e3,), (15e3,)))
    r = replay(sc, s, load=0.5, duration_s=3000, policies=("static", "table"), table=lk, window_s=500.0)
    static, table = (run.result.timeline for run in r.runs)
    assert np.allclose(static.threshold_tokens, c.threshold_tokens)
    assert np.allclose(table.threshold_tokens, [15e3, 15e3, 60e3, 60e3, 15e3, 15e3])
    assert table.offloaded[2] < table.offloaded[0]  # fewer requests cross the thin link
    assert r.runs[0].attainment is not None and 0 <= r.runs[0].attainment <= 1


@pytest.mark.slow
def test_replay_cli(tmp_path):
    import json

    from typer.testing import CliRunner

    from prfaas_plan.cli import app
    from tests.conftest import FIXTURES
    from tests.test_cli_errors import error_line

    series = str(FIXTURES / "bandwidth" / "diurnal.csv")
    res = CliRunner().invoke(app, ["replay", "--series", series, "--duration", "2h", "--policies", "static,rule",
                                   "--set", "slo.ttft=8s", "--format", "json", "--plot", str(tmp_path / "r.png")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out["policies"]) == {"static", "rule"} and out["series"]["points"] == 1440
    for p in out["policies"].values():
        assert 0 <= p["slo_attainment"] <= 1 and len(p["timeline"]["start_s"]) == 24
    assert (tmp_path / "r.png").stat().st_size > 0
    assert "--policies" in error_line("replay", "--series", series, "--policies", "static,nope")
    assert "--series" in error_line("replay")
    assert "several" in error_line("replay", "two-regions", "--series", series)
