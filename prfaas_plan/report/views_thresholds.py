"""`thresholds`: the router's threshold table (``api.thresholds``) as JSON, CSV and tables.

JSON (SI units, unit-suffixed keys, null for none): the grid (``bandwidths_gbps`` for one link,
each link's in ``links``), the search, and per PD site one entry per (bandwidth, load),
bandwidth-major. CSV: one row per (site, bandwidth, load). Tables: per site the grid of t (rows
bandwidth, columns load) and of the TTFT statistic there, split by loads to fit 120 columns.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import WIDTH, emit, num, secs, table
from prfaas_plan.specs.thresholds import RELATIVE, LinkGrid, ThresholdEntry, ThresholdTable


def _gbps(bytes_per_s: float) -> float:
    return units.bytes_per_s_to_gbps(bytes_per_s)


def _entry(e: ThresholdEntry) -> dict[str, Any]:
    return {"bandwidth_gbps": _gbps(e.bandwidth_bytes_per_s), "bandwidth_scale": e.scale, "load": e.load,
            "rate_rps": e.rate_rps, "site_rate_rps": e.site_rate_rps, "threshold_tokens": e.threshold_tokens,
            "offload": e.offload, "p_offload": e.p_offload, "ttft_s": e.ttft_s,
            "ttft_weighted_s": e.ttft_weighted_s,
            "threshold_star_tokens": e.threshold_star_tokens, "ttft_star_s": e.ttft_star_s,
            "ttft_weighted_star_s": e.ttft_weighted_star_s, "lambda_max_rps": e.lambda_max_rps,
            "lambda_max_plan_rps": e.lambda_max_plan_rps, "n_p": e.n_p, "n_d": e.n_d, "n_prfaas": e.n_prfaas}


def _objective(t: ThresholdTable) -> str:
    if t.passes > 1:
        return (f"demand-weighted mean of the sites' {t.statistic} TTFT, by coordinate descent (from every site "
                f"at t*, each site's t in turn with the others held, {t.passes} passes)")
    return f"{t.statistic} TTFT of the site's requests over every candidate"


def thresholds_json(t: ThresholdTable) -> dict[str, Any]:
    return {
        "scenario": t.scenario, "model": t.model, "statistic": t.statistic, "method": t.method,
        "bandwidth_grid": t.grid, "bandwidths": list(t.bandwidth_texts),
        "bandwidths_gbps": [_gbps(b) for b in t.links[0].bandwidths_bytes_per_s] if len(t.links) == 1 else None,
        "bandwidth_scales": list(t.scales), "loads": list(t.loads),
        "links": {lk.site: {"link": lk.link, "nominal_gbps": _gbps(lk.nominal_bytes_per_s),
                            "bandwidths_gbps": [_gbps(b) for b in lk.bandwidths_bytes_per_s]} for lk in t.links},
        "search": {"log_spaced_thresholds": t.candidates, "also": ["offload nothing", "offload everything", "t*"],
                   "objective": _objective(t), "passes": t.passes, "quantile_nodes": t.nodes,
                   "load_at_least_1": "the throughput optimum t* (optimize's)"},
        "sites": {name: [_entry(e) for e in es] for name, es in t.sites.items()},
    }


def thresholds_rows(t: ThresholdTable) -> list[dict[str, Any]]:
    return [{"site": name} | _entry(e) for name, es in t.sites.items() for e in es]


def _tok(x: float | None) -> str:
    """A threshold rounded down, as optimize prints it (requests longer than t are offloaded)."""
    return "none" if x is None else units.format_threshold(x)


def _fit(make: Callable[[Sequence[int]], Any], cols: Sequence[int]) -> list[Any]:
    """Tables over ``cols``, as few as fit WIDTH characters (at least one column each)."""
    for per in range(len(cols), 0, -1):
        out = [make(cols[i:i + per]) for i in range(0, len(cols), per)]
        if per == 1 or all(len(line) <= WIDTH for tb in out for line in str(tb).splitlines()):
            return out
    return []


def _band(t: ThresholdTable, lk: LinkGrid, i: int) -> str:
    text = t.bandwidth_texts[i]
    return f"{text} = {_gbps(lk.bandwidths_bytes_per_s[i]):.4g}Gbps" if t.grid == RELATIVE else text


def _thresholds(t: ThresholdTable, lk: LinkGrid, cols: Sequence[int]) -> Any:
    es, nl = t.sites[lk.site], len(t.loads)
    rows = []
    for i in range(len(t.bandwidth_texts)):
        e0 = es[i * nl]
        rows.append([_band(t, lk, i), f"{e0.n_prfaas}/{e0.n_p}/{e0.n_d}", num(e0.lambda_max_rps, 3),
                     _tok(e0.threshold_star_tokens), *[_tok(es[i * nl + j].threshold_tokens) for j in cols]])
    return table(f"{lk.site}: threshold t, tokens, per link bandwidth and load (none: offload nothing)",
                 ["bandwidth", "prfaas/p/d", "Lambda_max", "t*", *[f"load {t.loads[j]:g}" for j in cols]], rows)


def _ttft(t: ThresholdTable, lk: LinkGrid | None, cols: Sequence[int]) -> Any:
    """The statistic at the table's thresholds (and with every site at t*): one site's, or
    (``lk`` None) the demand-weighted mean of the sites', the objective."""
    es, nl = t.sites[(lk or t.links[0]).site], len(t.loads)

    def cell(e: ThresholdEntry) -> str:
        at, star = (e.ttft_s, e.ttft_star_s) if lk else (e.ttft_weighted_s, e.ttft_weighted_star_s)
        return f"{secs(at)} ({secs(star)})"

    rows = [[_band(t, lk, i) if lk else t.bandwidth_texts[i], *[cell(es[i * nl + j]) for j in cols]]
            for i in range(len(t.bandwidth_texts))]
    star = "every site at t*" if len(t.links) > 1 else "at t*"
    title = (f"{lk.site}: {t.statistic} TTFT s at that t ({star})" if lk else
             f"all sites, weighted by demand: {t.statistic} TTFT s at those thresholds (with every site at t*)")
    return table(title, ["bandwidth", *[f"load {t.loads[j]:g}" for j in cols]], rows)


def _tables(t: ThresholdTable) -> list[Any]:
    below = [j for j, x in enumerate(t.loads) if x < 1]
    out: list[Any] = [textwrap.fill(f"{t.scenario}: the router's threshold table ({t.model}, method {t.method}); "
                                    "the fleet as given, split and N_prfaas re-planned by optimize at each bandwidth",
                                    WIDTH, break_on_hyphens=False)]
    for lk in t.links:
        out += _fit(lambda cols, lk=lk: _thresholds(t, lk, cols), list(range(len(t.loads))))
        if below:
            out += _fit(lambda cols, lk=lk: _ttft(t, lk, cols), below)
    if below and len(t.links) > 1:
        out += _fit(lambda cols: _ttft(t, None, cols), below)
    out.append(textwrap.fill(
        "Load: a fraction of Lambda_max, the exact capacity of optimize's configuration at that bandwidth. Below 1, "
        f"the t minimising the {_objective(t)}; the candidates: {t.candidates} thresholds log-spaced over the "
        "workload's lengths, offload nothing, offload everything and t*, where the capacity exceeds the rate. From "
        "1 on, t*.", WIDTH))
    return out


def emit_thresholds(fmt: str, t: ThresholdTable, payload: dict[str, Any]) -> None:
    emit(fmt, payload, rows=thresholds_rows(t), tables=lambda: _tables(t))
