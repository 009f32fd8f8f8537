"""View of `degrade` (``api.degrade``): per link a capacity table by level, a TTFT table by level
and site, and what the link's failure takes; its JSON (``degrade_json``) and CSV rows, one per
(link, level). Numbers that do not exist (a TTFT above capacity) are null, never NaN or inf."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, pct, secs, table
from prfaas_plan.report.views_plan import fixed, t_text
from prfaas_plan.specs.degrade import DegradeResult, Failure, LevelResult, LinkDegrade, SiteTtft


def _gbps(bytes_per_s: float) -> float:
    return units.bytes_per_s_to_gbps(bytes_per_s)


def _ttft_json(t: SiteTtft) -> dict[str, Any]:
    return {"ttft_mean_s": t.ttft_mean_s, "ttft_p50_s": t.ttft_p50_s, "ttft_p90_s": t.ttft_p90_s,
            "ttft_p99_s": t.ttft_p99_s, "stable": t.unstable is None, "unstable": t.unstable,
            "max_utilization": t.utilization}


def _level_json(lv: LevelResult) -> dict[str, Any]:
    rp = lv.replanned
    return {"level": lv.level, "bandwidth_gbps": _gbps(lv.bandwidth_bytes_per_s),
            "bandwidth_bytes_per_s": lv.bandwidth_bytes_per_s,
            "static": {"lambda_max_rps": lv.static.lambda_max_rps, "binding": lv.static.binding},
            "replanned": {"lambda_max_rps": rp.lambda_max_rps, "binding": rp.binding, "n_prfaas": rp.n_prfaas,
                          "sites": {name: {"threshold_tokens": c.threshold_tokens, "n_p": c.n_p, "n_d": c.n_d,
                                           "p_offload": c.p_offload} for name, c in rp.sites.items()}},
            "ttft": {name: _ttft_json(t) for name, t in lv.ttft.items()},
            "slo_attainment": None if lv.slo_attainment is None else dict(lv.slo_attainment)}


def _failure_json(f: Failure) -> dict[str, Any]:
    return {"site": f.site, "instances": f.instances, "capacity_down_rps": f.capacity_down_rps,
            "binding": f.binding_down, "n_p": f.n_p_down, "n_d": f.n_d_down, "lambda_down_rps": f.lambda_down_rps,
            "survivable_load": f.survivable_load, "site_rate_rps": f.rate_rps, "extra_instances": f.extra_instances,
            "instances_needed": f.instances_needed}


def degrade_json(r: DegradeResult) -> dict[str, Any]:
    return {"scenario": r.scenario, "model": r.model, "method": r.method, "rate_rps": r.rate_rps, "load": r.load,
            "nominal_lambda_max_rps": r.nominal_lambda_max_rps,
            "slo": None if r.slo_bound_s is None else {"ttft_bound_s": r.slo_bound_s, "statistic": r.slo_statistic},
            "links": {name: {"site": lk.site, "nominal_bandwidth_gbps": _gbps(lk.nominal_bandwidth_bytes_per_s),
                             "levels": [_level_json(lv) for lv in lk.levels], "failure": _failure_json(lk.failure)}
                      for name, lk in r.links.items()}}


def degrade_rows(r: DegradeResult) -> list[dict[str, Any]]:
    """CSV: one row per (link, level), the sites' columns prefixed by the site's name."""
    rows = []
    for name, lk in r.links.items():
        f = lk.failure
        for lv in lk.levels:
            row: dict[str, Any] = {
                "link": name, "site": lk.site, "level": lv.level, "bandwidth_gbps": _gbps(lv.bandwidth_bytes_per_s),
                "rate_rps": r.rate_rps, "static_lambda_max_rps": lv.static.lambda_max_rps,
                "static_binding": lv.static.binding, "replanned_lambda_max_rps": lv.replanned.lambda_max_rps,
                "replanned_binding": lv.replanned.binding, "n_prfaas": lv.replanned.n_prfaas}
            for s, c in lv.replanned.sites.items():
                t = lv.ttft[s]
                row |= {f"{s}.threshold_tokens": c.threshold_tokens, f"{s}.n_p": c.n_p, f"{s}.n_d": c.n_d,
                        f"{s}.p_offload": c.p_offload, f"{s}.ttft_mean_s": t.ttft_mean_s,
                        f"{s}.ttft_p50_s": t.ttft_p50_s, f"{s}.ttft_p90_s": t.ttft_p90_s,
                        f"{s}.ttft_p99_s": t.ttft_p99_s, f"{s}.unstable": t.unstable,
                        f"{s}.slo_attainment": None if lv.slo_attainment is None else lv.slo_attainment[s]}
            row |= {"capacity_down_rps": f.capacity_down_rps, "survivable_load": f.survivable_load,
                    "extra_instances": f.extra_instances, "instances_needed": f.instances_needed}
            rows.append(row)
    return rows


def _level(x: float) -> str:
    return f"{x * 100:g}%"


def _capacity(lk: LinkDegrade) -> Any:
    rows = [[_level(lv.level), num(_gbps(lv.bandwidth_bytes_per_s), 1), fixed(lv.static.lambda_max_rps, 3),
             lv.static.binding, fixed(lv.replanned.lambda_max_rps, 3), lv.replanned.binding, str(lv.replanned.n_prfaas)]
            for lv in lk.levels]
    title = (f"Link {lk.link} (to {lk.site}, nominal {num(_gbps(lk.nominal_bandwidth_bytes_per_s), 1)} Gbps): "
             "capacity, the nominal plan held (static) and re-planned")
    return table(title, ["level %", "Gbps", "static req/s", "bound by", "replan req/s", "bound by", "N_prfaas"],
                 rows, justify_first_left=False)


def _ttft_cell(t: SiteTtft) -> str:
    if t.unstable is not None:
        return f"unstable: {t.unstable}"
    return " / ".join(secs(x) for x in (t.ttft_mean_s, t.ttft_p50_s, t.ttft_p90_s, t.ttft_p99_s))


def _ttft(r: DegradeResult, lk: LinkDegrade) -> Any:
    rows = []
    for lv in lk.levels:
        for s, c in lv.replanned.sites.items():
            met = "-" if lv.slo_attainment is None else pct(lv.slo_attainment[s])
            rows.append([_level(lv.level), s, t_text(c.threshold_tokens), f"{c.n_p}/{c.n_d}", pct(c.p_offload),
                         _ttft_cell(lv.ttft[s]), met])
    slo = "SLO met %" if r.slo_bound_s is None else f"TTFT <= {r.slo_bound_s:g} s %"
    return table(f"TTFT of the re-planned configuration at {r.rate_rps:.3f} req/s",
                 ["level %", "site", "t tokens", "N_p/N_d", "offloaded %", "TTFT mean / P50 / P90 / P99 s", slo],
                 rows, justify_first_left=False)


def _failure(r: DegradeResult, lk: LinkDegrade) -> list[str]:
    f = lk.failure
    out = [f"If {lk.link} fails, {f.site} prefills every request itself:",
           f"  its best local-only split {f.n_p_down}/{f.n_d_down} serves {f.capacity_down_rps:.3f} req/s of its "
           f"traffic (bound by {f.binding_down});",
           f"  the fleet then serves {f.lambda_down_rps:.3f} req/s, so it survives this failure up to "
           f"{f.survivable_load * 100:.1f}% load."]
    at = f"at {r.load * 100:.0f}% load ({f.rate_rps:.3f} req/s at {f.site})"
    if f.extra_instances is None:
        out.append(f"  To survive it {at}, {f.site} needs more instances than the search goes to.")
    elif f.extra_instances == 0:
        out.append(f"  {at[0].upper()}{at[1:]} its {f.instances} instances already suffice.")
    else:
        out.append(f"  To survive it {at}, {f.site} needs +{f.extra_instances} "
                   f"instance{'s' if f.extra_instances > 1 else ''} ({f.instances} -> {f.instances_needed}).")
    return out


def _tables(r: DegradeResult) -> list[Any]:
    out: list[Any] = [f"{r.scenario}: a link degraded or down, at {r.rate_rps:.3f} req/s "
                      f"({r.load * 100:.0f}% of the nominal Lambda_max {r.nominal_lambda_max_rps:.3f} req/s, "
                      f"method {r.method})", ""]
    for lk in r.links.values():
        out += [_capacity(lk), _ttft(r, lk), *_failure(r, lk), ""]
    return out[:-1]


def emit_degrade(fmt: str, r: DegradeResult) -> None:
    emit(fmt, degrade_json(r), rows=degrade_rows(r), tables=lambda: _tables(r))
