"""Sweeps patch the loaded spec (io.patch) instead of reloading the scenario per point.

Held: for the bundled scenarios, a trace and hand-made topologies, the patched sweep's result is
the per-point reload's exactly (timings aside), loading the scenario once where the key is
patched; a value the loader refuses mid-sweep is its own one-line error naming the key; keys a
patch does not prove (a demand share, the input distribution) reload and still agree; the
two views of a patched spec (sc.link / sc.local / sc.prfaas and the topology) stay one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prfaas_plan.api import sweep as api_sweep
from prfaas_plan.errors import SpecError
from prfaas_plan.io import patch
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.sweep_json import sweep_json
from tests.conftest import FIXTURES, ROOT

CATALOG = Catalog.default(())
TRACE = str(FIXTURES / "traces" / "mooncake_synthetic_trace.jsonl")


def _timeless(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _timeless(v) for k, v in o.items() if not k.endswith("search_s")}
    if isinstance(o, list):
        return [_timeless(v) for v in o]
    return o


def _outcome(run: Any, ref: str | None, overrides: list[str], **kw: Any) -> tuple[str, str]:
    """The sweep as JSON, or the error it raises (its type and one-line text)."""
    try:
        return "ok", json.dumps(_timeless(sweep_json(run(ref, CATALOG, overrides=overrides, **kw))), sort_keys=True)
    except Exception as exc:  # any kind: the patched sweep must fail as the reloaded one does
        return type(exc).__name__, str(exc)


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The overrides of every load_scenario the sweep makes."""
    calls: list[list[str]] = []

    def counted(*args: Any, **kw: Any):
        calls.append(list(kw.get("overrides") or []))
        return load_scenario(*args, **kw)

    monkeypatch.setattr(api_sweep, "load_scenario", counted)
    return calls


def _same(monkeypatch: pytest.MonkeyPatch, ref: str | None, overrides: list[str], **kw: Any) -> tuple[str, int]:
    """The patched sweep equals the reloaded one: (what it gave, how often it loaded the scenario)."""
    reloaded = _outcome(api_sweep.sweep, ref, overrides, reload=True, **kw)
    calls = _loads(monkeypatch)
    patched = _outcome(api_sweep.sweep, ref, overrides, **kw)
    assert patched == reloaded
    return patched[0], len(calls)


PATCHED, RELOADED, REFUSED = ("ok", 1), "reloaded", "refused"


def _expect(got: tuple[str, int], expect: Any) -> None:
    if expect == RELOADED:
        assert got[0] == "ok" and got[1] > 1, got
    elif expect == REFUSED:
        assert got[0] == "SpecError", got
    else:
        assert got == expect, got


BUNDLED = [
    ("paper-case-study", ["link.bandwidth=1Gbps..100Gbps:8"], True, PATCHED),
    ("paper-case-study", ["clusters.prfaas.instances=1..8:8"], False, PATCHED),
    ("paper-case-study", ["clusters.local.instances=2..16:8"], False, PATCHED),
    ("paper-case-study", ["slo.decode_tokens_per_s=20..60:3"], False, PATCHED),
    ("paper-case-study", ["link.usable_fraction=0.1..1:4", "link.rtt=5ms"], False, PATCHED),
    ("paper-case-study", ["decode.bs_max=5..40:8"], False, PATCHED),
    ("paper-case-study", ["decode.t_decode=10ms..50ms:3"], False, PATCHED),
    ("paper-case-study", ["workload.output_tokens=256..4096:4"], False, PATCHED),
    ("paper-case-study", ["slo.ttft=5s..30s:3"], False, PATCHED),
    ("paper-case-study", ["workload.output_tokens=1..1e9:2"], False, REFUSED),  # beyond the context: the loader's
    ("paper-case-study", ["workload.output_tokens=0.25..1:2"], False, REFUSED),  # below 1 token
    ("paper-case-study", ["links[1].bandwidth=2Gbps..8Gbps:4"], False, REFUSED),  # no links: the loader's error
    ("two-regions", ["link.bandwidth=1Gbps..100Gbps:8"], True, REFUSED),  # the two-cluster key: the loader's error
    ("two-regions", ["clusters.prfaas.instances=1..8:8"], False, REFUSED),
    ("two-regions", ["links[1].bandwidth=2Gbps..8Gbps:4"], False, PATCHED),
    ("two-regions", ["links[0].rtt=0ms..50ms:3"], False, PATCHED),
    ("two-regions", ["slo.decode_tokens_per_s=20..60:3"], False, PATCHED),
    ("two-regions", ["sites.region-a.instances=2..12:6"], False, PATCHED),
    ("two-regions", ["sites.prefill-east.instances=1..9:5"], False, PATCHED),
    ("two-regions", ["workload.output_tokens=256..4096:3"], False, RELOADED),  # region-b's own workload
    ("qwen35-b200-h200", ["link.bandwidth=1Gbps..100Gbps:8"], True, PATCHED),
    ("qwen35-b200-h200", ["clusters.prfaas.instances=1..8:8"], False, PATCHED),
    ("qwen35-b200-h200", ["links[1].bandwidth=2Gbps..8Gbps:4"], False, REFUSED),
    ("qwen35-b200-h200", ["slo.decode_tokens_per_s=20..60:3"], False, PATCHED),
    ("qwen35-b200-h200", ["decode.bs_max=8..64:8"], False, PATCHED),  # derived decode: checked, then dropped
]


