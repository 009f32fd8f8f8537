"""View of `optimize` on a scenario of several models (``api.fleet``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.fleet_json import fleet_csv_rows, fleet_json
from prfaas_plan.report.latency_json import scalar_rows
from prfaas_plan.report.render import emit, finite, num, pct, secs, table
from prfaas_plan.report.views_plan import fixed, t_text, tight_text, x_text
from prfaas_plan.specs.fleet import FleetMethodPlan, FleetPlanResult, FleetPoint, FleetSimulateRun


def emit_fleet(fmt: str, r: FleetPlanResult) -> None:
    """`optimize` on several models: the tables read the typed result, JSON and CSV its JSON."""
    payload = fleet_json(r)
    emit(fmt, payload, rows=fleet_csv_rows(payload), tables=lambda: _tables(r))


def _gbps(x: float) -> str:
    return num(units.bytes_per_s_to_gbps(x), 2)


def _entry_rows(p: FleetPoint) -> list[list[str]]:
    rows = []
    for e in p.entries:
        rows.append([e.label, f"{e.demand_share * 100:.0f}%",
                     t_text(e.threshold_tokens), f"{e.n_p} / {e.n_d}", str(e.n_prfaas), pct(e.p_offload),
                     fixed(e.lambda_rps, 3), _gbps(e.egress_bytes_per_s), pct(e.prfaas_utilization)])
    return rows


def _lam(p: FleetPoint | None) -> str:
    return "none" if p is None else fixed(p.lambda_max_rps, 3)


def _systems(m: FleetMethodPlan) -> list[list[str]]:
    sep, hom = m.separate, m.homogeneous
    return [
        ["Lambda_max req/s", _lam(m.best), _lam(sep), _lam(hom)],
        ["shared vs this", "1.00x", x_text(m.ratios.shared_vs_separate), x_text(m.ratios.shared_vs_homogeneous)],
        ["bound by", m.best.binding, sep.binding if sep else "-", hom.binding if hom else "-"],
        ["N_prfaas per model", _assign(m.best), _assign(sep) if sep else "-", "-"],
    ]


def _assign(p: FleetPoint) -> str:
    return " / ".join(str(e.n_prfaas) for e in p.entries)


def _tables(r: FleetPlanResult) -> list[Any]:
    m = r.methods[r.method]
    b = m.best
    pre = r.prefill
    sites = ", ".join(f"{n} ({p.instances}x{p.gpus_per_instance}x{p.hardware})" for n, p in r.sites)
    title = (f"{r.scenario}: {len(r.models)} models, prefill service {r.prefill_site} ({pre.instances}x"
             f"{pre.gpus_per_instance}x{pre.hardware}) for {sites} (method: {r.method})")
    links = "; ".join(f"link {lk.link} {_gbps(lk.egress_bytes_per_s)} / {_gbps(lk.usable_bytes_per_s)} Gbps "
                      f"({pct(lk.utilization)})" for lk in b.links)
    caption = (f"Lambda_max {fixed(b.lambda_max_rps, 3)} req/s in total (each model at its share), bound by "
               f"{tight_text(b.binding, b.tight)}. {links}.")
    out: list[Any] = [table(title, ["model", "demand %", "t tokens", "N_p / N_d", "N_prfaas", "offloaded p %",
                                    "lambda req/s", "egress Gbps", "PrfaaS busy %"],
                            _entry_rows(b), caption=caption)]
    order = " / ".join(e.label for e in b.entries)
    per = "model" if len(r.sites) == 1 else "model and site"
    out.append(table("Systems side by side", ["", "one shared service", "separate services (by demand)",
                                              "homogeneous PD"], _systems(m),
                     caption=(f"N_prfaas per {per}: {order}. Separate services: the prefill service and each "
                              "link cut in proportion to the models' demand shares; homogeneous PD: the service's "
                              "GPUs added to the PD sites, nothing offloaded.")))
    m_rows = [[name, ", ".join(f"{t_text(e.threshold_tokens)} {e.n_p}/{e.n_d}/{e.n_prfaas}" for e in d.best.entries),
               fixed(d.best.lambda_max_rps, 3), x_text(d.ratios.shared_vs_separate),
               x_text(d.ratios.shared_vs_homogeneous), d.best.binding] for name, d in r.methods.items()]
    out.append(table("Both methods", ["method", f"t tokens N_p/N_d/N_prfaas ({order})", "Lambda req/s",
                                      "vs separate", "vs homog.", "bound by"], m_rows))
    kv = ", ".join(f"{x.name} {units.bytes_to_mib(x.kv_bytes_per_token) * 1024:.1f} KiB/token ({x.stack})"
                   for x in r.models)
    return [*out, f"KV per uncached token at the mean length: {kv}",
            "Decode rates unstaged; thresholds on each model's grid, refined off it (as optimize does)."]


FLEET_NAMES = {"prfaas": "one shared service", "separate": "separate services"}


def emit_fleet_sim(fmt: str, r: FleetSimulateRun) -> None:
    """`simulate` on several models: per configuration and model, the simulated TTFT."""
    from prfaas_plan.report.fleet_json import fleet_simulate_json

    payload = fleet_simulate_json(r)

    def tables() -> list[Any]:
        rows = []
        for name, run in r.systems.items():
            res = run.result
            links = ", ".join(pct(res.stage_utilization.get(f"link {k}")) for k, _ in run.system.links)
            rows.append([FLEET_NAMES.get(name, name), "all", f"{run.load * 100:.0f}%", secs(finite(res.ttft.mean)),
                         secs(finite(res.ttft.quantile(0.9))), secs(finite(res.ttft.quantile(0.99))),
                         fixed(res.throughput_rps, 3), pct(res.prfaas_utilization), links])
            for label, sr in res.sites.items():
                h = sr.ttft
                rows.append(["", label, "", secs(finite(h.mean)), secs(finite(h.quantile(0.9))),
                             secs(finite(h.quantile(0.99))), fixed(sr.throughput_rps, 3),
                             pct(sr.utilization.get("prfaas")), ""])
        caps = "; ".join(f"{FLEET_NAMES.get(n, n)} {fixed(run.system.capacity_rps, 3)} req/s "
                         f"({run.system.capacity_binding})" for n, run in r.systems.items())
        return [table(f"{r.scenario}: simulated at {fixed(r.rate_rps, 3)} req/s in total ({r.load * 100:.0f}% of the "
                      f"smaller capacity), {r.requests or 0:,} requests, seed {r.seed}",
                      ["system", "model", "load", "TTFT mean s", "P90 s", "P99 s", "throughput req/s",
                       "PrfaaS busy %", "link busy %"], rows,
                      caption=f"Capacity (exact method at each configuration): {caps}.")]

    emit(fmt, payload, rows=scalar_rows(payload, inner="simulated.sites", inner_label="model"),
         tables=tables)

