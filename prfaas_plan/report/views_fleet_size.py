"""View of `size` on several models (``api.fleet_size``); its JSON is ``report.fleet_json``'s."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.fleet_json import fleet_size_json, fleet_size_rows
from prfaas_plan.report.render import emit, num, pct, table
from prfaas_plan.report.views_plan import fixed, t_text
from prfaas_plan.specs.fleet import FleetSizingResult


def _money(x: float | None) -> str:
    return "-" if x is None else f"${num(x, 2)}"


def _saves(base: float | None, cost: float) -> str:
    return "-" if base is None or base <= 0 else pct(1 - cost / base)


def emit_fleet_size(fmt: str, r: FleetSizingResult) -> None:

    def tables() -> list[Any]:
        several = len(r.sites) > 1
        rows = [[e.model + (f"@{e.site}" if several else ""), fixed(e.demand_rps, 3), t_text(e.threshold_tokens),
                 pct(e.p_offload), f"{e.n_p} / {e.n_d}", str(e.n_prfaas),
                 num(units.bytes_per_s_to_gbps(e.egress_bytes_per_s), 2)] for e in r.entries]
        pre = (f"{r.n_prfaas} x {r.prefill_gpus_per_instance}x{r.prefill_hardware}" if r.n_prfaas else "none")
        sites = "; ".join(f"{s.site} {s.instances} x {s.gpus_per_instance}x{s.hardware}, link "
                          + (f"{num(units.bytes_per_s_to_gbps(s.link_tier_bytes_per_s), 0)} Gbps "
                             f"{_money(s.link_price_per_hour)}/h" if s.link_tier_bytes_per_s else "none")
                          for s in r.sites)
        caption = (f"prefill service {pre}; {sites}\ncost {_money(r.per_hour)}/h = GPUs {_money(r.gpus_per_hour)} + "
                   f"links {_money(r.links_per_hour)} + egress {_money(r.egress_per_hour)}; "
                   f"{_money(r.per_million_requests)} per 1M requests")
        base = [["shared prefill service (cheapest)", _money(r.per_hour), "-"],
                ["each model sized alone (own service and links)", _money(r.separate_per_hour),
                 _saves(r.separate_per_hour, r.per_hour)],
                ["each model on its cheapest homogeneous PD", _money(r.homogeneous_per_hour),
                 _saves(r.homogeneous_per_hour, r.per_hour)]]
        if r.ttft:
            caption += "\nTTFT at the demand (analytic, the fleet's throughput plan): " + ", ".join(
                f"{label} {stat} {'unstable' if v is None else f'{v:.2f} s'} <= {bound:g} s"
                for label, stat, v, bound in r.ttft)
            if r.headroom < r.asked_headroom:
                caption += (f"\nheadroom {r.asked_headroom:g} asked; sized at {r.headroom:.3g} so that every model "
                            "meets its TTFT SLO")
        return [table(f"size {r.scenario}: {len(r.entries)} models, demand {fixed(r.demand_rps, 3)} req/s at headroom "
                      f"{r.headroom:.3g} (stages sized for {fixed(r.demand_rps / r.headroom, 3)} req/s)",
                      ["model", "demand req/s", "t tokens", "offloaded %", "N_p / N_d", "N_prfaas", "egress Gbps"],
                      rows, caption=caption),
                table("against the baselines, same demand", ["plan", "$/h", "shared saves %"], base)]

    emit(fmt, fleet_size_json(r), rows=fleet_size_rows(r), tables=tables)
