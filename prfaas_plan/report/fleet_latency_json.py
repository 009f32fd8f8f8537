"""The JSON of `latency` on a scenario of several models, written from the typed
``specs.fleet_latency.FleetLatencyResult``: the one place its keys are spelled (each entry's
timing as `latency` spells a system's, ``report.latency_json.system_json``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.report.latency_json import TTFT_KEYS, system_json
from prfaas_plan.specs.fleet_latency import FleetLatencyResult, FleetTiming

FLEET_REFERENCE = "smaller exact-method Lambda_max of the two configurations"


def fleet_timing_json(t: FleetTiming) -> dict[str, Any]:
    return {"capacity_rps": t.capacity_rps, "capacity_binding": t.capacity_binding, "rate_rps": t.rate_rps,
            "load": t.load, "stable": t.stable, "unstable_stages": list(t.unstable_stages),
            **{k: getattr(t, k) for k in TTFT_KEYS},
            "pools": {label: {"n_prfaas": n, "utilization": u} for label, (n, u) in t.pools.items()},
            "links": {name: {"utilization": u} for name, u in t.links.items()},
            "entries": {label: {"model": t.models[label], "demand_share": t.demand_shares[label],
                                "link": t.links_of[label]} | system_json(e) for label, e in t.entries.items()}}


def fleet_latency_json(r: FleetLatencyResult) -> dict[str, Any]:
    return {"scenario": r.scenario, "rate_rps": r.rate_rps, "load": r.load, "load_reference": FLEET_REFERENCE,
            "systems": {name: fleet_timing_json(t) for name, t in r.systems.items()}}
