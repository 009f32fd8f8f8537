"""Views of `optimize` and `sweep`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import BIG, emit, num, table


def _tok(x: float | None) -> str:
    """Tokens, and the paper's K form from 1K on (1K = 1024): "19,194 (18.7K)", "1"."""
    if x is None:
        return "-"
    if x < units.K_TOKENS or abs(x) >= BIG:
        return num(x, 0)
    return f"{x:,.0f} ({units.tokens_to_k(x):.1f}K)"


def _f(x: float | None, digits: int) -> str:
    return num(x, digits, sep=False)


def _t(x: float | None) -> str:
    """A threshold, rounded down: requests longer than it are offloaded (l > t)."""
    return "-" if x is None else _tok(float(int(x)))


def _binding(b: dict[str, Any]) -> str:
    tight = [t for t in b.get("tight", []) if t != b["binding"]]
    return b["binding"] + (f" (= {', '.join(tight)})" if tight else "")


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def emit_plan(fmt: str, p: dict[str, Any]) -> None:
    rows = [{"method": m} | {k: v for k, v in d["best"].items() if k != "tight"} for m, d in p["methods"].items()]
    emit(fmt, p, rows=rows, tables=lambda: _plan_tables(p))


def _plan_tables(p: dict[str, Any]) -> list[Any]:
    b, base, ratios = p["best"], p["baselines"], p["ratios"]
    hom, nv = base["homogeneous"], base["naive_heterogeneous"]
    cl, link = p["clusters"], p["link"]
    sized = p["search"]["n_prfaas_options"] > 1
    n_prfaas = f"up to {p['search']['max_prfaas_instances']}" if sized else str(cl["prfaas"]["instances"])
    title = (f"{p['scenario']}: {p['model']} on {n_prfaas}x{cl['prfaas']['gpus_per_instance']}"
             f"x{cl['prfaas']['hardware']} PrfaaS + {cl['local']['instances']}x{cl['local']['gpus_per_instance']}"
             f"x{cl['local']['hardware']} local PD, {num(link['usable_gbps'], 1)} Gbps usable link "
             f"(method: {p['method']})")
    w = p["workload"]
    best_lines = [
        ["threshold t", _t(b["threshold_tokens"])],
        ["N_prfaas / N_p / N_d", f"{b['n_prfaas']} / {b['n_p']} / {b['n_d']}"],
        ["offloaded p", f"{b['p_offload'] * 100:.1f}%"],
        ["l_long / l_short", f"{_tok(b['l_long_tokens'])} / {_tok(b['l_short_tokens'])}"],
        ["Lambda_max", f"{_f(b['lambda_max_rps'], 3)} req/s"],
        ["bound by", _binding(b)],
        ["PrfaaS path limited by", "-" if b["prfaas_limited_by"] is None else
         f"{b['prfaas_limited_by']} (compute {_f(b['theta_prfaas_compute_rps'], 2)} req/s, "
         f"link {_f(b['theta_prfaas_link_rps'], 2)} req/s)"],
        ["PrfaaS egress", f"{_f(b['egress_gbps'], 2)} Gbps ({(b['link_utilization'] or 0) * 100:.1f}% of the link)"],
        ["workload", f"mean input {num(w['mean_input_tokens'], 0)} tokens, output {num(w['output_tokens'], 0)}"
         + ("" if w["prefix_hit_rate"] is None else f", prefix hit rate {w['prefix_hit_rate'] * 100:.1f}%")],
    ]
    out: list[Any] = [table(title, ["best PrfaaS-PD plan", ""], best_lines)]

    def r(x: float | None) -> str:
        return num(x, 2)

    sys_rows = [
        ["instances (prfaas/p/d)", f"{b['n_prfaas']} / {b['n_p']} / {b['n_d']}",
         f"- / {hom['n_p']} / {hom['n_d']}" if hom else "-", f"{nv['n_prfaas']} / - / {nv['n_d']}" if nv else "-"],
        ["Theta_prfaas req/s", r(b["theta_prfaas_rps"]), "-", r(nv["theta_prfaas_rps"]) if nv else "-"],
        ["Theta_pd-p req/s", r(b["theta_pd_p_rps"]), r(hom["theta_pd_p_rps"]) if hom else "-", "-"],
        ["Theta_pd-d req/s", r(b["theta_pd_d_rps"]), r(hom["theta_pd_d_rps"]) if hom else "-",
         r(nv["theta_pd_d_rps"]) if nv else "-"],
        ["Lambda_max req/s", r(b["lambda_max_rps"]), r(hom["lambda_max_rps"]) if hom else "-",
         r(nv["lambda_max_rps"]) if nv else "-"],
        ["vs homogeneous", _x(ratios.get("prfaas_vs_homogeneous")), "1.00x" if hom else "-",
         _x(ratios.get("naive_vs_homogeneous"))],
        ["bound by", b["binding"], hom["binding"] if hom else "-", nv["binding"] if nv else "-"],
        ["$ per 1M requests", num(b.get("cost_per_million_requests"), 0),
         num(hom.get("cost_per_million_requests"), 0) if hom else "-",
         num(nv.get("cost_per_million_requests"), 0) if nv else "-"],
    ]
    caption = None
    if ratios.get("prfaas_vs_homogeneous_equal_cost") is not None:
        caption = (f"At equal cost (GPU-hour prices in the catalog), PrfaaS-PD serves "
                   f"{_x(ratios['prfaas_vs_homogeneous_equal_cost'])} the requests of homogeneous PD.")
    homog_name = f"Homogeneous PD ({hom['instances']}x{hom['hardware']})" if hom else "Homogeneous PD"
    out.append(table("Systems side by side", ["", "PrfaaS-PD", homog_name, "Naive heterogeneous"], sys_rows,
                     caption=caption))
    m_rows = []
    for name, d in p["methods"].items():
        bb = d["best"]
        m_rows.append([name, _t(bb["threshold_tokens"]), f"{bb['n_prfaas']}/{bb['n_p']}/{bb['n_d']}",
                       f"{bb['p_offload'] * 100:.1f}%", _tok(bb["l_long_tokens"]), _f(bb["lambda_max_rps"], 3),
                       num(bb["egress_gbps"], 2), _x(d["ratios"].get("prfaas_vs_homogeneous")),
                       _x(d["ratios"].get("naive_vs_homogeneous"))])
    out.append(table("Both methods (paper: each stage at its mean length; exact: expectations over lengths)",
                     ["method", "t", "split", "p", "l_long", "Lambda", "egress Gbps", "vs homog.", "naive vs homog."],
                     m_rows))
    slo = p.get("ttft_slo")
    if slo is not None:
        rows = []
        for name, label in (("prfaas", "PrfaaS-PD"), ("homogeneous", "Homogeneous PD"),
                            ("naive_heterogeneous", "Naive heterogeneous")):
            d = slo.get(name)
            if d is None:
                rows.append([label, "-", "-", "none", "-", "misses the bound even at zero load", "ttft"])
                continue
            t_txt = "-" if d["threshold_tokens"] in (None, 0.0) else _t(d["threshold_tokens"])
            rows.append([label, t_txt, f"{d['n_prfaas']}/{d['n_p']}/{d['n_d']}", _f(d["lambda_ttft_rps"], 3),
                         _f(d["capacity_rps"], 3), f"{_f(d['ttft_mean_s'], 2)} / {_f(d['ttft_p90_s'], 2)} / "
                         f"{_f(d['ttft_p99_s'], 2)}", d["binding"]])
        ratio = slo["ratios"].get("prfaas_vs_homogeneous")
        title = f"Under the TTFT SLO: {slo['statistic']} TTFT <= {slo['bound_s']:g} s (analytic latency model)"
        out.append(table(title,
                         ["system", "t", "prfaas/p/d", "rate req/s", "capacity req/s", "TTFT mean / P90 / P99 s",
                          "bound by"], rows,
                         caption=None if ratio is None else f"PrfaaS-PD vs homogeneous under the SLO: {_x(ratio)}"))
    top = [[i + 1, _t(o["threshold_tokens"]), f"{o['n_prfaas']}/{o['n_p']}/{o['n_d']}",
            _f(o["lambda_max_rps"], 3), _binding(o)] for i, o in enumerate(p["top"])]
    out.append(table("Top configurations", ["#", "t", "prfaas/p/d", "Lambda req/s", "bound by"], top,
                     caption="\n".join(f"{k}: {v}" for k, v in p["sources"].items())))
    return out


def emit_sweep(fmt: str, s: dict[str, Any]) -> None:
    def tables():
        rows = []
        for r in s["rows"]:
            if not r["feasible"]:
                rows.append([r["value_text"], "infeasible", "", "", "", "", r["reason"]])
                continue
            rows.append([r["value_text"], _t(r["threshold_tokens"]), f"{r['n_prfaas']}/{r['n_p']}/{r['n_d']}",
                         _f(r['lambda_max_rps'], 3), _x(r["prfaas_vs_homogeneous"]),
                         f"{_f(r['egress_gbps'], 2)} ({(r['link_utilization'] or 0) * 100:.0f}%)",
                         _binding(r)])
        return [table(f"Sweep of {s['key']} ({s['scale']} steps)",
                      [s["key"], "t", "prfaas/p/d", "Lambda req/s", "vs homog.", "egress Gbps (link %)", "bound by"],
                      rows)]

    emit(fmt, s, rows=[{k: v for k, v in r.items() if k != "tight"} for r in s["rows"]], tables=tables)
