"""View of `latency`."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, table
from prfaas_plan.specs.results import LatencyResult

NAMES = {"prfaas": "PrfaaS-PD", "homogeneous": "Homogeneous PD", "naive_heterogeneous": "Naive heterogeneous"}


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def emit_latency(fmt: str, r: LatencyResult, payload: dict[str, Any]) -> None:
    """`latency` on one PD site: the tables read the typed timings, JSON and CSV the payload."""

    def tables():
        rows = []
        for name, s in r.systems.items():
            split = f"{s.n_prfaas}/{s.n_p}/{s.n_d}"
            if not s.stable:
                rows.append([NAMES.get(name, name), split, f"{s.load * 100:.0f}%",
                             "unstable: " + ", ".join(s.unstable_stages), "", "", "", "",
                             _s(s.zero_load_ttft_mean_s)])
                continue
            rows.append([NAMES.get(name, name), split, f"{s.load * 100:.0f}%", _s(s.ttft_mean_s), _s(s.ttft_p50_s),
                         _s(s.ttft_p90_s), _s(s.ttft_p99_s), f"{units.s_to_ms(s.tpot_s):.1f}",
                         _s(s.zero_load_ttft_mean_s)])
        out = [table(f"{r.scenario}: analytic TTFT at {r.rate_rps:.3f} req/s "
                     f"({r.load * 100:.0f}% of the smallest capacity)",
                     ["system", "prfaas/p/d", "load", "TTFT mean s", "P50 s", "P90 s", "P99 s", "TPOT ms",
                      "zero-load s"], rows)]
        path_rows = [[NAMES.get(name, name), p.name, f"{p.share * 100:.1f}%", _s(p.wait_mean_s), _s(p.prefill_mean_s),
                      _s(p.transfer_mean_s), _s(p.admission_mean_s), _s(p.ttft_mean_s), _s(p.ttft_p90_s)]
                     for name, s in r.systems.items() for p in s.paths]
        out.append(table("Per path (TTFT = queue wait + prefill + exposed transfer + decode admission)",
                         ["system", "path", "share", "wait s", "prefill s", "transfer s", "admission s", "mean s",
                          "P90 s"], path_rows))
        return out

    rows = [{"system": n} | {k: v for k, v in s.items() if not isinstance(v, dict | list)}
            for n, s in payload["systems"].items()]
    emit(fmt, payload, rows=rows, tables=tables)
