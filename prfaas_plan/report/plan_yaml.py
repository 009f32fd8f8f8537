"""`size -o PLAN.yaml`: the chosen plan as a scenario `optimize` and `simulate` load as they are.

The user's scenario mapping (after ``--set``) with its fleet replaced by the plan's: the clusters
(or sites) at the plan's kinds and counts, each link at its tier, the sizing section dropped. The
file is written with ``yaml.safe_dump`` from a mapping, never from spliced text.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from prfaas_plan import units
from prfaas_plan.specs.sizing import SizedPlan, SizingResult


def _absolute(node: Any, base: Path) -> Any:
    """Files the scenario names relative to its folder, made absolute (PLAN.yaml may live elsewhere)."""
    if isinstance(node, dict):
        return {k: (str((base / v).resolve()) if k == "file" and isinstance(v, str) and not Path(v).is_absolute()
                    else _absolute(v, base)) for k, v in node.items()}
    if isinstance(node, list):
        return [_absolute(v, base) for v in node]
    return node


def _gbps(bytes_per_s: float) -> str:
    return f"{units.bytes_per_s_to_gbps(bytes_per_s):.15g}Gbps"


def _link(entry: dict[str, Any], site: Any, narrowest: float) -> dict[str, Any]:
    out = dict(entry)
    out["bandwidth"] = _gbps(site.link_bandwidth_bytes_per_s if site.link_bandwidth_bytes_per_s else narrowest)
    if site.link_usable_bytes_per_s and site.link_bandwidth_bytes_per_s:
        out["usable_fraction"] = float(site.link_usable_bytes_per_s / site.link_bandwidth_bytes_per_s)
    return out


def plan_mapping(data: dict[str, Any], scenario_file: str, r: SizingResult, plan: SizedPlan, *, derived_decode: bool,
                 narrowest_bytes_per_s: float, homogeneous: SizedPlan | None) -> dict[str, Any]:
    """The scenario of ``plan``. ``derived_decode``: a site runs a kind other than the one a pinned
    decode was measured on, so the decode is derived for every site (as `size` derived it).
    ``homogeneous``: the baseline to write (one PD site), a plan whose decode the file describes."""
    out = _absolute(copy.deepcopy(data), Path(scenario_file).parent)
    out.pop("sizing", None)
    out["name"] = f"{data.get('name', 'scenario')}-sized"
    out["description"] = (f"`prfaas-plan size` for {r.demand_rps:g} req/s at headroom {r.headroom:g}: "
                          f"${plan.cost.per_hour:,.2f}/h")
    pre = {"hardware": plan.prefill_hardware, "gpus_per_instance": plan.prefill_gpus_per_instance,
           "instances": plan.n_prfaas, "price_per_gpu_hour": plan.prefill_price_per_gpu_hour}
    if "sites" in out:
        sites = out["sites"]
        for name, entry in sites.items():
            if entry.get("role") == "prfaas":
                sites[name] = {**entry, **pre}
        by_site = {s.site: s for s in plan.sites}
        for name, s in by_site.items():
            sites[name] = {**sites[name], "hardware": s.hardware, "gpus_per_instance": s.gpus_per_instance,
                           "instances": s.n_p + s.n_d, "price_per_gpu_hour": s.price_per_gpu_hour}
        out["links"] = [_link(lk, by_site[lk["to"]], narrowest_bytes_per_s) for lk in out["links"]]
    else:
        s = plan.sites[0]
        out["clusters"] = {"prfaas": pre, "local": {"hardware": s.hardware, "gpus_per_instance": s.gpus_per_instance,
                                                    "instances": s.n_p + s.n_d,
                                                    "price_per_gpu_hour": s.price_per_gpu_hour}}
        out["link"] = _link(out.get("link", {}), s, narrowest_bytes_per_s)
        hom = homogeneous
        if hom is not None and hom.sites[0].n_p + hom.sites[0].n_d >= 2:
            h = hom.sites[0]
            out.setdefault("baselines", {})["homogeneous"] = {
                "hardware": h.hardware, "gpus_per_instance": h.gpus_per_instance, "instances": h.n_p + h.n_d,
                "price_per_gpu_hour": h.price_per_gpu_hour}
    if "search" in out:
        out["search"] = {k: v for k, v in out["search"].items() if k not in ("size_prfaas", "max_prfaas_instances")}
    if derived_decode:
        dec = out.get("decode", {})
        out["decode"] = {k: v for k, v in dec.items() if k not in ("mode", "bs_max", "t_decode")} | {"mode": "derived"}
    return out
