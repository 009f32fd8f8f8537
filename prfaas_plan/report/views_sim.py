"""View of `simulate`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, table

NAMES = {"prfaas": "PrfaaS-PD", "homogeneous": "Homogeneous PD", "naive_heterogeneous": "Naive heterogeneous"}


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def csv_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per system: the scalar results, the analytic TTFT beside them."""
    rows = []
    for name, s in r["systems"].items():
        row: dict[str, Any] = {"system": name, "rate_rps": r["rate_rps"]}
        row |= {k: v for k, v in s.items() if not isinstance(v, dict | list)}
        row |= s["config"]
        row |= {f"analytic_{k}": v for k, v in s["analytic"].items()}
        for path, d in s["per_path"].items():
            row |= {f"{path}_{k}": v for k, v in d.items()}
        rows.append(row)
    keys = list(dict.fromkeys(k for row in rows for k in row))  # every column, first-seen order
    return [{k: row.get(k) for k in keys} for row in rows]


def emit_sim(fmt: str, r: dict[str, Any]) -> None:
    def tables() -> list[Any]:
        rows, load_rows = [], []
        for name, s in r["systems"].items():
            c, a = s["config"], s["analytic"]
            rows.append([NAMES.get(name, name), f"{s['load'] * 100:.0f}%", _s(s["ttft_mean_s"]), _s(s["ttft_p50_s"]),
                         _s(s["ttft_p90_s"]), _s(s["ttft_p99_s"]), _s(a["ttft_mean_s"]), _s(a["ttft_p90_s"]),
                         f"{units.s_to_ms(s['tpot_s']):.1f}"])
            load_rows.append([NAMES.get(name, name), f"{c['n_prfaas'] or '-'} / {c['n_p'] or '-'} / {c['n_d']}",
                              num(s["capacity_rps"], 3), num(s["throughput_rps"], 3), f"{s['completed']:,}",
                              _pct(s["link_utilization"]), f"{s['kept_local']:,}", f"{s['role_changes']:,}"])
        sim = r["sim"]
        speed = sim["requests_per_cpu_s"]
        caption = (f"{sim['events']:,} events in {num(sim['cpu_s'], 1)} s CPU"
                   + ("" if speed is None else f" ({speed:,.0f} requests/s)")
                   + ("; trace replay (no seed)" if sim["seed"] is None else f"; seed {sim['seed']}")
                   + f"; first {sim['warmup_fraction'] * 100:.0f}% not measured")
        if r.get("prefix_hit_rate") is not None:
            caption += (f"; prefix hit rate {_pct(r['prefix_hit_rate'])} (PD cluster's cache, every request, "
                        f"as optimize counts it); {_pct(r.get('recompute_avoided_rate'))} of the measured input "
                        f"tokens not prefilled ({sim['cache_mode']})")
        out = [table(f"{r['scenario']}: simulated TTFT at {r['rate_rps']:.3f} req/s "
                     f"({r['load'] * 100:.0f}% of the smallest capacity)",
                     ["system", "load", "TTFT mean s", "P50 s", "P90 s", "P99 s", "analytic mean s",
                      "analytic P90 s", "TPOT ms"], rows),
               table("Throughput", ["system", "prfaas / p / d", "capacity req/s", "measured req/s", "completed",
                                    "link busy", "kept local", "role changes"], load_rows, caption=caption)]
        path_rows = []
        for name, s in r["systems"].items():
            util, queue = s["utilization"], s["mean_queue"]
            for path, d in s["per_path"].items():
                path_rows.append([NAMES.get(name, name), path, _pct(d["share"]), _s(d["ttft_mean_s"]),
                                  _s(d["ttft_p50_s"]), _s(d["ttft_p90_s"]), _s(d["ttft_p99_s"]), _pct(util.get(path)),
                                  num(queue.get(path), 2)])
            path_rows.append([NAMES.get(name, name), "decode", "", "", "", "", "", _pct(util.get("decode")),
                              num(queue.get("decode"), 2)])
        out.append(table("Per path (TTFT = arrival to decode admission) and pool load",
                         ["system", "path", "share", "mean s", "P50 s", "P90 s", "P99 s", "busy", "mean queue"],
                         path_rows))
        return out

    emit(fmt, r, rows=csv_rows(r), tables=tables)
