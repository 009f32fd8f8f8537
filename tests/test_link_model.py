"""The link as it is: handoff, TCP streams (window / RTT or a per-stream cap), a share cap; the same
model in throughput, the analytic latency and the simulator."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.api.latency import site_latency
from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.run import simulate
from prfaas_plan.specs.topology import LinkSpec
from tests.test_cli_errors import error_line

runner = CliRunner()
GBPS = units.GBPS


def case(*over: str):
    return load_scenario(None, Catalog.default(), overrides=list(over))


def best(*over: str) -> dict:
    res = runner.invoke(app, ["optimize", *[a for o in over for a in ("--set", o)], "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["best"]


def test_usable_bandwidth_by_hand():
    line = LinkSpec(bandwidth_bytes_per_s=100 * GBPS, usable_fraction=0.9)
    assert line.usable_bytes_per_s == 90 * GBPS and line.limited_by == "line"
    capped = LinkSpec(bandwidth_bytes_per_s=100 * GBPS, share_cap=0.2)
    assert capped.usable_bytes_per_s == pytest.approx(20 * GBPS, rel=1e-12)
    # one stream with a 4 MiB window over 30 ms: 4 x 2^20 / 0.03 = 139.8 MB/s = 1.118 Gbps
    one = LinkSpec(bandwidth_bytes_per_s=100 * GBPS, rtt_s=0.03, max_window_bytes=4 * 2**20)
    assert one.usable_bytes_per_s == pytest.approx(4 * 2**20 / 0.03, rel=1e-12) and one.limited_by == "streams"
    many = LinkSpec(bandwidth_bytes_per_s=100 * GBPS, rtt_s=0.03, max_window_bytes=4 * 2**20, connections=64)
    assert many.usable_bytes_per_s == pytest.approx(min(100 * GBPS, 64 * 4 * 2**20 / 0.03), rel=1e-12)
    assert many.limited_by == "streams"  # 64 x 1.118 Gbps = 71.6 Gbps, below the 100 Gbps line
    cap = LinkSpec(bandwidth_bytes_per_s=100 * GBPS, stream_bytes_per_s_cap=2 * GBPS, connections=8)
    assert cap.usable_bytes_per_s == pytest.approx(16 * GBPS, rel=1e-12)
    # a window without RTT limits nothing (no round trip to wait for)
    assert LinkSpec(bandwidth_bytes_per_s=GBPS, max_window_bytes=1.0).usable_bytes_per_s == GBPS


def test_the_defaults_keep_todays_numbers():
    assert best() == best("link.handoff=0s", "link.share_cap=1", "link.connections=4")


def test_share_cap_is_the_line_times_the_cap_in_optimize():
    assert best("link.bandwidth=100Gbps", "link.share_cap=0.1")["lambda_max_rps"] == pytest.approx(
        best("link.bandwidth=10Gbps")["lambda_max_rps"], rel=1e-12)


def test_one_connection_on_a_long_rtt_link_binds_the_link():
    # 2 MiB window over 60 ms: 34.95 MB/s = 0.28 Gbps of a 100 Gbps line
    b = best("link.rtt=60ms", "link.max_window=2MiB", "link.connections=1")
    assert b["binding"] == "link"
    assert b["lambda_max_rps"] == pytest.approx(best("link.bandwidth=0.2796202667Gbps")["lambda_max_rps"], rel=1e-6)


def _prfaas(sc):
    return systems(sc, which=(PRFAAS,))[PRFAAS]


def test_handoff_adds_its_time_to_offloaded_requests_only():
    plain, slow = case(), case("link.handoff=200ms")
    a, b = site_latency(plain, _prfaas(plain), 1e-6), site_latency(slow, _prfaas(slow), 1e-6)
    pa, pb = ({p.name: p for p in r.paths} for r in (a, b))
    assert pb["prfaas"].zero_load_ttft_mean_s - pa["prfaas"].zero_load_ttft_mean_s == pytest.approx(0.2, rel=0.01)
    assert pb["local"].zero_load_ttft_mean_s == pa["local"].zero_load_ttft_mean_s
    assert pb["local"].ttft_mean_s == pytest.approx(pa["local"].ttft_mean_s, rel=1e-9)


@pytest.mark.validation
@pytest.mark.parametrize("over", [("link.handoff=200ms",),
                                  ("link.rtt=80ms", "link.max_window=16MiB", "link.connections=1")])
def test_analytic_and_simulated_ttft_agree(over):
    sc = case(*over)
    c = _prfaas(sc)
    rate = 0.7 * c.capacity_rps
    sim = simulate(sc, c, rate_rps=rate, n_requests=20_000, rng=np.random.default_rng(5))
    ana = site_latency(sc, c, rate)
    assert ana.ttft_mean_s == pytest.approx(sim.ttft.mean, rel=0.15)
    assert ana.ttft_p90_s == pytest.approx(sim.ttft.quantile(0.9), rel=0.15)
    paths = {p.name: p for p in ana.paths}
    assert paths["prfaas"].ttft_mean_s == pytest.approx(sim.ttft_paths["prfaas"].mean, rel=0.15)


def test_the_simulator_pays_the_handoff_once_per_transfer():
    sc = case("link.handoff=200ms", "link.rtt=10ms")
    c = _prfaas(sc)
    res = simulate(sc, c, rate_rps=0.5, n_requests=200, rng=np.random.default_rng(2), records=True)
    gaps = [r["decode_started_at"] - r["kv_transfer_completed_at"] for r in res.records if r["path"] == "prfaas"]
    assert gaps and all(g == pytest.approx(0.21, abs=1e-9) or g > 0.21 for g in gaps)  # more only when queued
    assert min(gaps) == pytest.approx(0.21, abs=1e-9)


@pytest.mark.parametrize(("over", "field"), [
    ("link.handoff=-1ms", "link.handoff"),
    ("link.connections=0", "link.connections"),
    ("link.share_cap=0", "link.share_cap"),
    ("link.share_cap=1.5", "link.share_cap"),
    ("link.max_window=0", "link.max_window"),
    ("link.max_window=4Mb", "link.max_window"),  # bits are not a window size
    ("links[0].connections=0", "links[0].connections"),
])
def test_bad_link_values_are_one_line(over, field):
    scenario = "two-regions" if over.startswith("links") else "paper-case-study"
    line = error_line("optimize", scenario, "--set", over)
    assert field in line, line
