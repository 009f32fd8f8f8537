"""Library API of `prfaas-plan trace stats`: what a request trace holds.

Arrivals (count, span, mean rate (n - 1) / span, arrivals per bin), input and output length
quantiles, and, where the trace hashes its prefix blocks, the token-weighted prefix hit rate of
an LRU cache (``core.trace.replay_prefix_cache``) unbounded and at a few sizes. ``summarize``
works on a ``core.trace.Trace``; ``trace_stats`` reads the file and the options first.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.core import kv
from prfaas_plan.core.arrivals import default_bin_s, rate_profile
from prfaas_plan.core.trace import TRACE_FORMATS, Trace, TraceFile, blocks_for_capacity, replay_prefix_cache
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.run import read_duration
from prfaas_plan.specs.trace_stats import ArrivalBins, CachePoint, LengthStats, PrefixReuse, TraceStats

__all__ = ["DEFAULT_FRACTIONS", "FORMATS", "default_bin_s", "parse_options", "summarize", "trace_stats"]

FORMATS = TRACE_FORMATS
# default sized caches: these fractions of the trace's distinct blocks (its working set)
DEFAULT_FRACTIONS = ((1, 2), (1, 4), (1, 10))
CURVE_FRACTIONS = tuple(2.0**-k for k in range(10, -1, -1))  # 1/1024 .. 1 of the working set, for the figure
MAX_BINS = 100_000
PLANNING_PERCENTILES = (0.5, 0.9, 0.99)  # of the windowed rate, as --plan-at rate=pNN reads it


def _lengths(x: np.ndarray) -> LengthStats:
    p50, p90, p99 = np.percentile(x, [50, 90, 99])
    return LengthStats(mean=float(x.mean()), p50=float(p50), p90=float(p90), p99=float(p99), max=int(x.max()),
                       total=int(x.sum()))


def _bins(arrival_s: np.ndarray, span_s: float, mean_rate_rps: float, bin_s: float | None) -> ArrivalBins:
    chosen = bin_s is None
    width = default_bin_s(span_s) if bin_s is None else float(bin_s)
    ratio = span_s / width
    n_bins = max(1, math.ceil(ratio - 1e-9))
    if n_bins > MAX_BINS:
        raise SpecError(f"{width:g} s splits the trace's span of {span_s:g} s into {n_bins:,} bins, more than "
                        f"{MAX_BINS:,}: give a longer bin", field="--bin")
    rel = arrival_s - arrival_s.min()
    idx = np.minimum(np.floor(rel / width).astype(np.int64), n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins)
    full = min(n_bins, math.floor(ratio + 1e-9))
    rates = counts[:full] / width
    some = full > 0
    top = float(rates.max()) if some else None
    return ArrivalBins(bin_s=width, chosen=chosen, starts_s=tuple(float(k * width) for k in range(n_bins)),
                       counts=tuple(int(c) for c in counts), full_bins=full,
                       min_rps=float(rates.min()) if some else None,
                       median_rps=float(np.median(rates)) if some else None, max_rps=top,
                       peak_to_mean=top / mean_rate_rps if some else None)


def _tokens_text(n: int) -> str:
    m = units.K_TOKENS * units.K_TOKENS
    return f"{n // m}M" if n % m == 0 else units.format_tokens(n)


def _point(trace: Trace, label: str, blocks: int | None, tokens: int | None) -> CachePoint:
    r = replay_prefix_cache(trace, capacity_blocks=blocks)
    return CachePoint(label=label, capacity_blocks=blocks, capacity_tokens=tokens, hit_rate=r.hit_rate,
                      block_hit_rate=r.block_hit_rate)


def _reuse(trace: Trace, *, cache_tokens: Sequence[int], cache_bytes: Sequence[float],
           bytes_per_token: float | None, model: str | None, curve: bool) -> PrefixReuse:
    bt = int(trace.block_tokens)
    distinct = int(np.unique(trace.hash_ids).size)
    sized: list[CachePoint] = []
    for n in cache_tokens:
        sized.append(_point(trace, f"{_tokens_text(n)} tokens", n // bt, n))
    for b in cache_bytes:
        if bytes_per_token is None:
            raise SpecError("a cache size in GiB needs the model whose KV fills it: give --model", field="--cache-gib")
        blocks = blocks_for_capacity(b, bytes_per_token, bt)
        assert blocks is not None
        sized.append(_point(trace, f"{units.bytes_to_gib(b):g} GiB of {model} KV", blocks, blocks * bt))
    if cache_tokens or cache_bytes:
        parts = []
        if cache_tokens:
            parts.append("--cache-tokens")
        if cache_bytes:
            parts.append(f"--cache-gib at {bytes_per_token:,.0f} KV bytes/token ({model})")
        sizing = "sizes given by " + " and ".join(parts) + f"; a cache holds whole {bt}-token blocks"
    else:
        for num, den in DEFAULT_FRACTIONS:
            blocks = distinct * num // den
            sized.append(_point(trace, f"{num}/{den} of the working set", blocks, blocks * bt))
        sizing = ("fractions of the working set (the trace's distinct blocks): "
                  + ", ".join(f"{n}/{d}" for n, d in DEFAULT_FRACTIONS))
    points: list[CachePoint] = []
    if curve:
        seen = {p.capacity_blocks for p in sized}
        extra = sorted({math.floor(distinct * f) for f in CURVE_FRACTIONS} - seen)
        points = sorted([*sized, *(_point(trace, f"{b} blocks", b, b * bt) for b in extra)],
                        key=lambda p: p.capacity_blocks or 0)
    return PrefixReuse(block_tokens=bt, total_blocks=int(trace.hash_ids.size), distinct_blocks=distinct,
                       sizing=sizing, unbounded=_point(trace, "unbounded", None, None), sized=tuple(sized),
                       curve=tuple(points))


def summarize(trace: Trace, *, source: str = "", format: str = "mooncake", has_hashes: bool = True,
              bin_s: float | None = None, cache_tokens: Sequence[int] = (), cache_bytes: Sequence[float] = (),
              bytes_per_token: float | None = None, model: str | None = None, curve: bool = False,
              failed_excluded: int = 0, filtered_out: int = 0, models: Sequence[str] = (),
              model_filter: str | None = None) -> TraceStats:
    """The statistics of ``trace``.

    Parameters
    ----------
    bin_s : arrival bin width, s (> 0); None picks one from the span (``default_bin_s``).
    cache_tokens : sized caches in tokens (each holds ``n // block_tokens`` whole blocks).
    cache_bytes : sized caches in bytes, at ``bytes_per_token`` of KV (``model`` names it).
        Neither given: 1/2, 1/4 and 1/10 of the trace's distinct blocks.
    curve : also replay a sweep of sizes (1/1024 .. 1 of the working set) for the figure.
    has_hashes : False for a format without prefix hashes: no hit rate (``reuse`` None).
    """
    n = len(trace)
    arrival = trace.arrival_s
    span = trace.span_s
    mean_rate = trace.mean_rate_rps
    bins = _bins(arrival, span, mean_rate, bin_s) if mean_rate is not None else None
    reuse = (_reuse(trace, cache_tokens=cache_tokens, cache_bytes=cache_bytes, bytes_per_token=bytes_per_token,
                    model=model, curve=curve) if has_hashes else None)
    profile = rate_profile(arrival) if mean_rate is not None else None
    windowed = () if profile is None else tuple((f"p{round(q * 100)}", profile.rate_at(q) * mean_rate)
                                                for q in PLANNING_PERCENTILES)
    return TraceStats(planning_window_s=None if profile is None else profile.bin_s,
                      planning_windows=0 if profile is None else profile.windows, windowed_rps=windowed,
                      source=source, format=format, requests=n, first_arrival_s=float(arrival.min()), span_s=span,
                      mean_rate_rps=mean_rate, bins=bins, input=_lengths(trace.input_tokens),
                      output=_lengths(trace.output_tokens), reuse=reuse, failed_excluded=failed_excluded,
                      filtered_out=filtered_out, models=tuple(models), model_filter=model_filter,
                      input_tokens=np.sort(trace.input_tokens), output_tokens=np.sort(trace.output_tokens))


@dataclass(frozen=True, slots=True, kw_only=True)
class StatsOptions:
    """`trace stats`'s options, read: the format (None: detected), the bin and the cache sizes in SI."""

    format: str | None
    bin_s: float | None
    cache_tokens: tuple[int, ...]
    cache_bytes: tuple[float, ...]


def parse_options(*, trace_format: str | None = None, bin: str | None = None,
                  cache_tokens: Sequence[str] = (), cache_gib: Sequence[str] = (),
                  model: str | None = None) -> StatsOptions:
    """The command's option texts, checked: each bad value is one ``SpecError`` naming its option."""
    fmt = None if trace_format is None else trace_format.strip().lower()
    if fmt == "auto":
        fmt = None
    if fmt is not None and fmt not in FORMATS:
        raise SpecError(f"unknown trace format {trace_format!r} (use auto, {', '.join(FORMATS)})",
                        field="--trace-format")
    bin_s = None if bin is None else read_duration(bin, "--bin")
    tokens = []
    for text in cache_tokens:
        try:
            tokens.append(units.parse_length(text))
        except ValueError as exc:
            raise SpecError(f"{exc} (a cache size in tokens, e.g. 64K, K = 1024)", field="--cache-tokens") from None
    sizes = []
    for text in cache_gib:
        try:
            gib = units.parse_in(text, "GiB")  # 10, 10GiB or 10.7GB
        except ValueError as exc:
            raise SpecError(str(exc), field="--cache-gib") from None
        if not gib > 0:
            raise SpecError(f"must be a positive number of GiB, got {text!r}", field="--cache-gib")
        sizes.append(gib * units.GIB)
    if sizes and model is None:
        raise SpecError(f"{cache_gib[0]!r} GiB needs the model whose KV fills the cache: give --model",
                        field="--cache-gib")
    return StatsOptions(format=fmt, bin_s=bin_s, cache_tokens=tuple(tokens), cache_bytes=tuple(sizes))


def _read(path: str, fmt: str | None, model_filter: str | None) -> TraceFile:
    from prfaas_plan.io.trace import load_trace

    try:
        return load_trace(path, format=fmt, model_filter=model_filter)
    except SpecError as exc:
        if exc.field == "model_filter":  # the option it came from
            raise exc.at(source=exc.source, field="--model-filter") from None
        raise


def trace_stats(path: str | os.PathLike[str], *, trace_format: str | None = None, model_filter: str | None = None,
                bin: str | None = None, cache_tokens: Sequence[str] = (), cache_gib: Sequence[str] = (),
                model: str | None = None, catalog: Any = None, curve: bool = False) -> TraceStats:
    """Read ``path`` (``io.trace.load_trace``, the format detected unless given) and summarize it; the
    options as the CLI takes them (texts, checked by ``parse_options``)."""
    opts = parse_options(trace_format=trace_format, bin=bin, cache_tokens=cache_tokens, cache_gib=cache_gib,
                         model=model)
    bytes_per_token = None
    if model is not None:
        from prfaas_plan.io.load import load_model

        try:
            spec = load_model(model, catalog)
        except SpecError as exc:
            if exc.unknown == "models" and exc.source is None and exc.field is None:
                raise exc.at(field="--model") from None
            raise
        bytes_per_token = kv.footprint(spec).kv_bytes_per_token
        model = spec.name
    source = os.fspath(path)
    tf = _read(source, opts.format, model_filter)
    return summarize(tf.trace, source=source, format=tf.format, has_hashes=tf.has_hashes, bin_s=opts.bin_s,
                     cache_tokens=opts.cache_tokens, cache_bytes=opts.cache_bytes,
                     bytes_per_token=bytes_per_token, model=model, curve=curve,
                     failed_excluded=tf.failed_excluded, filtered_out=tf.filtered_out, models=tf.models,
                     model_filter=model_filter)
