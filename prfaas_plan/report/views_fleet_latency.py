"""View of `latency` on a scenario of several models (``api.fleet_latency``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.fleet_latency_json import fleet_latency_json
from prfaas_plan.report.latency_json import scalar_rows
from prfaas_plan.report.render import emit, pct, secs, table
from prfaas_plan.report.views_fleet import FLEET_NAMES
from prfaas_plan.report.views_plan import fixed
from prfaas_plan.specs.fleet_latency import FleetLatencyResult, FleetTiming
from prfaas_plan.specs.latency import SystemTiming


def emit_fleet_latency(fmt: str, r: FleetLatencyResult) -> None:
    """`latency` on several models: the tables read the typed timings, JSON and CSV its JSON
    (CSV: one row per configuration and entry)."""
    payload = fleet_latency_json(r)
    emit(fmt, payload, rows=scalar_rows(payload, inner="entries", inner_label="model"),
         tables=lambda: _tables(r))


def ttft_cells(t: FleetTiming | SystemTiming) -> list[str]:
    """TTFT mean, P50, P90, P99 cells, or what is unstable."""
    if isinstance(t, FleetTiming) and not t.stable:  # the stages are named on each model's row
        return ["unstable: " + ", ".join(k for k, e in t.entries.items() if not e.stable), "", "", ""]
    if not t.stable:
        return ["unstable: " + ", ".join(t.unstable_stages), "", "", ""]
    return [secs(t.ttft_mean_s), secs(t.ttft_p50_s), secs(t.ttft_p90_s), secs(t.ttft_p99_s)]


def _busy(t: FleetTiming) -> str:
    """The service's utilisation over all its assigned instances (each model's pool weighted by its size)."""
    n = sum(k for k, _ in t.pools.values())
    return pct(sum(k * u for k, u in t.pools.values()) / n) if n else "-"


def _tables(r: FleetLatencyResult) -> list[Any]:
    rows, path_rows = [], []
    for name, s in r.systems.items():
        label = FLEET_NAMES.get(name, name)
        rows.append([label, "all", f"{s.load * 100:.0f}%", *ttft_cells(s), "", _busy(s),
                     ", ".join(pct(u) for u in s.links.values())])
        for entry, t in s.entries.items():
            n, u = s.pools[entry]
            rows.append(["", entry, "", *ttft_cells(t), f"{units.s_to_ms(t.tpot_s):.1f}", pct(u) if n else "-", ""])
            for p in t.paths:
                path_rows.append([label, entry, p.name, f"{p.share * 100:.1f}%", secs(p.wait_mean_s),
                                  secs(p.prefill_mean_s), secs(p.transfer_mean_s), secs(p.admission_mean_s),
                                  secs(p.ttft_mean_s), secs(p.ttft_p90_s)])
                label = ""
    caps = "; ".join(f"{FLEET_NAMES.get(n, n)} {fixed(s.capacity_rps, 3)} req/s ({s.capacity_binding})"
                     for n, s in r.systems.items())
    return [
        table(f"{r.scenario}: analytic TTFT at {fixed(r.rate_rps, 3)} req/s in total ({r.load * 100:.0f}% of the "
              "smaller capacity)",
              ["system", "model", "load", "TTFT mean s", "P50 s", "P90 s", "P99 s", "TPOT ms", "PrfaaS busy %",
               "link busy %"], rows,
              caption=f"Capacity (exact method at each configuration): {caps}. Each model queues in its own "
                      "instances of the service; a link's busy % is every model's KV on it."),
        table("Per path (TTFT = queue wait + prefill + exposed transfer + decode admission)",
              ["system", "model", "path", "share %", "wait s", "prefill s", "transfer s", "admission s", "mean s",
               "P90 s"], path_rows),
    ]
