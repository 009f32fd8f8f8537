"""The JSON and CSV rows of `sweep`, written from the typed ``specs.sweep.SweepResult``: the one
place its keys are spelled. One PD site keeps its flat keys (t, split, egress) as before the
topology existed; a topology's rows have each site's; both have ``sites`` and ``links`` by name."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.plan_json import links_json
from prfaas_plan.specs.sweep import SweepPoint, SweepResult

_SITE_KEYS = ("threshold_tokens", "n_p", "n_d", "p_offload", "lambda_rps")


def _row(s: SweepResult, pt: SweepPoint) -> dict[str, Any]:
    head: dict[str, Any] = {"value": pt.value, "value_text": pt.value_text, "feasible": pt.feasible}
    if pt.plan is None:
        return head | {"reason": pt.reason}
    plan, p = pt.plan, pt.plan.point
    sites = {sp.site: {k: getattr(sp, k) for k in _SITE_KEYS} for sp in p.sites}
    links = links_json(p, plan.usable_bytes_per_s)
    baselines = {"homogeneous_lambda_max_rps": plan.homogeneous_lambda_max_rps,
                 "prfaas_vs_homogeneous": plan.ratios.prfaas_vs_homogeneous}
    if len(s.sites) > 1:
        return head | {"lambda_max_rps": p.lambda_max_rps, "binding": p.binding, "tight": list(p.tight),
                       "n_prfaas": p.n_prfaas, "prfaas_utilization": p.prfaas_utilization,
                       "prfaas_vs_independent": plan.ratios.prfaas_vs_independent,
                       "independent_lambda_max_rps": plan.independent_lambda_max_rps} | baselines | {
                           "sites": sites, "links": links}
    (one,) = p.sites
    return head | {"threshold_tokens": one.threshold_tokens, "n_prfaas": p.n_prfaas, "n_p": one.n_p, "n_d": one.n_d,
                   "lambda_max_rps": p.lambda_max_rps, "p_offload": one.p_offload, "binding": p.binding,
                   "tight": list(p.tight), "egress_gbps": units.bytes_per_s_to_gbps(one.egress_bytes_per_s),
                   "link_utilization": one.link_utilization} | baselines | {"sites": sites, "links": links}


def sweep_json(s: SweepResult) -> dict[str, Any]:
    return {"key": s.key, "scale": s.scale, "method": s.method, "rows": [_row(s, pt) for pt in s.points]}


def sweep_csv_rows(s: SweepResult) -> list[dict[str, Any]]:
    """One flat row per value: one PD site's keys as they are, a topology's per site as ``site.key``."""
    out = []
    for r in sweep_json(s)["rows"]:
        flat = {k: v for k, v in r.items() if k not in ("tight", "sites", "links")}
        if len(s.sites) > 1:
            flat |= {f"{n}.{k}": v for n, d in r.get("sites", {}).items() for k, v in d.items()}
        out.append(flat)
    return out
