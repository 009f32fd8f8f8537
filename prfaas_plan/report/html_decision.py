"""The report's first screen: the answer and its reason in plain words, before any evidence.

The plan (t, split, Lambda_max and its interval), its gains over homogeneous and naive
heterogeneous PD, what it costs, what binds, what to buy and the risk from the link, each read
from the typed results ``api.report`` computed (``ReportData``). Every row carries a ``key``
(``t``, ``split``, ``lambda``, ``gain``, ``cost``, ...) the page writes as ``data-key``.
"""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.report_data import ReportData
from prfaas_plan.specs.results import Binding, LambdaInterval, OperatingPoint, PlanResult, Priced
from prfaas_plan.specs.sizing import SizedPlan, SizingResult

Row = tuple[str, str, str]  # (key, label, text)


def tokens(x: float | None) -> str:
    """A threshold as every table shows it, rounded down: "19,194 tokens"."""
    return "-" if x is None else f"{units.format_threshold(x)} tokens"


def money(x: float | None, digits: int = 2) -> str:
    """Dollars as money: "$1,234.50"; "-" for none."""
    return "-" if x is None else f"${x:,.{digits}f}"


def gbps(b: float | None) -> str:
    return "-" if b is None else f"{units.bytes_per_s_to_gbps(b):,.2f} Gbps"


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def fleet(p: SizedPlan) -> str:
    """"6 x 8xH200 (prefill service) + 5 x 8xH20 (local)"."""
    parts = [f"{p.n_prfaas} x {p.prefill_gpus_per_instance}x{p.prefill_hardware} (prefill service)"] if p.n_prfaas \
        else []
    parts += [f"{s.n_p + s.n_d} x {s.gpus_per_instance}x{s.hardware} ({s.site})" for s in p.sites]
    return " + ".join(parts)


def interval_text(iv: LambdaInterval | None) -> str:
    if iv is None:
        return ""
    if iv.dominant == "none":
        return "; P10-P90 a point: every prefill time is measured and decode pinned, so no modelled time carries a band"
    return (f"; P10-P90 {iv.lambda_p10_rps:.3f}-{iv.lambda_p90_rps:.3f} req/s (the serving stack's band on the "
            f"{iv.dominant})")


def _binds(r: PlanResult, b: OperatingPoint) -> str:
    link = (f"the link carries {gbps(b.egress_bytes_per_s)}, {pct(b.link_utilization or 0.0)} of its "
            f"{gbps(r.site.link_usable_bytes_per_s)}")
    if b.binding == Binding.PRFAAS_COMPUTE and Binding.PD_PREFILL in b.tight:
        return ("the two prefill paths, balanced (Eq. 7): offloading more would overload the prefill service, less "
                f"the local prefill instances. Decode sustains {b.theta_pd_d_rps:.2f} req/s; {link}.")
    if b.binding == Binding.LINK:
        return (f"the link: {link}, and offloading more needs more bandwidth; a wider link raises Lambda_max "
                "(the link sweep below).")
    if b.binding == Binding.DECODE:
        return (f"decode: {b.n_d} decode instances sustain {b.theta_pd_d_rps:.2f} req/s; more prefill would not "
                f"help, more decode would. {link.capitalize()}.")
    if b.binding == Binding.PD_PREFILL:
        return f"local prefill: {b.n_p} instances at {b.theta_pd_p_rps or 0:.2f} req/s of short requests; {link}."
    return f"the prefill service's compute: more prefill-service instances would raise Lambda_max; {link}."


def _one_site(r: PlanResult) -> list[Row]:
    m = r.head
    assert m.grid is not None
    b, hom, nv = m.grid.best, m.grid.homogeneous, m.grid.naive
    exact = r.methods.get("exact") if r.method != "exact" else r.methods.get("paper")
    other = f"; {exact.method} method {exact.best.lambda_max_rps:.3f}" if exact is not None else ""
    gains = [f"{m.ratios.prfaas_vs_homogeneous:.2f}x homogeneous PD ({hom.instances} x {hom.gpus // hom.instances}x"
             f"{hom.hardware}, "
             f"{hom.point.lambda_max_rps:.3f} req/s)" if hom and m.ratios.prfaas_vs_homogeneous else None,
             f"{b.lambda_max_rps / nv.point.lambda_max_rps:.2f}x naive heterogeneous PD "
             f"({nv.point.lambda_max_rps:.3f} req/s)" if nv and nv.point.lambda_max_rps > 0 else None,
             f"{m.ratios.prfaas_vs_homogeneous_equal_cost:.2f}x homogeneous PD at equal cost"
             if m.ratios.prfaas_vs_homogeneous_equal_cost else None]
    local = f"{r.site.pool.gpus_per_instance}x{r.site.pool.hardware}"
    return [
        ("t", "threshold t", f"{tokens(b.threshold_tokens)}: the {pct(b.p_offload)} of requests longer than it are "
                             f"prefilled by the prefill service ({b.n_prfaas} x {r.prefill.gpus_per_instance}x"
                             f"{r.prefill.hardware}), the rest locally"),
        ("split", "split N_prfaas / N_p / N_d", f"{b.n_prfaas} / {b.n_p} / {b.n_d}: the {b.n_p + b.n_d} local "
                                                f"{local} instances run {b.n_p} prefill and {b.n_d} decode"),
        ("lambda", "Lambda_max", f"{b.lambda_max_rps:.3f} req/s (method {r.method}{other})"
                                 + interval_text(r.interval)),
        ("gain", "gain", "; ".join(g for g in gains if g) or "no baseline to compare"),
        ("cost", "cost", _cost(m.cost)),
        ("binds", "what binds", _binds(r, b)),
    ]


