"""View of `size`: the cheapest plan, its cost, the baselines, the link-versus-GPU trade and the curves."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, pct, table
from prfaas_plan.report.size_json import saving_fraction, size_csv_rows, size_json
from prfaas_plan.specs.sizing import SizedPlan, SizingResult


def emit_size(fmt: str, r: SizingResult, *, timed: bool = True) -> None:
    """`size`'s tables, JSON and CSV; ``timed=False`` leaves out how long the search took (the
    report: the same inputs give the same page)."""
    payload = size_json(r)
    emit(fmt, payload, rows=size_csv_rows(payload), tables=lambda: _tables(r, timed=timed))


def _gbps(x: float | None) -> str:
    return "-" if x is None else f"{units.bytes_per_s_to_gbps(x):g} Gbps"


def _fleet(p: SizedPlan) -> str:
    parts = [f"{p.n_prfaas}x{p.prefill_gpus_per_instance}x{p.prefill_hardware}"] if p.n_prfaas else []
    parts += [f"{s.n_p + s.n_d}x{s.gpus_per_instance}x{s.hardware}" for s in p.sites]
    return " + ".join(parts)


class _Notes:
    """Why a cell is infeasible, as numbered notes under the table (the reasons are long)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, why: str | None) -> str:
        if why is None:
            return "infeasible"
        if why not in self.lines:
            self.lines.append(why)
        return f"infeasible [{self.lines.index(why) + 1}]"

    def caption(self, first: str | None = None) -> str | None:
        notes = [f"  [{k}] {w}" for k, w in enumerate(self.lines, 1)]
        lines = ([first] if first else []) + notes
        return "\n".join(lines) if lines else None


def _money(x: float | None) -> str:
    return "-" if x is None else f"${num(x, 2)}"


def _plan_tables(r: SizingResult) -> list[Any]:
    b = r.best
    source = f" ({r.demand_source})" if r.demand_source else ""
    head = (f"size {r.scenario}: {r.model}, demand {num(r.demand_rps, 3)} req/s{source} at headroom {r.headroom:g} "
            f"(stages sized for {num(r.demand_rps / r.headroom, 3)} req/s), method {r.method}")
    rows, util = [], []
    if b.n_prfaas:
        rows.append(["prefill service", f"{b.n_prfaas} x {b.prefill_gpus_per_instance}x{b.prefill_hardware}", "-",
                     "-", "-", "-", _money(b.n_prfaas * b.prefill_gpus_per_instance * b.prefill_price_per_gpu_hour)])
        util.append(f"prefill service {pct(b.prfaas_utilization)}")
    for s in b.sites:
        tier = ("no link" if s.link_tier is None
                else f"{_gbps(s.link_bandwidth_bytes_per_s)} ${num(s.link_price_per_hour, 2)}/h")
        rows.append([s.site, f"{s.n_p + s.n_d} x {s.gpus_per_instance}x{s.hardware}", f"{s.n_p} / {s.n_d}",
                     units.format_threshold(s.threshold_tokens), pct(s.p_offload), tier, _money(s.gpu_price_per_hour)])
        util.append(f"{s.site}: " + ", ".join(f"{k.removeprefix('pd-')} {pct(v)}" for k, v in s.utilization.items()))
    c = b.cost
    caption = (f"  cost ${num(c.per_hour, 2)}/h = GPUs ${num(c.gpus_per_hour, 2)} + links ${num(c.links_per_hour, 2)}"
               f" + egress ${num(c.egress_per_hour, 2)}; {b.gpus:,} GPUs\n"
               f"  ${num(c.per_million_requests, 2)} per 1M requests, ${num(c.per_million_output_tokens, 3)} per 1M "
               f"output tokens; tightest stage: {b.tightest}\n  utilisation at the demand:\n    "
               + "\n    ".join(util))
    if r.ttft_bound_s is not None:
        caption += f"\n  TTFT {r.ttft_statistic} at the demand: {num(r.ttft_s, 3)} s <= {r.ttft_bound_s:g} s"
    if not b.offloads:
        caption += "\n  the cheapest plan offloads nothing: PrfaaS does not pay here (see the link-tier table)"
    return [head, "", table("cheapest plan", ["role / site", "instances", "N_p / N_d", "t tokens", "offloaded %",
                                              "link tier", "GPUs $/h"], rows, caption=caption)]


