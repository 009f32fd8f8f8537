"""View of `optimize` on a topology of several PD sites (``api.topology``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import SYSTEM_NAMES, emit, num, pct, table
from prfaas_plan.report.topology_json import topology_csv_rows, topology_json
from prfaas_plan.report.views_plan import (
    fixed,
    interval_line,
    interval_words,
    planned_rate_line,
    robustness_table,
    staging_line,
    t_text,
    tight_text,
    x_text,
)
from prfaas_plan.specs.results import TopologyMethodPlan, TopologyPlanResult, TopologyPoint
from prfaas_plan.specs.slo import TopologySloPlan


def emit_topology(fmt: str, r: TopologyPlanResult) -> None:
    """`optimize` on a topology: the tables read the typed result, JSON and CSV its JSON."""
    payload = topology_json(r)
    emit(fmt, payload, rows=topology_csv_rows(payload), tables=lambda: _tables(r))


def _kinds(bindings: list[str]) -> str:
    """What binds each site of a baseline, once per kind: "decode" or "decode, link"."""
    return ", ".join(dict.fromkeys(b.split(" ")[0] for b in bindings))


def _site_rows(r: TopologyPlanResult, b: TopologyPoint) -> list[list[str]]:
    rows = []
    for info, s in zip(r.sites, b.sites, strict=True):
        pool = info.pool
        rows.append([info.name, f"{pool.instances}x{pool.gpus_per_instance}x{pool.hardware}",
                     f"{info.demand_share * 100:.0f}%", t_text(s.threshold_tokens), f"{s.n_p} / {s.n_d}",
                     pct(s.p_offload), fixed(s.lambda_rps, 3),
                     f"{num(units.bytes_per_s_to_gbps(s.egress_bytes_per_s), 2)} / "
                     f"{num(units.bytes_per_s_to_gbps(info.link_usable_bytes_per_s), 1)} ({pct(s.link_utilization)})",
                     fixed(s.prfaas_seconds_per_s, 2)])
    return rows


def _systems(m: TopologyMethodPlan) -> list[list[str]]:
    b, hom, ind, nv, ratios = m.best, m.homogeneous, m.independent, m.naive, m.ratios
    h = hom.lambda_max_rps
    return [
        ["Lambda_max req/s", fixed(b.lambda_max_rps, 3), fixed(ind.lambda_max_rps, 3), fixed(h, 3),
         fixed(nv.lambda_max_rps, 3)],
        ["vs homogeneous", x_text(ratios.prfaas_vs_homogeneous), x_text(ind.lambda_max_rps / h if h > 0 else None),
         "1.00x",
         x_text(ratios.naive_vs_homogeneous)],
        ["bound by", b.binding, _kinds([a.binding for a in ind.alone]),
         _kinds([str(s.baseline.point.binding) for s in hom.sites]), nv.binding],
        ["$ per 1M requests", num(m.cost.cost_per_million_requests, 0), num(ind.cost.cost_per_million_requests, 0),
         num(hom.cost.cost_per_million_requests, 0), num(m.naive_cost.cost_per_million_requests, 0)],
    ]


def _slo_rows(slo: TopologySloPlan) -> list[list[str]]:
    rows = []
    for key in ("prfaas", "homogeneous", "naive_heterogeneous"):
        d = slo.of(key)
        if d is None:
            rows.append([SYSTEM_NAMES[key], "none", "-", "misses the bound even at zero load"])
            continue
        worst = max(v.ttft_p90_s if slo.statistic == "p90" else v.ttft_mean_s for v in d.sites.values())
        rows.append([SYSTEM_NAMES[key], fixed(d.lambda_ttft_rps, 3), fixed(d.capacity_rps, 3),
                     f"{d.binding} (worst site {fixed(worst, 2)} s)"])
    return rows


def _tables(r: TopologyPlanResult) -> list[Any]:
    m = r.head
    b = m.best
    names = [s.name for s in r.sites]
    pre = r.prefill
    title = (f"{r.scenario}: {r.model}, prefill service {r.prefill_site} ({pre.instances}x"
             f"{pre.gpus_per_instance}x{pre.hardware}) for {len(names)} PD sites (method: {r.method})")
    caption = (f"Lambda_max {fixed(b.lambda_max_rps, 3)} req/s in total, bound by {tight_text(b.binding, b.tight)}"
               f"; the prefill service is {pct(b.prfaas_utilization)} busy.")
    out: list[Any] = [table(title, ["site", "instances", "demand %", "t tokens", "N_p / N_d", "offloaded p %",
                                    "Lambda_i req/s", "egress / usable Gbps", "PrfaaS busy instances"],
                            _site_rows(r, b), caption=caption)]
    homog = " + ".join(f"{s.baseline.instances}x{s.baseline.hardware}" for s in m.homogeneous.sites)
    caption = (f"Joint planning serves {x_text(m.ratios.prfaas_vs_independent)} the requests of independent "
               "planning (the prefill service split by demand share, each site optimised alone).")
    if m.ratios.prfaas_vs_homogeneous_equal_cost is not None:
        caption += (f" At equal cost (catalog GPU-hour prices) it serves "
                    f"{x_text(m.ratios.prfaas_vs_homogeneous_equal_cost)} the requests of homogeneous PD.")
    out.append(table("Systems side by side", ["", "joint PrfaaS-PD", "independent planning",
                                              f"homogeneous PD ({homog})", "naive heterogeneous"], _systems(m),
                     caption=caption))
    if r.ttft_slo is not None:
        out.append(table(f"Under the TTFT SLO: {r.ttft_slo.statistic} TTFT <= {r.ttft_slo.bound_s:g} s at every "
                         "site (throughput-best configurations held)", ["system", "rate req/s", "capacity req/s",
                                                                        "bound by"], _slo_rows(r.ttft_slo)))
    if r.robustness is not None:
        out.append(robustness_table(r.robustness, topology=True))
    m_rows = []
    for name, d in r.methods.items():
        bb = d.best
        split = ", ".join(f"{t_text(s.threshold_tokens)} {s.n_p}/{s.n_d}" for s in bb.sites)
        m_rows.append([name, split, fixed(bb.lambda_max_rps, 3), x_text(d.ratios.prfaas_vs_independent),
                       x_text(d.ratios.prfaas_vs_homogeneous), bb.binding])
    out.append(table("Both methods", ["method", f"t tokens, N_p/N_d per site ({', '.join(names)})",
                                      "Lambda req/s", "vs independent", "vs homog.", "bound by"], m_rows,
                     caption="\n".join(f"{k}: {v}" for k, v in r.sources.items())))
    lines = [staging_line(s.decode, f" at {s.name}") for s in r.sites]
    if r.interval is not None:
        lines.append(interval_line(r.interval) or f"Lambda_max P10-P90: {interval_words(r.interval)}")
    lines.append(planned_rate_line(r.planned_rate, r.head.best.lambda_max_rps))
    return out + [ln for ln in lines if ln]