def _cost(cost: Priced) -> str:
    """The cost row: $ per 1M requests at Lambda_max and the fleet's $/h, or why there is none."""
    if cost.price_per_hour is None:
        return "no price: a GPU of the fleet has no price_per_gpu_hour"
    return (f"{money(cost.cost_per_million_requests, 0)} per 1M requests at Lambda_max; the fleet costs "
            f"{money(cost.price_per_hour)}/h")


def _topology(r: PlanResult) -> list[Row]:
    m = r.head
    b, ratios = m.best, m.ratios
    assert m.homogeneous is not None and m.independent is not None and m.naive is not None  # several sites
    ts = "; ".join(f"{s.site} {tokens(s.threshold_tokens)} ({pct(s.p_offload)} offloaded)" for s in b.sites)
    sp = "; ".join(f"{s.site} N_p / N_d {s.n_p} / {s.n_d}" for s in b.sites)
    gains = [f"{ratios.prfaas_vs_homogeneous:.2f}x homogeneous PD ({m.homogeneous.lambda_max_rps:.3f} req/s)"
             if ratios.prfaas_vs_homogeneous else None,
             f"{ratios.prfaas_vs_independent:.2f}x independent planning ({m.independent.lambda_max_rps:.3f} req/s)"
             if ratios.prfaas_vs_independent else None,
             f"{b.lambda_max_rps / m.naive.lambda_max_rps:.2f}x naive heterogeneous PD "
             f"({m.naive.lambda_max_rps:.3f} req/s)" if m.naive.lambda_max_rps > 0 else None,
             f"{ratios.prfaas_vs_homogeneous_equal_cost:.2f}x homogeneous PD at equal cost"
             if ratios.prfaas_vs_homogeneous_equal_cost else None]
    links = "; ".join(f"{s.link} carries {gbps(s.egress_bytes_per_s)} ({pct(s.link_utilization)})" for s in b.sites)
    tight = [t for t in b.tight if t != b.binding]
    return [
        ("t", "threshold t per site", ts),
        ("split", "split", f"prefill service N_prfaas {b.n_prfaas:g} x {r.prefill.gpus_per_instance}x"
                           f"{r.prefill.hardware} ({pct(b.prfaas_utilization)} busy); {sp}"),
        ("lambda", "Lambda_max", f"{b.lambda_max_rps:.3f} req/s in total (method {r.method})"
                                 + interval_text(r.interval)),
        ("gain", "gain", "; ".join(g for g in gains if g) or "no baseline to compare"),
        ("cost", "cost", _cost(m.cost)),
        ("binds", "what binds", f"{worded(b.binding)}" + (f", equal to {' and '.join(worded(t) for t in tight)}"
                                                          if tight else "") + f"; {links}."),
    ]


def worded(stage: str) -> str:
    """A binding stage in words: "pd-prefill region-a" -> "local prefill at region-a"."""
    kind, _, where = stage.partition(" ")
    words = {"prfaas-compute": "the prefill service's compute", "pd-prefill": "local prefill", "decode": "decode",
             "link": "the link"}.get(kind, kind)
    if not where:
        return words
    return f"{words} {where}" if kind == "link" else f"{words} at {where}"


def _buy(d: ReportData) -> str:
    s: SizingResult | None = d.sizing
    if s is None:
        return ("not sized here: " + (d.notes.get("sizing") or ["the scenario has no sizing: section (demand, "
                                                                "headroom, candidates, link tiers)"])[0])
    p = s.best
    tiers = [f"{gbps(x.link_bandwidth_bytes_per_s)} to {x.site}" for x in p.sites if x.link_tier is not None]
    text = (f"for {s.demand_rps:.3f} req/s at headroom {s.headroom:g}: {fleet(p)}"
            + (f", links {', '.join(tiers)}" if tiers else ", no link") + f"; {money(p.cost.per_hour)}/h "
            f"({money(p.cost.per_million_requests)} per 1M requests)")
    hom = s.best_homogeneous
    if hom is not None:
        saving = 1 - p.cost.per_hour / hom.cost.per_hour
        where = "the same cost as" if abs(saving) < 5e-4 else f"{pct(abs(saving))} {'below' if saving > 0 else 'above'}"
        text += f", {where} the cheapest homogeneous PD fleet ({fleet(hom)}, {money(hom.cost.per_hour)}/h)"
    return text + "." + _whole_or_nothing(d, p)