def _baselines(r: SizingResult) -> Any:
    b = r.best
    rows = [["PrfaaS-PD (cheapest)", _fleet(b), str(b.gpus), _money(b.cost.per_hour), "-"]]
    notes = _Notes()
    for name, p, why in r.homogeneous:
        if p is None:
            rows.append([f"homogeneous {name}", notes(why), "-", "-", "-"])
            continue
        rows.append([f"homogeneous {name}", _fleet(p), str(p.gpus), _money(p.cost.per_hour),
                     pct(saving_fraction(b, p))])
    if r.naive is not None:
        rows.append(["naive heterogeneous", _fleet(r.naive), str(r.naive.gpus), _money(r.naive.cost.per_hour),
                     pct(saving_fraction(b, r.naive))])
    return table("against the baselines, same demand and SLOs", ["plan", "fleet", "GPUs", "$/h", "PrfaaS saves %"],
                 rows, caption=notes.caption())


def _tiers(r: SizingResult) -> Any:
    b, hom = r.best, r.best_homogeneous
    rows, notes = [], _Notes()
    for t in r.tiers:
        p = t.plan
        if p is None:
            rows.append([f"{_gbps(t.bandwidth_bytes_per_s)} {_money(t.price_per_hour)}", notes(t.why), "-", "-", "-",
                         "-", ""])
            continue
        ts = ", ".join(units.format_threshold(s.threshold_tokens) for s in p.sites)
        pays = "no offload" if not p.offloads else ("yes" if hom is None or p.cost.per_hour < hom.cost.per_hour
                                                   else "no")
        rows.append([f"{_gbps(t.bandwidth_bytes_per_s)} {_money(t.price_per_hour)}", _money(p.cost.per_hour),
                     f"{p.cost.per_hour - b.cost.per_hour:+,.2f}", f"{p.gpus} ({p.gpus - b.gpus:+d})", ts,
                     pays, _fleet(p)])
    return table("link versus GPUs: the cheapest plan with every link at one tier",
                 ["tier, $/h", "plan $/h", "vs best $/h", "GPUs (vs best)", "t tokens", "PrfaaS pays", "fleet"], rows,
                 caption=notes.caption("  PrfaaS pays: cheaper than the cheapest homogeneous PD fleet"))


def _curve(r: SizingResult) -> Any:
    rows, notes = [], _Notes()
    for d in r.demand_curve:
        p, h = d.prfaas, d.homogeneous
        rows.append([f"{d.factor:g}x", num(d.demand_rps, 3), _money(p.cost.per_hour) if p else notes(d.why),
                     "-" if p is None else ("yes" if p.offloads else "no"),
                     f"{_money(h.cost.per_hour)} ({h.sites[0].hardware})" if h else "infeasible",
                     pct(saving_fraction(p, h)) if p and h else "-"])
    return table("cost versus demand", ["factor", "demand req/s", "PrfaaS-PD $/h", "offloads",
                                        "homogeneous $/h", "PrfaaS saves %"], rows, caption=notes.caption())


def _frontier(r: SizingResult) -> Any:
    notes = _Notes()
    rows = [[f"{t.bound_s:g}", _money(t.plan.cost.per_hour) if t.plan else notes(t.why),
             "-" if t.plan is None else str(t.plan.gpus), num(t.ttft_s, 3)] for t in r.ttft_frontier]
    return table(f"cost versus TTFT bound ({r.ttft_statistic})", ["bound s", "$/h", "GPUs", "TTFT s"], rows,
                 caption=notes.caption())


def _tables(r: SizingResult, *, timed: bool = True) -> list[Any]:
    out = [*_plan_tables(r), _baselines(r), _tiers(r), _curve(r)]
    if r.ttft_frontier:
        out.append(_frontier(r))
    if r.interval is not None:
        out.append(_interval_line(r))
    if timed:
        out.append(f"weighed {r.candidates:,} (kind, t) candidates per solve in {r.search_s:.3f} s")
    return out


def _interval_line(r: SizingResult) -> str:
    """The cheapest fleet's cost for the demand at the stack's P10 and P90 times."""
    iv = r.interval
    assert iv is not None
    if iv.prefill_band is None and iv.decode_band is None:
        return f"fleet cost P10-P90: a point (every candidate's times measured, decode pinned; stack {iv.stack})"
    ends = [("-" if h is None else f"{_money(h)}/h", "infeasible" if m is None else f"${num(m, 0)} per 1M")
            for h, m in ((iv.per_hour_p10, iv.per_million_p10), (iv.per_hour_p90, iv.per_million_p90))]
    return (f"fleet cost P10-P90 (the cheapest fleet for {num(r.demand_rps, 3)} req/s with every modelled time at "
            f"stack {iv.stack}'s P10 / P90): {ends[0][0]} ({ends[0][1]}) / {ends[1][0]} ({ends[1][1]})")
