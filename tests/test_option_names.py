"""Messages name the option the user gave, before any work (issue 26): a value with a unit the
option converts is taken (10GiB for --cache-gib, 100Gbps in a bandwidth list, 2rps for --rate),
another unit is refused saying which one the option takes; a site name under --set that the
scenario lacks names the known ones; a series too long to replay names the series and the limit."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.test_cli_errors import error_line

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parent / "fixtures"
M300 = FIXTURES / "mooncake_300.jsonl"
DIURNAL = FIXTURES / "bandwidth" / "diurnal.csv"


def run_json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_replay_load_0_names_load_before_any_work(monkeypatch):
    from prfaas_plan.api import replay

    def never(*a, **k):
        raise AssertionError("the threshold table was built before the options were checked")

    monkeypatch.setattr(replay, "table_for", never)
    t0 = time.perf_counter()
    assert error_line("replay", "--series", str(DIURNAL), "--load", "0") == \
        "error: --load: must be a finite, positive fraction of capacity, got 0"
    assert time.perf_counter() - t0 < 10  # was 13-19 s, naming --rate


def test_a_series_too_long_names_the_series_and_the_limit(tmp_path):
    f = tmp_path / "long.csv"
    f.write_text("time_s,bandwidth\n0,100Gbps\n1e12,20Gbps\n")
    line = error_line("replay", "--series", str(f))
    assert line.startswith(f"error: {f}: the series lasts 2e+12 s")
    assert "a run takes at most 10,000,000: give --duration <=" in line
    # with --duration the run is that long: its windows too (the change due at 1e12 s was 3.3e9 windows: out
    # of memory)
    d = run_json("replay", "--series", str(f), "--duration", "600", "--policies", "static")
    tl = d["policies"]["static"]["timeline"]
    assert tl["window_s"] == 300 and tl["start_s"] == [0, 300]  # 600 s: two windows


def test_degrade_levels_too_small_name_levels():
    line = error_line("degrade", "--levels", "5e-324")
    assert line.startswith("error: --levels: level 4.94066e-324 of prfaas->local's 100Gbps is ")
    assert "0 is the link down" in line


def test_bandwidths_take_shares_and_bandwidths_together():
    d = run_json("thresholds", "--bandwidths", "10%,100Gbps", "--loads", "1")
    assert d["bandwidths"] == ["10%", "100Gbps"] and d["bandwidths_gbps"] == [10.0, 100.0]
    same = run_json("thresholds", "--bandwidths", "10Gbps,100Gbps", "--loads", "1")
    assert d["sites"] == same["sites"]
    assert error_line("thresholds", "--bandwidths", "10%,10Gbps") == \
        "error: --bandwidths: 10% and 10Gbps are the same bandwidth on this link"
    assert error_line("thresholds", "two-regions", "--bandwidths", "10%,10Gbps").startswith(
        "error: --bandwidths: this scenario has 2 links; give every grid point as a share")
    assert "(each point a share of the nominal bandwidth, 50%, or a bandwidth, 10Gbps)" in \
        error_line("thresholds", "--bandwidths", "10%,5kg")


@pytest.mark.parametrize("gib", ["10GiB", "10737418240B", "10.73741824GB"])
def test_cache_gib_takes_a_size_in_any_unit(gib):
    a = run_json("trace", "stats", str(M300), "--cache-gib", "10", "--model", "DeepSeek-V3")
    b = run_json("trace", "stats", str(M300), "--cache-gib", gib, "--model", "DeepSeek-V3")
    assert a["prefix_reuse"]["caches"] == b["prefix_reuse"]["caches"]
    assert b["prefix_reuse"]["caches"][0]["capacity_blocks"] == 298  # 10 x 2^30 / (70,272 B x 512) = 298.4


def test_cache_gib_in_another_unit_says_which_it_takes():
    assert error_line("trace", "stats", str(M300), "--cache-gib", "10ms", "--model", "DeepSeek-V3") == \
        "error: --cache-gib: '10ms' is not in GiB: give a number of GiB or a size with its unit (e.g. 10GiB)"


@pytest.mark.parametrize(("given", "plain"), [(["--rate", "2rps"], ["--rate", "2"]),
                                              (["--rate", "120rpm"], ["--rate", "2"]),
                                              (["--load", "70%"], ["--load", "0.7"])])
def test_rate_and_load_take_their_units(given, plain):
    assert run_json("latency", *given) == run_json("latency", *plain)


def test_rate_in_another_unit_names_rate():
    assert error_line("latency", "--rate", "2kg") == \
        "error: --rate: '2kg' is not in rps: give a number of rps or a request rate with its unit (e.g. 2rps)"
    assert error_line("degrade", "--load", "5kg") == \
        "error: --load: '5kg' is not a fraction (0.5) or a percentage (50%)"


def test_a_site_name_typo_names_the_known_sites():
    assert error_line("optimize", "two-regions", "--set", "sites.prefil-east.hardware=H100") == (
        "error: --set sites.prefil-east.hardware: no site named 'prefil-east' (sites: prefill-east, region-a, "
        "region-b); a new site is given whole: --set 'sites.prefil-east={...}'")
    assert error_line("optimize", "--set", "sites.x.hardware=H100") == (
        "error: --set sites.x.hardware: the scenario gives clusters and link, no sites: set "
        "clusters.prfaas.hardware or clusters.local.hardware")