@pytest.mark.slow
@pytest.mark.parametrize(("ref", "overrides", "log", "expect"), BUNDLED,
                         ids=[f"{r}-{o[0].partition('=')[0]}" for r, o, _, _ in BUNDLED])
def test_patched_sweeps_are_the_reloaded_ones(monkeypatch, ref, overrides, log, expect):
    _expect(_same(monkeypatch, ref, overrides, log=log), expect)


@pytest.mark.slow
def test_a_trace_is_replayed_once(monkeypatch):
    for overrides, method in ((["link.bandwidth=1Gbps..100Gbps:6"], None),
                              (["workload.output_tokens=64..1024:3"], None),
                              (["clusters.prfaas.instances=2..6:3", "workload.input.cache_capacity_gib=64"], "exact")):
        assert _same(monkeypatch, None, overrides, trace=TRACE, method=method) == PATCHED


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [
    ["clusters.local.instances=4..0:5"],  # 1 and 0 instances: no decode instance is left
    ["clusters.prfaas.instances=4..0:5"],  # 0: no PrfaaS instance
    ["clusters.prfaas.instances=9000..11000:3"],  # above MAX_INSTANCES
    ["clusters.prfaas.instances=1..8:5"],  # 2.75 instances
    ["link.usable_fraction=0.5..1.5:3"],
    ["link.bandwidth=10..-10:3"],
    ["link.rtt=10ms..-10ms:3"],
    ["slo.decode_tokens_per_s=20..-20:3"],
    ["decode.bs_max=20..0:3"],
])
def test_a_refused_value_mid_sweep_is_the_loaders_one_line_error(monkeypatch, overrides):
    _expect(_same(monkeypatch, None, overrides), REFUSED)
    with pytest.raises(SpecError) as err:
        api_sweep.sweep(None, CATALOG, overrides=overrides)
    key = overrides[0].partition("=")[0]
    assert "\n" not in str(err.value) and err.value.field == f"--set {key}"


@pytest.mark.parametrize("overrides", [["workload.input.mu=9..10.5:3"], ["search.top=1..3:3"],
                                       ["clusters.prfaas.gpus_per_instance=4..8:2"]])
def test_other_keys_reload_and_agree(monkeypatch, overrides):
    _expect(_same(monkeypatch, None, overrides), RELOADED)


def _scenario(tmp_path: Path, edit: Any) -> str:
    raw = yaml.safe_load((ROOT / "scenarios" / "two-regions.yaml").read_text())
    edit(raw)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


def _one_site(raw: dict) -> None:
    """two-regions with region-b dropped: one PD site, its homogeneous baseline derived."""
    del raw["sites"]["region-b"]
    del raw["sites"]["region-a"]["demand_share"]
    raw["links"] = raw["links"][:1]


def test_a_derived_homogeneous_baseline_follows_the_instances(monkeypatch, tmp_path):
    path = _scenario(tmp_path, _one_site)
    for ranged in ("sites.prefill-east.instances=1..9:5", "sites.region-a.instances=2..14:7"):
        assert _same(monkeypatch, path, [ranged]) == PATCHED


