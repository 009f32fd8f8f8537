"""The view of `optimize`: one PD site's tables (every bound of Eqs. 3-6, the runners-up) or a
topology's (per site, against independent planning), from the one result type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prfaas_plan import units
from prfaas_plan.report.plan_json import plan_csv_rows, plan_json
from prfaas_plan.report.plan_parts import prfaas_limited_by
from prfaas_plan.report.render import BIG, emit, num, pct, table
from prfaas_plan.specs.decode import DecodeDetail
from prfaas_plan.specs.results import LambdaInterval, MethodPlan, OperatingPoint, PlanResult, TopologyPoint
from prfaas_plan.specs.robust import RateLevel, Robustness
from prfaas_plan.specs.slo import SloPlan


def _tok(x: float | None) -> str:
    """Tokens, and the paper's K form from 1K on (1K = 1024): "19,194 (18.7K)", "1"."""
    if x is None:
        return "-"
    if x < units.K_TOKENS or abs(x) >= BIG:
        return num(x, 0)
    return f"{x:,.0f} ({units.tokens_to_k(x):.1f}K)"


def fixed(x: float | None, digits: int) -> str:
    return num(x, digits, sep=False)


def t_text(x: float | None) -> str:
    """A threshold, rounded down: requests longer than it are offloaded (l > t)."""
    return "-" if x is None else _tok(float(units.shown_threshold(x)))


def tight_text(binding: str, tight: Sequence[str]) -> str:
    """What binds, with the constraints tied with it: "prfaas-compute (= pd-prefill)"."""
    others = [t for t in tight if t != binding]
    return binding + (f" (= {', '.join(others)})" if others else "")


