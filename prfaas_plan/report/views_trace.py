"""Text, JSON and CSV of `trace stats` (``specs.trace_stats.TraceStats``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import count, emit, num, pct, table
from prfaas_plan.specs.trace_stats import CachePoint, LengthStats, TraceStats

NO_HASHES = "the trace has no prefix hashes"
FORMAT_NAMES = {"mooncake": "Mooncake", "azure": "Azure", "burstgpt": "BurstGPT", "bailian": "Bailian"}


def duration(s: float) -> str:
    """A time span for people: 250 ms, 20 s, 5 min, 1.5 h, 2 d."""
    if s == 0:
        return "0 s"
    for limit, scale, unit in ((1.0, units.MS, "ms"), (120.0, 1.0, "s"), (2 * units.HOUR, 60.0, "min"),
                               (48 * units.HOUR, units.HOUR, "h")):
        if s < limit:
            return f"{s / scale:,.4g} {unit}"
    return f"{s / (24 * units.HOUR):,.4g} d"


def rate(x: float | None) -> str:
    """req/s to 4 significant digits (traces run from a request an hour to thousands a second)."""
    return "-" if x is None else (num(x, 1) if x >= 1000 else f"{x:.4g}")


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def no_rate(r: TraceStats) -> str:
    return ("one request: no span, so no arrival rate" if r.requests == 1 else
            f"all {r.requests:,} requests arrive at one instant: no span, so no arrival rate")


def _lengths_json(x: LengthStats) -> dict[str, Any]:
    return {"mean": x.mean, "p50": x.p50, "p90": x.p90, "p99": x.p99, "max": x.max, "total": x.total}


def _cache_json(p: CachePoint) -> dict[str, Any]:
    return {"label": p.label, "capacity_blocks": p.capacity_blocks, "capacity_tokens": p.capacity_tokens,
            "hit_rate": p.hit_rate, "block_hit_rate": p.block_hit_rate}


def trace_stats_json(r: TraceStats) -> dict[str, Any]:
    b = r.bins
    arrivals = None if b is None else {
        "bin_s": b.bin_s, "bin_chosen_from_span": b.chosen, "bins": len(b.counts), "full_bins": b.full_bins,
        "min_rps": b.min_rps, "median_rps": b.median_rps, "max_rps": b.max_rps, "peak_to_mean": b.peak_to_mean,
        "start_s": list(b.starts_s), "counts": list(b.counts)}
    u = r.reuse
    if u is None:
        reuse: dict[str, Any] = {"has_hashes": False, "hit_rate_unbounded": None, "unknown": NO_HASHES}
    else:
        reuse = {"has_hashes": True, "block_tokens": u.block_tokens, "total_blocks": u.total_blocks,
                 "distinct_blocks": u.distinct_blocks, "working_set_tokens": u.working_set_tokens,
                 "hit_rate_unbounded": u.unbounded.hit_rate, "block_hit_rate_unbounded": u.unbounded.block_hit_rate,
                 "sizing": u.sizing, "caches": [_cache_json(p) for p in u.sized]}
    return {"file": r.source, "format": r.format, "requests": r.requests, "first_arrival_s": r.first_arrival_s,
            "span_s": r.span_s, "mean_rate_rps": r.mean_rate_rps,
            "no_rate": no_rate(r) if r.mean_rate_rps is None else None, "arrivals": arrivals,
            "input_tokens": _lengths_json(r.input), "output_tokens": _lengths_json(r.output),
            "prefix_reuse": reuse, "failed_excluded": r.failed_excluded, "filtered_out": r.filtered_out,
            "models": list(r.models), "model_filter": r.model_filter,
            "planning": None if r.planning_window_s is None else {
                "window_s": r.planning_window_s, "windows": r.planning_windows,
                **{f"{k}_rps": v for k, v in r.windowed_rps}}}


def _rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Long form for CSV: one row per quantity (dotted JSON path), the per-bin counts left to JSON."""
    rows: list[dict[str, Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k not in ("start_s", "counts", "caches"):
                    walk(f"{prefix}.{k}" if prefix else k, v)
            for p in value.get("caches", []):
                for k, v in p.items():
                    if k != "label":
                        walk(f"{prefix}.caches[{p['label']}].{k}", v)
        elif isinstance(value, list):
            rows.append({"quantity": prefix, "value": ";".join(str(v) for v in value)})
        else:
            rows.append({"quantity": prefix, "value": value})

    walk("", payload)
    return rows


def emit_trace_stats(fmt: str, r: TraceStats) -> None:
    payload = trace_stats_json(r)
    emit(fmt, payload, rows=_rows(payload), tables=lambda: _tables(r))


def _tables(r: TraceStats) -> list[Any]:
    name = FORMAT_NAMES.get(r.format, r.format)
    out: list[Any] = [f"{r.source}: {name} trace, {plural(r.requests, 'request')}", ""]
    rows = [["requests", f"{r.requests:,}"]]
    if r.failed_excluded or r.format == "burstgpt":
        rows.append(["failed, excluded", f"{plural(r.failed_excluded, 'row')} (0 response tokens)"])
    if r.models:
        rows.append(["models in the file", ", ".join(r.models)])
    if r.model_filter is not None:
        rows.append(["--model-filter", f"{r.model_filter}: {plural(r.filtered_out, 'row')} of other models left out"])
    rows.append(["span", f"{duration(r.span_s)} (first to last arrival)"])
    b = r.bins
    if r.mean_rate_rps is None or b is None:
        rows.append(["arrival rate", no_rate(r)])
    else:
        rows.append(["mean rate", f"{rate(r.mean_rate_rps)} req/s ((n - 1) / span)"])
        how = "chosen from the span" if b.chosen else "--bin"
        rows.append(["bins", f"{len(b.counts):,} of {duration(b.bin_s)} ({how}), {b.full_bins:,} full"])
        if b.max_rps is None:
            rows.append(["binned rate", f"no full bin: the bin is longer than the span of {duration(r.span_s)}"])
        else:
            rows.append(["binned rate", f"min {rate(b.min_rps)}, median {rate(b.median_rps)}, "
                                        f"max {rate(b.max_rps)} req/s (over the full bins)"])
            rows.append(["peak-to-mean", f"{num(b.peak_to_mean, 2)} (max binned rate / mean rate)"])
    if r.windowed_rps and r.planning_window_s is not None:
        per = ", ".join(f"{k.upper()} {rate(v)}" for k, v in r.windowed_rps)
        rows.append(["planning rate", f"{per} req/s over time, in {r.planning_windows:,} windows of "
                                      f"{duration(r.planning_window_s)} (what --plan-at rate=pNN plans for)"])
    width = max(len(k) for k, _ in rows)
    out += ["arrivals", *(f"  {k.ljust(width)}   {v}" for k, v in rows), ""]

    lengths = [[label, num(x.mean, 1), num(x.p50, 1), num(x.p90, 1), num(x.p99, 1), f"{x.max:,}", count(x.total)]
               for label, x in (("input", r.input), ("output", r.output))]
    out.append(table("lengths (tokens)", ["", "mean tokens", "p50 tokens", "p90 tokens", "p99 tokens", "max tokens",
                                                 "total tokens"], lengths))

    u = r.reuse
    if u is None:
        out.append(f"prefix reuse: hit rate unknown ({NO_HASHES})")
        return out
    head = (f"prefix reuse: LRU cache of {u.block_tokens}-token blocks; {u.total_blocks:,} blocks, "
            f"{u.distinct_blocks:,} distinct (working set {count(u.working_set_tokens)} tokens)")
    cache_rows = [[p.label, "-" if p.capacity_blocks is None else f"{p.capacity_blocks:,}",
                   "-" if p.capacity_tokens is None else count(p.capacity_tokens), pct(p.hit_rate),
                   pct(p.block_hit_rate)] for p in (u.unbounded, *u.sized)]
    out.append(table(head, ["cache", "blocks", "tokens", "hit rate %", "block hit rate %"], cache_rows,
                     caption=f"  sized caches: {u.sizing}\n  hit rate = cached / input tokens (token-weighted; "
                             "each request computes at least its last token)"))
    return out
