"""View of `simulate`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.latency_json import scalar_rows
from prfaas_plan.report.render import SYSTEM_NAMES, emit, finite, num, pct, secs, table
from prfaas_plan.report.sim_json import simulate_csv_rows, simulate_json
from prfaas_plan.sim.result import SimulateRun


def _ttft(h: Any) -> list[str]:
    return [secs(h.mean), secs(h.quantile(0.5)), secs(h.quantile(0.9)), secs(h.quantile(0.99))]


def _caption(r: SimulateRun) -> str:
    runs = [s.result for s in r.systems.values()]
    events, cpu, arrived = sum(x.events for x in runs), sum(x.cpu_s for x in runs), sum(x.requests for x in runs)
    speed = arrived / cpu if cpu > 0 else None
    caption = (f"{events:,} events in {num(cpu, 1)} s CPU" + ("" if speed is None else f" ({speed:,.0f} requests/s)")
               + ("; trace replay (no seed)" if r.seed is None else f"; seed {r.seed}")
               + f"; first {r.warmup_fraction * 100:.0f}% not measured")
    head = r.systems[r.head].result
    if r.hit_rate_source == "unknown":
        caption += "; prefix hit rate unknown (the trace records no prefix hashes: every input token prefilled)"
    elif head.prefix_hit_rate is not None:
        how = "assumed: workload.input.assumed_hit_rate" if r.hit_rate_source == "assumed" else \
            "PD cluster's cache, every request, as optimize counts it"
        caption += (f"; prefix hit rate {pct(head.prefix_hit_rate)} ({how}); {pct(head.recompute_avoided_rate)} "
                    f"of the measured input tokens not prefilled ({r.cache_mode})")
    return caption


def emit_sim(fmt: str, r: SimulateRun) -> None:
    """`simulate`: the tables read the typed runs, JSON and CSV its JSON. One PD site: each system,
    its throughput and each of its paths; several: each system over every request and per site."""
    payload = simulate_json(r)
    if len(r.sites) > 1:
        emit(fmt, payload, rows=scalar_rows(payload, inner="sites"), tables=lambda: _sites_tables(r))
        return
    site = r.sites[0]

    def tables() -> list[Any]:
        rows, load_rows, path_rows = [], [], []
        for name, s in r.systems.items():
            res, a, c, label = s.sites[site], s.analytic.sites[site], s.system.sites[0].config, SYSTEM_NAMES.get(name,
                                                                                                             name)
            rows.append([label, f"{s.load * 100:.0f}%", *_ttft(res.ttft), secs(a.ttft_mean_s), secs(a.ttft_p90_s),
                         f"{units.s_to_ms(res.tpot_s):.1f}"])
            load_rows.append([label, f"{c.n_prfaas or '-'} / {c.n_p or '-'} / {c.n_d}", num(c.capacity_rps, 3),
                              num(res.throughput_rps, 3), f"{res.completed:,}", pct(res.link_utilization),
                              f"{res.kept_local:,}", f"{res.role_changes:,}"])
            n = res.ttft.n
            for path, h in res.ttft_paths.items():
                path_rows.append([label, path, pct(h.n / n if n else None), *_ttft(h), pct(res.utilization.get(path)),
                                  num(res.mean_queue.get(path), 2)])
            path_rows.append([label, "decode", "", "", "", "", "", pct(res.utilization.get("decode")),
                              num(res.mean_queue.get("decode"), 2)])
        throughput = ["system", "prfaas / p / d", "capacity req/s", "measured req/s", "completed requests",
                      "link busy %", "kept local requests", "role changes"]
        paths = ["system", "path", "share %", "mean s", "P50 s", "P90 s", "P99 s", "busy %", "mean queue requests"]
        return [table(f"{r.scenario}: simulated TTFT at {r.rate_rps:.3f} req/s "
                      f"({r.load * 100:.0f}% of the smallest capacity)",
                      ["system", "load %", "TTFT mean s", "P50 s", "P90 s", "P99 s", "analytic mean s",
                       "analytic P90 s", "TPOT ms"], rows),
                table("Throughput", throughput, load_rows, caption=_caption(r)),
                table("Per path (TTFT = arrival to decode admission) and pool load", paths, path_rows)]

    emit(fmt, payload, rows=simulate_csv_rows(payload), tables=tables)


def _sites_tables(r: SimulateRun) -> list[Any]:
    """Several PD sites: each system over every request, then at each site."""
    rows = []
    for name, t in r.systems.items():
        res, a, shared = t.result, t.analytic, t.system.n_prfaas > 0
        h = res.ttft
        rows.append([SYSTEM_NAMES.get(name, name), "all sites", f"{t.load * 100:.0f}%", secs(finite(h.mean)),
                     secs(finite(h.quantile(0.9))), secs(finite(h.quantile(0.99))), secs(a.ttft_mean_s),
                     secs(a.ttft_p90_s), pct(finite(res.prfaas_utilization)) if shared else "-"])
        for site, sr in res.sites.items():
            sa, hs = a.sites[site], sr.ttft
            rows.append(["", site, "", secs(finite(hs.mean)), secs(finite(hs.quantile(0.9))),
                         secs(finite(hs.quantile(0.99))), secs(sa.ttft_mean_s), secs(sa.ttft_p90_s),
                         pct(finite(sr.link_utilization)) if shared else "-"])
    return [table(f"{r.scenario}: simulated TTFT at {r.rate_rps:.3f} req/s in total "
                  f"({r.load * 100:.0f}% of the smallest capacity)",
                  ["system", "site", "load %", "TTFT mean s", "P90 s", "P99 s", "analytic mean s", "analytic P90 s",
                   "PrfaaS / link busy %"], rows)]