def x_text(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def staging_line(d: DecodeDetail, where: str = "") -> str | None:
    """One line on decode staging (``api.staging``) where requests are staged; None where none are."""
    staged = d.staged_requests_per_instance or 0.0
    if staged <= 0:
        return None
    head = (f"decode staging{where}: {staged:.3g} requests/instance staged (tau {d.staging_s:.3f} s, "
            "unloaded transfer)")
    if d.staged_slot_weight is not None:
        head += f", {d.staged_slot_weight:.2f} slots each"
    if d.shape.derived:
        if not d.bs_max_lost:
            return f"{head}; BS_max {num(d.bs_max, 0)} kept"
        return f"{head}; BS_max {fixed(d.shape.bs_max, 0)} -> {fixed(d.bs_max, 2)} ({fixed(d.bs_max_lost, 2)} lost)"
    room = d.memory_headroom
    if room is None:
        return f"{head}; pinned BS_max {d.bs_max}"
    over = "more than" if d.staging_exceeds_headroom else "within"
    return f"{head}; pinned BS_max {d.bs_max}, {over} the memory headroom of {room}"


def emit_plan(fmt: str, r: PlanResult) -> None:
    """`optimize`: the tables read the typed result, JSON and CSV its JSON."""
    payload = plan_json(r)
    emit(fmt, payload, rows=plan_csv_rows(r, payload),
         tables=lambda: _topology_tables(r) if len(r.sites) > 1 else _plan_tables(r))


def _names(op: OperatingPoint) -> str:
    return tight_text(str(op.binding), [str(t) for t in op.tight])


def _best_lines(r: PlanResult, b: OperatingPoint) -> list[list[str]]:
    site = r.site
    limited = prfaas_limited_by(b)
    return [
        ["threshold t", t_text(b.threshold_tokens)],
        ["N_prfaas / N_p / N_d", f"{b.n_prfaas} / {b.n_p} / {b.n_d}"],
        ["offloaded p", f"{b.p_offload * 100:.1f}%"],
        ["l_long / l_short", f"{_tok(b.l_long_tokens)} / {_tok(b.l_short_tokens)}"],
        ["Lambda_max", f"{fixed(b.lambda_max_rps, 3)} req/s"],
        *([["Lambda_max P10-P90", interval_words(r.interval)]] if r.interval and r.interval.dominant != "none"
          else []),
        ["bound by", _names(b)],
        ["PrfaaS path limited by", "-" if limited is None else
         f"{limited} (compute {fixed(b.theta_prfaas_compute_rps, 2)} req/s, "
         f"link {fixed(b.theta_prfaas_link_rps, 2)} req/s)"],
        ["PrfaaS egress", f"{fixed(units.bytes_per_s_to_gbps(b.egress_bytes_per_s), 2)} Gbps "
         f"({(b.link_utilization or 0) * 100:.1f}% of the link)"],
        ["workload", f"mean input {num(site.mean_input_tokens, 0)} tokens, output {num(site.output_tokens, 0)}"
         + hit_rate_words(site.prefix_hit_rate, site.hit_rate_source) + _dropped(site.distribution)],
    ]


def interval_words(iv: LambdaInterval) -> str:
    """"3.01-3.52 req/s, $19,757-23,101 per 1M (prefill time's band)"."""
    cost = ""
    if iv.cost_per_million_p10 is not None and iv.cost_per_million_p90 is not None:
        cost = f", ${num(iv.cost_per_million_p10, 0)}-{num(iv.cost_per_million_p90, 0)} per 1M"
    return f"{fixed(iv.lambda_p10_rps, 3)}-{fixed(iv.lambda_p90_rps, 3)} req/s{cost} ({iv.dominant}'s band)"


def interval_line(iv: LambdaInterval | None) -> str | None:
    """The closing line of a plan whose Lambda_max models nothing (measured prefill, pinned decode)."""
    if iv is None or iv.dominant != "none":
        return None
    return ("Lambda_max P10-P90: a point (every prefill time measured, decode pinned; no modelled time to "
            "carry a band)")


def planned_rate_line(lv: RateLevel | None, lambda_max_rps: float) -> str | None:
    """The closing line of a plan at a trace's busy window (--plan-at rate=pNN), with its headroom."""
    if lv is None:
        return None
    return f"{lv.describe()}: Lambda_max is {lambda_max_rps / lv.rate_rps:.2f}x that rate"


def hit_rate_words(rate: float | None, source: str | None) -> str:
    """", prefix hit rate 65.1% (measured)", "... (assumed)", "... unknown (...)"; "" for a parametric workload."""
    if source == "unknown":
        return ", prefix hit rate unknown (no prefix hashes in the trace)"
    if rate is None:
        return ""
    return f", prefix hit rate {rate * 100:.1f}%" + ("" if source is None else f" ({source})")


def _dropped(d: Any) -> str:
    """What a BurstGPT trace's reading left out: failed requests (0 response tokens), other models' rows."""
    failed, other = d.get("failed_excluded") or 0, d.get("filtered_out") or 0
    parts = ([f"{failed:,} failed"] if failed else []) + ([f"{other:,} other-model rows"] if other else [])
    return f"; left out {' and '.join(parts)}" if parts else ""


def _systems(m: MethodPlan) -> list[list[str]]:
    assert m.grid is not None
    b, hom, nv, ratios = m.grid.best, m.grid.homogeneous, m.grid.naive, m.ratios
    h, n = (hom.point if hom else None), (nv.point if nv else None)

    def r(x: float | None) -> str:
        return num(x, 2)

    return [
        ["instances (prfaas/p/d)", f"{b.n_prfaas} / {b.n_p} / {b.n_d}", f"- / {h.n_p} / {h.n_d}" if h else "-",
         f"{n.n_prfaas} / - / {n.n_d}" if n else "-"],
        ["Theta_prfaas req/s", r(b.theta_prfaas_rps), "-", r(n.theta_prfaas_rps) if n else "-"],
        ["Theta_pd-p req/s", r(b.theta_pd_p_rps), r(h.theta_pd_p_rps) if h else "-", "-"],
        ["Theta_pd-d req/s", r(b.theta_pd_d_rps), r(h.theta_pd_d_rps) if h else "-", r(n.theta_pd_d_rps) if n else "-"],
        ["Lambda_max req/s", r(b.lambda_max_rps), r(h.lambda_max_rps) if h else "-", r(n.lambda_max_rps) if n else "-"],
        ["vs homogeneous", x_text(ratios.prfaas_vs_homogeneous), "1.00x" if h else "-",
         x_text(ratios.naive_vs_homogeneous)],
        ["bound by", str(b.binding), str(h.binding) if h else "-", str(n.binding) if n else "-"],
        ["$ per 1M requests", num(m.cost.cost_per_million_requests, 0),
         num(hom.cost.cost_per_million_requests, 0) if hom else "-",
         num(nv.cost.cost_per_million_requests, 0) if nv else "-"],
    ]


def _slo_table(slo: SloPlan, planned: RateLevel | None = None) -> Any:
    """Each system under the TTFT SLO: one PD site's t and split with its TTFT, or each site's
    t_i and split (N_prfaas) with the highest site's statistic."""
    several = len(slo.prfaas.sites) > 1
    rows = []
    for d, label in ((slo.prfaas, "PrfaaS-PD"), (slo.homogeneous, "Homogeneous PD"),
                     (slo.naive_heterogeneous, "Naive heterogeneous")):
        if d is None:
            rows.append([label, "-", *([] if several else ["-"]), "none", "-", "misses the bound even at zero load",
                         "ttft"])
            continue
        if several:
            conf = [", ".join(f"{_slo_t(x.threshold_tokens)} {x.n_p}/{x.n_d}" for x in d.sites) + f" ({d.n_prfaas})"]
            ttft = fixed(d.ttft_at_rate_s, 2)
        else:
            x = d.sites[0]
            conf = [_slo_t(x.threshold_tokens), f"{d.n_prfaas}/{x.n_p}/{x.n_d}"]
            ttft = f"{fixed(x.ttft_mean_s, 2)} / {fixed(x.ttft_p90_s, 2)} / {fixed(x.ttft_p99_s, 2)}"
        rows.append([label, *conf, fixed(d.lambda_ttft_rps, 3), fixed(d.capacity_rps, 3), ttft, d.binding])
    ratio = slo.prfaas_vs_homogeneous
    title = (f"Under the TTFT SLO: {slo.statistic} TTFT <= {slo.bound_s:g} s"
             + (" at every site" if several else "") + " (analytic latency model)")
    caption = [] if ratio is None else [f"PrfaaS-PD vs homogeneous under the SLO: {x_text(ratio)}"]
    if planned is not None:
        caption.append(f"rate: the busy window's, held ({planned.label.upper()} of the trace's windowed rate); the "
                       f"trace's mean rate at it is {1 / planned.factor:.3g}x")
    names = ", ".join(x.site for x in slo.prfaas.sites)
    conf_cols = [f"t tokens, N_p/N_d per site ({names}) (N_prfaas)"] if several else ["t tokens", "prfaas/p/d"]
    ttft_col = f"highest site's {slo.statistic} TTFT s" if several else "TTFT mean / P90 / P99 s"
    return table(title, ["system", *conf_cols, "rate req/s", "capacity req/s", ttft_col, "bound by"], rows,
                 caption="\n".join(caption) or None)


def _slo_t(t: float | None) -> str:
    return "-" if t in (None, 0.0) else t_text(t)


def _gbps(b: float) -> str:
    return num(units.bytes_per_s_to_gbps(b), 2)


def _law_line(lk: Any) -> str:
    per = " / ".join(f"{k.upper()} {_gbps(v)}" for k, v in lk.percentiles_bytes_per_s.items())
    usable = "" if dict(lk.usable_bytes_per_s) == dict(lk.percentiles_bytes_per_s) else \
        " (usable " + " / ".join(_gbps(v) for v in lk.usable_bytes_per_s.values()) + ")"
    if lk.kind is None:
        return f"{lk.link}: {per} Gbps{usable}: a fixed bandwidth, held at every percentile"
    name = lk.source.replace("\\", "/").rsplit("/", 1)[-1]
    where = f" {name}, {lk.samples:,} rows" if name else f" ({lk.samples} percentiles given, a step law)"
    down = f", down {lk.down_fraction * 100:.2f}% of the time" if lk.down_fraction > 0 else ""
    return f"{lk.link}: {lk.kind}{where}: {per} Gbps{usable}, mean {_gbps(lk.mean_bytes_per_s)} Gbps{down}"


def robustness_table(rb: Robustness, *, topology: bool = False) -> Any:
    """`optimize` with a bandwidth law: each plan held, at each percentile and over the law."""
    labels = {"nominal": "nominal", "safe": "safe", "plan-at": "--plan-at"}
    rows = []
    for p in rb.plans:
        if topology:
            conf = [", ".join(f"{t_text(s.threshold_tokens)} {s.n_p}/{s.n_d}" for s in p.sites) + f" ({p.n_prfaas:g})"]
        else:
            s = p.sites[0]
            conf = [t_text(s.threshold_tokens), f"{p.n_prfaas:g}/{s.n_p}/{s.n_d}"]
        rows.append([f"{labels[p.name]} ({p.planned_at.upper()}){' *' if p.headline else ''}", *conf,
                     *(fixed(a.lambda_max_rps, 3) for a in p.at), fixed(p.expected_served_rps, 3),
                     f"{p.served_fraction * 100:.1f}%", f"{p.fits_fraction * 100:.1f}%"])
    sites = ", ".join(s.site for s in rb.plans[0].sites)
    conf_cols = [f"t tokens, N_p/N_d per site ({sites}) (N_prfaas)"] if topology else ["t tokens", "prfaas/p/d"]
    caption = [_law_line(lk) for lk in rb.links]
    if rb.comonotone:
        caption.append("All links at the same percentile of their own laws (comonotone: a bad hour is bad on every "
                       "link).")
    caption.append(f"Demand {fixed(rb.rate_rps, 3)} req/s ({rb.rate_source}); E[served] = E_B[min(demand, Lambda(B))] "
                   f"and fits = P_B(Lambda(B) >= demand) over the law ({rb.states:,} bandwidth states).")
    caption += list(rb.notes)
    caption.append("* the plan above" + (f", optimised at {rb.plan_at.upper()} of every law (--plan-at)"
                                           if rb.plan_at else "") + "; nominal: optimised at the median, safe: at P10.")
    return table("Bandwidth that varies: each plan's configuration held, Lambda_max req/s at each percentile",
                 ["plan", *conf_cols, *(f"at {q.upper()}" for q in rb.percentiles), "E[served] req/s",
                  "of demand %", "fits %"], rows, caption="\n".join(caption))


def _plan_tables(r: PlanResult) -> list[Any]:
    m, site = r.head, r.site
    assert m.grid is not None
    n_prfaas = f"up to {r.max_prfaas_instances}" if r.n_prfaas_options > 1 else str(r.prefill.instances)
    pre = f"{n_prfaas}x{r.prefill.gpus_per_instance}x{r.prefill.hardware}"
    pd = f"{site.pool.instances}x{site.pool.gpus_per_instance}x{site.pool.hardware}"
    gbps = num(units.bytes_per_s_to_gbps(site.link_usable_bytes_per_s), 1)
    named = (r.prefill_site, site.name) != ("prfaas", "local")  # one PD site under sites: (the user's names)
    title = (f"{r.scenario}: {r.model} on "
             + (f"{r.prefill_site} ({pre} PrfaaS) + {site.name} ({pd} PD), {gbps} Gbps usable link {site.link}"
                if named else f"{pre} PrfaaS + {pd} local PD, {gbps} Gbps usable link")
             + (f" at {r.robustness.plan_at.upper()} of its law" if r.robustness and r.robustness.plan_at else "")
             + f" (method: {r.method})")
    out: list[Any] = [table(title, ["best PrfaaS-PD plan", ""], _best_lines(r, m.grid.best))]
    equal_cost = m.ratios.prfaas_vs_homogeneous_equal_cost
    caption = None if equal_cost is None else (
        f"At equal cost (GPU-hour prices in the catalog), PrfaaS-PD serves {x_text(equal_cost)} the requests of "
        "homogeneous PD.")
    hom = m.grid.homogeneous
    homog_name = f"Homogeneous PD ({hom.instances}x{hom.hardware})" if hom else "Homogeneous PD"
    out.append(table("Systems side by side", ["", "PrfaaS-PD", homog_name, "Naive heterogeneous"], _systems(m),
                     caption=caption))
    m_rows = []
    for name, d in r.methods.items():
        assert d.grid is not None
        bb = d.grid.best
        m_rows.append([name, t_text(bb.threshold_tokens), f"{bb.n_prfaas}/{bb.n_p}/{bb.n_d}",
                       f"{bb.p_offload * 100:.1f}%",
                       _tok(bb.l_long_tokens), fixed(bb.lambda_max_rps, 3),
                       num(units.bytes_per_s_to_gbps(bb.egress_bytes_per_s), 2),
                       x_text(d.ratios.prfaas_vs_homogeneous), x_text(d.ratios.naive_vs_homogeneous)])
    out.append(table("Both methods (paper: each stage at its mean length; exact: expectations over lengths)",
                     ["method", "t tokens", "split", "p %", "l_long tokens", "Lambda req/s", "egress Gbps", "vs homog.",
                      "naive vs homog."],
                     m_rows))
    if r.ttft_slo is not None:
        out.append(_slo_table(r.ttft_slo, r.planned_rate))
    if r.robustness is not None:
        out.append(robustness_table(r.robustness))
    top = [[i + 1, t_text(o.threshold_tokens), f"{o.n_prfaas}/{o.n_p}/{o.n_d}", fixed(o.lambda_max_rps, 3), _names(o)]
           for i, o in enumerate(m.grid.top)]
    out.append(table("Top configurations", ["#", "t tokens", "prfaas/p/d", "Lambda req/s", "bound by"], top,
                     caption="\n".join(f"{k}: {v}" for k, v in r.sources.items())))
    lines = [staging_line(site.decode), interval_line(r.interval),
             planned_rate_line(r.planned_rate, m.best.lambda_max_rps)]
    return out + [x for x in lines if x]


def _kinds(bindings: list[str]) -> str:
    """What binds each site of a baseline, once per kind: "decode" or "decode, link"."""
    return ", ".join(dict.fromkeys(b.split(" ")[0] for b in bindings))


def _site_rows(r: PlanResult, b: TopologyPoint) -> list[list[str]]:
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


def _joint_systems(m: MethodPlan) -> list[list[str]]:
    b, hom, ind, nv, ratios = m.best, m.homogeneous, m.independent, m.naive, m.ratios
    assert hom is not None and ind is not None and nv is not None and m.naive_cost is not None  # several sites
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


def _topology_tables(r: PlanResult) -> list[Any]:
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
    assert m.homogeneous is not None
    homog = " + ".join(f"{s.baseline.instances}x{s.baseline.hardware}" for s in m.homogeneous.sites)
    caption = (f"Joint planning serves {x_text(m.ratios.prfaas_vs_independent)} the requests of independent "
               "planning (the prefill service split by demand share, each site optimised alone).")
    if m.ratios.prfaas_vs_homogeneous_equal_cost is not None:
        caption += (f" At equal cost (catalog GPU-hour prices) it serves "
                    f"{x_text(m.ratios.prfaas_vs_homogeneous_equal_cost)} the requests of homogeneous PD.")
    out.append(table("Systems side by side", ["", "joint PrfaaS-PD", "independent planning",
                                              f"homogeneous PD ({homog})", "naive heterogeneous"], _joint_systems(m),
                     caption=caption))
    if r.ttft_slo is not None:
        out.append(_slo_table(r.ttft_slo, r.planned_rate))
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
