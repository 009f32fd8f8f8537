"""View of `latency`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.latency_json import latency_json, scalar_rows
from prfaas_plan.report.render import SYSTEM_NAMES, emit, pct, secs, table
from prfaas_plan.report.views_plan import t_text
from prfaas_plan.specs.latency import TRACE_CHECK_RTOL, LatencyResult, SystemTiming


def emit_latency(fmt: str, r: LatencyResult) -> None:
    """`latency`: the tables read the typed timings, JSON and CSV its JSON. One PD site: each system
    and each of its paths; several: each system over every request and per site."""
    payload = latency_json(r)
    if len(r.sites) > 1:
        emit(fmt, payload, rows=scalar_rows(payload, inner="sites"), tables=lambda: _sites_tables(r))
        return
    systems = r.at_site(r.sites[0])

    def tables():
        rows = []
        for name, s in systems.items():
            split = f"{s.n_prfaas}/{s.n_p}/{s.n_d}"
            if not s.stable:
                rows.append([SYSTEM_NAMES.get(name, name), split, f"{s.load * 100:.0f}%",
                             "unstable: " + ", ".join(s.unstable_stages), "", "", "", "",
                             secs(s.zero_load_ttft_mean_s)])
                continue
            rows.append([SYSTEM_NAMES.get(name, name), split, f"{s.load * 100:.0f}%", secs(s.ttft_mean_s),
                         secs(s.ttft_p50_s), secs(s.ttft_p90_s), secs(s.ttft_p99_s), f"{units.s_to_ms(s.tpot_s):.1f}",
                         secs(s.zero_load_ttft_mean_s)])
        out = trace_tables(r)
        out += [table(f"{r.scenario}: analytic TTFT at {r.rate_rps:.3f} req/s "
                     f"({r.load * 100:.0f}% of the smallest capacity)",
                     ["system", "prfaas/p/d", "load %", "TTFT mean s", "P50 s", "P90 s", "P99 s", "TPOT ms",
                      "zero-load s"], rows)]
        path_rows = [[SYSTEM_NAMES.get(name, name), p.name, f"{p.share * 100:.1f}%", secs(p.wait_mean_s),
                      secs(p.prefill_mean_s), secs(p.transfer_mean_s), secs(p.admission_mean_s), secs(p.ttft_mean_s),
                      secs(p.ttft_p90_s)]
                     for name, s in systems.items() for p in s.paths]
        out.append(table("Per path (TTFT = queue wait + prefill + exposed transfer + decode admission)",
                         ["system", "path", "share %", "wait s", "prefill s", "transfer s", "admission s", "mean s",
                          "P90 s"], path_rows))
        return out

    emit(fmt, payload, rows=scalar_rows(payload), tables=tables)


def trace_tables(r: LatencyResult) -> list[Any]:
    """With a trace, first its replay in the simulator, and one line per system where the analytic
    model does not hold for these arrivals."""
    c = r.trace_check
    if c is None:
        return []
    rows = []
    for name, (mean, p90) in c.simulated.items():
        a = r.systems[name].sites[r.sites[0]].ttft_p90_s
        rows.append([SYSTEM_NAMES.get(name, name), secs(mean), secs(p90), secs(a) if a is not None else "unstable",
                     "yes" if c.holds[name] else "no"])
    out = [table(f"{r.scenario}: the trace replayed in the simulator ({c.requests:,} requests at {r.rate_rps:.3f} "
                 f"req/s; rate peak-to-mean {c.peak_to_mean:.2f} over its windows, gaps' SCV {c.arrival_scv:.2f} "
                 "inside them)",
                 ["system", "simulated TTFT mean s", "simulated P90 s", "analytic P90 s",
                  f"analytic within {TRACE_CHECK_RTOL:.0%}"], rows)]
    wrong = [SYSTEM_NAMES.get(n, n) for n, ok in c.holds.items() if not ok]
    if wrong:
        out.append(f"the analytic TTFT below does not hold for this trace's arrivals for {', '.join(wrong)}: "
                   "take the simulated values above (`prfaas-plan simulate --trace` for more)")
    return out


def _split(t: SystemTiming) -> str:
    return f"{t_text(t.threshold_tokens) if t.threshold_tokens else '-'} {t.n_p}/{t.n_d}"


def _sites_tables(r: LatencyResult) -> list[Any]:
    """Several PD sites: each system over every request, then at each site."""
    rows = []
    for name, s in r.systems.items():
        busy = pct(s.prfaas_utilization) if s.n_prfaas else "-"
        ttft = [secs(s.ttft_mean_s), secs(s.ttft_p50_s), secs(s.ttft_p90_s), secs(s.ttft_p99_s)]
        if not s.stable:
            unstable = [u for t in s.sites.values() for u in t.unstable_stages] or ["a site"]
            rows.append([SYSTEM_NAMES.get(name, name), "all sites", "-", "unstable: " + ", ".join(unstable),
                         "", "", "", ""])
        else:
            rows.append([SYSTEM_NAMES.get(name, name), "all sites", "-", *ttft, busy])
        for site, t in s.sites.items():
            if not t.stable:
                rows.append([SYSTEM_NAMES.get(name, name), site, _split(t),
                             "unstable: " + ", ".join(t.unstable_stages), "", "", "", ""])
                continue
            rows.append([SYSTEM_NAMES.get(name, name), site, _split(t), secs(t.ttft_mean_s), secs(t.ttft_p50_s),
                         secs(t.ttft_p90_s), secs(t.ttft_p99_s), pct(t.link_utilization) if s.n_prfaas else "-"])
    return [table(f"{r.scenario}: analytic TTFT at {r.rate_rps:.3f} req/s in total "
                  f"({r.load * 100:.0f}% of the smallest capacity)",
                  ["system", "site", "t tokens, N_p/N_d", "TTFT mean s", "P50 s", "P90 s", "P99 s",
                   "PrfaaS / link busy %"], rows)]
