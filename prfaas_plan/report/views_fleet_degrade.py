"""View of `degrade` on several models (``api.fleet_degrade``; its JSON: ``report.fleet_json``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.fleet_json import fleet_degrade_csv_rows, fleet_degrade_json
from prfaas_plan.report.render import emit, num, table
from prfaas_plan.report.views_fleet_latency import ttft_cells
from prfaas_plan.report.views_plan import fixed, t_text
from prfaas_plan.specs.fleet import FleetDegradeResult


def emit_fleet_degrade(fmt: str, r: FleetDegradeResult) -> None:
    payload = fleet_degrade_json(r)

    def tables() -> list[Any]:
        labels = " / ".join(e.label for e in r.nominal.entries)
        out: list[Any] = []
        for link, levels in r.links:
            rows = []
            for lv in levels:
                p = lv.replan
                rows.append([f"{lv.level * 100:.0f}%", num(units.bytes_per_s_to_gbps(lv.usable_bytes_per_s), 1),
                             fixed(lv.static_rps, 3), lv.static_binding,
                             fixed(p.lambda_max_rps, 3) if p else "0.000", p.binding if p else "-",
                             ", ".join(f"{t_text(e.threshold_tokens)} {e.n_p}/{e.n_d}/{e.n_prfaas}" for e in p.entries)
                             if p else "-"])
            out.append(table(f"Link {link}: capacity, the plan held (static) and re-planned",
                             ["level %", "Gbps", "static req/s", "bound by", "replan req/s", "bound by",
                              f"t N_p/N_d/N_prfaas ({labels})"], rows))
            ttft = [[f"{lv.level * 100:.0f}%", label, *ttft_cells(t)] for lv in levels if lv.ttft is not None
                    for label, t in lv.ttft.entries.items()]
            out.append(table(f"TTFT of the re-planned fleet at {fixed(r.rate_rps, 3)} req/s "
                             f"({r.load * 100:.0f}% of the nominal Lambda_max)",
                             ["level %", "model", "TTFT mean s", "P50 s", "P90 s", "P99 s"], ttft))
        models = len({e.model for e in r.nominal.entries})
        return [f"{r.scenario}: a link degraded or down, {models} models sharing one prefill "
                f"service (method {r.method}; nominal Lambda_max {fixed(r.nominal.lambda_max_rps, 3)} req/s)",
                *out]

    emit(fmt, payload, rows=fleet_degrade_csv_rows(payload), tables=tables)
