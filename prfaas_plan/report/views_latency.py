"""View of `latency`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, table

NAMES = {"prfaas": "PrfaaS-PD", "homogeneous": "Homogeneous PD", "naive_heterogeneous": "Naive heterogeneous"}


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def emit_latency(fmt: str, r: dict[str, Any]) -> None:
    def tables():
        rows = []
        for name, s in r["systems"].items():
            c = s["config"]
            split = f"{c['n_prfaas']}/{c['n_p']}/{c['n_d']}"
            if not s["stable"]:
                rows.append([NAMES.get(name, name), split, f"{s['load'] * 100:.0f}%",
                             "unstable: " + ", ".join(s["unstable_stages"]), "", "", "", "",
                             _s(s["zero_load_ttft_mean_s"])])
                continue
            rows.append([NAMES.get(name, name), split, f"{s['load'] * 100:.0f}%", _s(s["ttft_mean_s"]),
                         _s(s["ttft_p50_s"]), _s(s["ttft_p90_s"]), _s(s["ttft_p99_s"]),
                         f"{units.s_to_ms(s['tpot_s']):.1f}", _s(s["zero_load_ttft_mean_s"])])
        out = [table(f"{r['scenario']}: analytic TTFT at {r['rate_rps']:.3f} req/s "
                     f"({r['load'] * 100:.0f}% of the smallest capacity)",
                     ["system", "prfaas/p/d", "load", "TTFT mean s", "P50 s", "P90 s", "P99 s", "TPOT ms",
                      "zero-load s"], rows)]
        path_rows = []
        for name, s in r["systems"].items():
            for path, d in s.get("per_path", {}).items():
                path_rows.append([NAMES.get(name, name), path, f"{d['share'] * 100:.1f}%", _s(d["wait_mean_s"]),
                                  _s(d["prefill_mean_s"]), _s(d["transfer_mean_s"]), _s(d["admission_mean_s"]),
                                  _s(d["ttft_mean_s"]), _s(d["ttft_p90_s"])])
        out.append(table("Per path (TTFT = queue wait + prefill + exposed transfer + decode admission)",
                         ["system", "path", "share", "wait s", "prefill s", "transfer s", "admission s", "mean s",
                          "P90 s"], path_rows))
        return out

    rows = [{"system": n} | {k: v for k, v in s.items() if not isinstance(v, dict | list)}
            for n, s in r["systems"].items()]
    emit(fmt, r, rows=rows, tables=tables)
