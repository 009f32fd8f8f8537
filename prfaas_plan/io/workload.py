"""What a scenario's workload and links read from files: the uncached-length law (a parametric
law, a CSV of lengths, or a trace replayed through the prefix cache), the workload spec with the
trace's arrivals, and a link's bandwidth law. Errors in a named file are the file's own, placed
at the field that named it."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.cache import cached_value
from prfaas_plan.io.overrides import Placed
from prfaas_plan.specs.scenario import WorkloadSpec

if TYPE_CHECKING:  # pydantic and the schema are imported only when a scenario is validated (io/cache.py)
    from pydantic import BaseModel

    from prfaas_plan.io.scenario_schema import TraceLength, Workload


def referenced(exc: SpecError, placed: Placed, field_path: str) -> SpecError:
    """An error in a file a field names: the file's own when it could be read (its line, its
    field), else placed at the field that named it (``--set model=/``: "/: is a folder")."""
    if exc.source is None or Path(exc.source).is_file():
        return exc
    if placed.option_of(field_path) == "--trace":  # the path is the option's own value
        return SpecError(f"{exc.source}: {exc.message}", field="--trace")
    return SpecError(f"{exc.source}: {exc.message}", **placed.place(field_path))


def load_lengths(spec: BaseModel, base: Path, model: Any, placed: Placed, at: str = "workload.input"):
    """The uncached-length distribution, plus trace details where the workload is a trace."""
    try:
        return _lengths(spec, base, model)
    except SpecError as exc:
        if exc.source is not None:  # a trace or CSV file's own error
            raise referenced(exc, placed, f"{at}.file") from None
        # the distributions call their bounds lo/hi; the YAML calls them min/max
        last = (exc.field or "").rsplit(".", 1)[-1]
        name = {"lo": "min", "hi": "max"}.get(last, last)
        msg = re.sub(r"\blo\b", "min", re.sub(r"\bhi\b", "max", exc.message))
        field_path = f"{at}.{name}" if name else at
        if placed.option_of(field_path) is None:  # a law's fault of its parameters together: the one an option set
            given = [f"{at}.{k}" for k in type(spec).model_fields
                     if k != "kind" and placed.option_of(f"{at}.{k}") is not None]
            field_path = given[0] if given else field_path
        raise SpecError(msg, **placed.place(field_path)) from None


def _lengths(spec: BaseModel, base: Path, model: Any):
    from prfaas_plan.core import lengths as L
    from prfaas_plan.io.scenario_schema import (
        EmpiricalLength,
        FixedLength,
        GammaLength,
        LogNormal,
        TraceLength,
        UniformLength,
    )

    # a log-normal's or gamma's grid needs scipy: cached on its parameters, apart from the scenario's
    # entry, so an edit elsewhere in the scenario or a new --set value needs no scipy (io.cache)
    if isinstance(spec, LogNormal):
        key = repr(("lognormal", spec.mu, spec.sigma, spec.min, spec.max))
        return cached_value("lengths", key, lambda: L.TruncatedLogNormal(mu=spec.mu, sigma=spec.sigma, lo=spec.min,
                                                                          hi=spec.max)), None
    if isinstance(spec, FixedLength):
        return L.Fixed(value=spec.value), None
    if isinstance(spec, UniformLength):
        return L.Uniform(lo=spec.min, hi=spec.max), None
    if isinstance(spec, GammaLength):
        key = repr(("gamma", spec.shape, spec.scale, spec.min, spec.max))
        return cached_value("lengths", key, lambda: L.Gamma(shape=spec.shape, scale=spec.scale, lo=spec.min,
                                                             hi=spec.max)), None
    if isinstance(spec, EmpiricalLength):
        from prfaas_plan.io.lengths_csv import read_lengths_csv

        return read_lengths_csv(resolve(spec.file, base)), None
    assert isinstance(spec, TraceLength)
    return _trace_lengths(spec, base, model)


def _trace_lengths(spec: TraceLength, base: Path, model: Any):
    """A trace's uncached lengths and (TraceFile, replay or None, hit-rate source).

    With prefix hashes the cache replay measures the hit rate (``assumed_hit_rate`` refused);
    without, ``assumed_hit_rate`` h caches min(round(h x input), input - 1) tokens of each
    request (``core.trace.assumed_prefix_cache``), else the raw input lengths are the workload and
    the hit rate is unknown; ``cache_capacity_gib`` is refused (no hashes: nothing to cache).
    """
    from prfaas_plan.core import kv
    from prfaas_plan.core.trace import assumed_prefix_cache, blocks_for_capacity, replay_prefix_cache
    from prfaas_plan.io.trace import load_trace

    tf = load_trace(resolve(spec.file, base), format=spec.format, model_filter=spec.model_filter,
                    block_tokens=spec.block_tokens)
    trace = tf.trace
    if not tf.has_hashes:
        if spec.cache_capacity_gib is not None:
            raise SpecError(f"the {tf.format} trace records no prefix hashes, so there is nothing to cache: drop "
                            "cache_capacity_gib, or give assumed_hit_rate", field="cache_capacity_gib")
        if spec.assumed_hit_rate is None:
            return trace.input_distribution(), (tf, None, "unknown")
        replay = assumed_prefix_cache(trace, spec.assumed_hit_rate)
        return replay.uncached_distribution(), (tf, replay, "assumed")
    if spec.assumed_hit_rate is not None:
        raise SpecError(f"the {tf.format} trace has prefix hashes, so its hit rate is measured by replaying them "
                        "through the cache: drop assumed_hit_rate (cache_capacity_gib bounds the cache)",
                        field="assumed_hit_rate")
    capacity = None
    if spec.cache_capacity_gib is not None:
        per_token = kv.footprint(model).kv_bytes_per_token
        capacity = blocks_for_capacity(spec.cache_capacity_gib * units.GIB, per_token, trace.block_tokens)
    replay = replay_prefix_cache(trace, capacity_blocks=capacity)
    return replay.uncached_distribution(), (tf, replay, "measured")


def link_law(lk: Any, path: Path, placed: Placed, at: str):
    """The bandwidth law of the link at ``at`` (``link``, ``links[i]``), None for a number; its
    file relative to the scenario's folder, or to the working folder if an option named it."""
    if isinstance(lk.bandwidth, float):
        return None
    from prfaas_plan.io.bandwidth import law_of

    key = f"{at}.bandwidth"
    base = Path.cwd() if placed.option_of(f"{key}.file") else path.parent
    try:
        return law_of(lk.bandwidth, base)
    except SpecError as exc:
        raise (referenced(exc, placed, f"{key}.file") if exc.source else placed.error(exc, key)) from None


