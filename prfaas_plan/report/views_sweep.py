"""View of `sweep` (``api.sweep``'s ``SweepResult``: the plan's summary at each value, one PD site
or several); its JSON and CSV are ``report.sweep_json``'s."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, table
from prfaas_plan.report.sweep_json import sweep_csv_rows, sweep_json
from prfaas_plan.report.views_plan import fixed, t_text, tight_text, x_text
from prfaas_plan.specs.sweep import SweepResult


def emit_sweep(fmt: str, s: SweepResult) -> None:
    """`sweep`: at each value, one PD site's t, split, Lambda_max, gain and link load; several
    sites' t and split each, the total Lambda_max and the gain over independent planning."""
    emit(fmt, sweep_json(s), rows=sweep_csv_rows(s), tables=lambda: (_sites(s) if len(s.sites) > 1 else _one(s)))


def _one(s: SweepResult) -> list[Any]:
    """One PD site."""
    rows = []
    for pt in s.points:
        if pt.plan is None:
            rows.append([pt.value_text, "infeasible", "", "", "", "", pt.reason])
            continue
        p = pt.plan.point
        (one,) = p.sites
        rows.append([pt.value_text, t_text(one.threshold_tokens), f"{p.n_prfaas}/{one.n_p}/{one.n_d}",
                     fixed(p.lambda_max_rps, 3), x_text(pt.plan.ratios.prfaas_vs_homogeneous),
                     f"{fixed(units.bytes_per_s_to_gbps(one.egress_bytes_per_s), 2)} "
                     f"({(one.link_utilization or 0) * 100:.0f}%)", tight_text(p.binding, p.tight)])
    return [table(f"Sweep of {s.key} ({s.scale} steps)",
                  [s.key, "t tokens", "prfaas/p/d", "Lambda req/s", "vs homog.", "egress Gbps (link %)",
                   "bound by"], rows)]


def _sites(s: SweepResult) -> list[Any]:
    """Several PD sites."""
    rows = []
    for pt in s.points:
        if pt.plan is None:
            rows.append([pt.value_text, "infeasible", "", "", pt.reason])
            continue
        p = pt.plan.point
        split = ", ".join(f"{t_text(sp.threshold_tokens)} {sp.n_p}/{sp.n_d}" for sp in p.sites)
        rows.append([pt.value_text, split, fixed(p.lambda_max_rps, 3), x_text(pt.plan.ratios.prfaas_vs_independent),
                     p.binding])
    return [table(f"Sweep of {s.key} ({s.scale} steps)",
                  [s.key, f"t tokens, N_p/N_d per site ({', '.join(s.sites)})", "Lambda req/s", "vs independent",
                   "bound by"], rows)]