def _whole_or_nothing(d: ReportData, p: SizedPlan) -> str:
    """Why the cheapest plan offloads every request (or none), and the cheapest plan that splits."""
    if all(0 < x.p_offload < 1 for x in p.sites):
        return ""
    if all(x.p_offload >= 1 for x in p.sites):
        text = " It offloads every request: it is naive heterogeneous PD."
        pre = [c for c in d.prefill_costs if c.role == "prefill service" and c.instance == _prefill(p)]
        loc = [c for c in d.prefill_costs if c.role == "PD site" and c.instance == _local(p)]
        if pre and loc:
            a, b = pre[0], loc[0]
            text += (f" At the catalog's prices a request's prefill costs {money(a.dollars, 4)} on average on "
                     f"{a.instance} ({a.seconds:.3f} s at {money(a.price_per_instance_hour)}/h) against "
                     f"{money(b.dollars, 4)} on {b.instance} ({b.seconds:.3f} s at "
                     f"{money(b.price_per_instance_hour)}/h), so the prefill service is the cheaper place to "
                     "prefill and the local instances only decode.")
    else:
        text = " It offloads nothing: at these prices and link tiers PrfaaS does not pay."
    sel = d.selective
    if sel is None:
        return text + " No plan that splits the traffic serves the demand within the maxima."
    extra = sel.cost.per_hour - p.cost.per_hour
    ts = ", ".join(f"t {tokens(x.threshold_tokens)}, {pct(x.p_offload)} offloaded" for x in sel.sites)
    return text + (f" The cheapest plan that splits the traffic ({ts}: {fleet(sel)}) costs "
                   f"{money(sel.cost.per_hour)}/h, {money(extra)}/h ({pct(extra / p.cost.per_hour)}) more. The "
                   "plan above maximises what the fleet as given serves; sizing minimises what a fleet costs.")


def _prefill(p: SizedPlan) -> str:
    return f"{p.prefill_gpus_per_instance}x{p.prefill_hardware}"


def _local(p: SizedPlan) -> str:
    return f"{p.sites[0].gpus_per_instance}x{p.sites[0].hardware}"


def _risk(d: ReportData) -> str:
    r = d.plan
    parts = []
    if r.robustness is not None:
        head = next((p for p in r.robustness.plans if p.headline), r.robustness.plans[0])
        parts.append(f"over its bandwidth's law the demand ({r.robustness.rate_rps:.3f} req/s) fits "
                     f"{pct(head.fits_fraction)} of the time")
    dg = d.degrade
    if dg is None:
        note = (d.notes.get("robustness") or ["not assessed"])[0]
        return "; ".join([*parts, f"{note} (run `prfaas-plan degrade`)"]) + "."
    for lk in dg.links.values():
        low = min((lv for lv in lk.levels if lv.level > 0), key=lambda lv: lv.level, default=None)
        f = lk.failure
        text = f"{lk.link}: "
        if low is not None and low.level < 1:
            drop = low.static.lambda_max_rps / dg.nominal_lambda_max_rps - 1
            text += (f"at {low.level * 100:.0f}% of its bandwidth ({gbps(low.bandwidth_bytes_per_s)}) the plan as it "
                     f"is serves {low.static.lambda_max_rps:.3f} req/s ({drop * 100:+.1f}%), re-planned "
                     f"{low.replanned.lambda_max_rps:.3f}; ")
        text += (f"down, {f.site} alone serves {f.capacity_down_rps:.3f} req/s ({f.n_p_down}/{f.n_d_down}) and the "
                 f"fleet survives it up to {pct(f.survivable_load)} load")
        if f.extra_instances is not None and f.extra_instances > 0:
            text += (f"; to survive it at {dg.load * 100:.0f}% load {f.site} needs +{f.extra_instances} instances "
                     f"({f.instances} -> {f.instances_needed})")
        parts.append(text)
    return "; ".join(parts) + "."


def decision(d: ReportData) -> tuple[str, list[Row]]:
    """(a sentence saying what the page answers, the rows of the first screen)."""
    sc = d.scenario
    rows = _topology(d.plan) if len(d.plan.sites) > 1 else _one_site(d.plan)
    rows += [("buy", "what to buy", _buy(d)), ("risk", "risk from the link", _risk(d))]
    what = (f"{sc.name}: {sc.model.name}. The answer first, in the planner's words; the evidence (the commands' "
            "own tables and figures) follows, and the glossary explains every symbol.")
    return what, rows


def summary_text(rows: list[Row]) -> str:
    """The first screen as plain text, one "label: text" line per row."""
    return "\n".join(f"{label}: {text}" for _, label, text in rows)


def as_block(rows: list[Row]) -> dict[str, Any]:
    return {"kind": "summary", "rows": [{"key": k, "label": label, "text": text} for k, label, text in rows]}