def test_a_given_homogeneous_baseline_stays(monkeypatch, tmp_path):
    def given(raw: dict) -> None:
        _one_site(raw)  # 8 + 8 x 8 GPUs / 8 = 16 H20 instances, as the derived one would be at first
        raw["baselines"] = {"homogeneous": {"hardware": "H20", "gpus_per_instance": 8, "instances": 16}}

    assert _same(monkeypatch, _scenario(tmp_path, given), ["sites.prefill-east.instances=1..9:5"]) == PATCHED


def test_shares_are_not_patched(monkeypatch, tmp_path):
    # one share of two swept alone: the loader refuses every point but the one summing to 1
    _expect(_same(monkeypatch, "two-regions", ["sites.region-a.demand_share=0.6..0.9:2"]), REFUSED)
    calls = _loads(monkeypatch)
    with pytest.raises(SpecError, match="demand shares sum to"):
        api_sweep.sweep("two-regions", CATALOG, overrides=["sites.region-a.demand_share=0.6..0.9:2"])
    assert len(calls) == 2  # the second value was reloaded, not patched


def test_output_tokens_of_sites_sharing_the_workload(monkeypatch, tmp_path):
    def shared(raw: dict) -> None:
        del raw["sites"]["region-b"]["workload"]

    assert _same(monkeypatch, _scenario(tmp_path, shared), ["workload.output_tokens=256..4096:3"]) == PATCHED


def test_the_two_views_stay_one():
    for ref, ranged, text in (("paper-case-study", "link.bandwidth", "7Gbps"),
                              ("paper-case-study", "clusters.local.instances", "5"),
                              ("paper-case-study", "clusters.prfaas.instances", "3"),
                              ("two-regions", "links[0].bandwidth", "7Gbps"),
                              ("two-regions", "sites.prefill-east.instances", "3"),
                              ("two-regions", "sites.region-a.instances", "5"),
                              ("paper-case-study", "workload.output_tokens", "300")):
        first = load_scenario(ref, CATALOG)
        base = patch.loaded(first, ref, CATALOG, overrides=[])
        assert base is not None
        sc = patch.point(base, ranged, text)
        assert sc is not None and sc.topology is not None
        topo = sc.topology
        assert sc.link == topo.links[0].link and sc.local == topo.sites[0].cluster
        assert sc.prfaas == topo.prefill.cluster
        assert sc != first
        if ref == "paper-case-study":
            assert sc.workload is topo.sites[0].workload
        again = load_scenario(ref, CATALOG, overrides=[f"{ranged}={text}"])
        assert (sc.link, sc.local, sc.prfaas, sc.homogeneous, sc.workload.output_tokens) == \
            (again.link, again.local, again.prfaas, again.homogeneous, again.workload.output_tokens)
        assert [s.workload.output_tokens for s in topo.sites] == \
            [s.workload.output_tokens for s in again.topology.sites]


ENDS = st.sampled_from(["-1", "0", "0.25", "1", "2", "3.5", "8", "40", "1e9", "10001", "x", "5ms", "10Gbps", "0Gbps",
                        "1K", "true"])
KEYS = st.sampled_from(["link.bandwidth", "link.usable_fraction", "link.rtt", "clusters.prfaas.instances",
                        "clusters.local.instances", "slo.decode_tokens_per_s", "slo.ttft", "decode.bs_max",
                        "decode.t_decode", "workload.output_tokens"])


@pytest.mark.slow
@settings(max_examples=round(30 * float(os.environ.get("PRFAAS_FUZZ_SCALE", "1"))), deadline=None,
          derandomize=bool(os.environ.get("CI")), database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(KEYS, st.one_of(st.sampled_from(["1", "2", "8", "40", "0.5"]), ENDS), ENDS, st.sampled_from(["2", "3", "3:log"]))
def test_any_range_of_a_patched_key_is_the_reloaded_one(monkeypatch, key, a, b, n):
    """Values in and out of bounds, fractional, unitless, of the wrong unit: the same rows or error. The
    first end is mostly one the loader takes, so the others (patched, or refused and reloaded) are tried."""
    _same(monkeypatch, None, [f"{key}={a}..{b}:{n}"])