def resolve(file: str, base: Path) -> Path:
    p = Path(file).expanduser()
    return p if p.is_absolute() else base / p


def beyond_context(model: Any, output_tokens: float) -> bool:
    """Whether no request can decode ``output_tokens``: more than the model's context holds (the
    loader's check, which io.patch applies too)."""
    limit = model.max_position_embeddings
    return limit is not None and output_tokens > limit


def workload_spec(wl: Workload, path: Path, model: Any, placed: Placed, at: str = "workload") -> WorkloadSpec:
    """The workload at ``at`` (``workload`` or a site's): lengths, output, arrivals, any trace."""
    from prfaas_plan.core.arrivals import rate_profile

    where = placed.place
    # a file named by an option is relative to the working folder, one in the scenario to its folder
    base = Path.cwd() if placed.option_of(f"{at}.input.file") else path.parent
    lengths, traced = load_lengths(wl.input, base, model, placed, f"{at}.input")
    tf, replay, hit_source = traced if traced else (None, None, None)
    trace = tf.trace if tf is not None else None
    output = wl.output_tokens
    if output is None:
        if trace is None:
            raise SpecError("required key is missing", **where(f"{at}.output_tokens"))
        output = float(trace.decode_tokens.mean())  # 0 output tokens count as 1 (core.trace)
    hi, limit = float(lengths.hi), model.max_position_embeddings
    if limit is not None and math.isfinite(hi) and hi > limit:  # the longest request the model cannot take
        longest = f"{hi:,.0f}" if hi < 1e15 else f"{hi:.4g}"
        raise SpecError(f"the longest input, {longest} tokens, is beyond {model.name}'s context of {limit:,} tokens "
                        "(max_position_embeddings)", **where(f"{at}.input" if traced else f"{at}.input.max"))
    if beyond_context(model, output):
        shown = f"{output:,.0f}" if output < 1e15 else f"{output:.4g}"
        raise SpecError(f"{shown} output tokens are beyond {model.name}'s context of {limit:,} tokens "
                        "(max_position_embeddings)", **where(f"{at}.output_tokens"))
    return WorkloadSpec(
        lengths=lengths, output_tokens=float(output),
        input_total_mean=float(trace.input_tokens.mean()) if trace is not None else float(lengths.mean),
        prefix_hit_rate=None if replay is None else float(replay.hit_rate), hit_rate_source=hit_source, trace=trace,
        trace_cached_tokens=None if replay is None else replay.cached_tokens,
        rate_profile=None if trace is None else rate_profile(trace.arrival_s),
        arrival=wl.arrival, arrival_cv=wl.arrival_cv, rate_rps=wl.rate_rps,
        description=_description(wl.input, tf),
    )


def _description(spec: BaseModel, tf: Any) -> dict[str, Any]:
    """The workload input as given (max: inf -> null); a trace's with the format read and its block
    size, and what the reading dropped (BurstGPT)."""
    out = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in spec.model_dump().items()}
    if tf is not None:
        out |= {"format": tf.format, "block_tokens": int(tf.trace.block_tokens), "has_hashes": tf.has_hashes}
        if tf.format == "burstgpt":
            out |= {"failed_excluded": tf.failed_excluded, "filtered_out": tf.filtered_out, "models": list(tf.models)}
    return out
