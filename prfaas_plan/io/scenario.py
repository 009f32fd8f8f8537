"""Scenario YAML: schema (extra="forbid"), ``--set`` overrides by dotted path, conversion to specs."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator, model_validator

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog, is_path_like, load_gpu, load_model, read_yaml, validate
from prfaas_plan.io.schema import ProfileFields, Strict
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import (
    ClusterSpec,
    DecodeSpec,
    LinkSpec,
    ScenarioSpec,
    SearchSpec,
    WorkloadSpec,
)

DEFAULT_SCENARIO = "paper-case-study"


def _tokens(v: Any) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return float(units.parse_length(str(v)))


def _bandwidth(v: Any) -> float:
    return units.parse_bandwidth(v)


def _duration(v: Any) -> float:
    return units.parse_duration(v)


class Cluster(Strict):
    hardware: str
    gpus_per_instance: PositiveInt = 8
    instances: Annotated[int, Field(ge=0)]
    price_per_gpu_hour: PositiveFloat | None = None


class Link(Strict):
    bandwidth: float  # "100Gbps" or a number of Gbps
    usable_fraction: Annotated[float, Field(gt=0, le=1)] = 1.0
    rtt: NonNegativeFloat = 0.0  # "5ms" or seconds

    _bw = field_validator("bandwidth", mode="before")(lambda v: _bandwidth(v))
    _rtt = field_validator("rtt", mode="before")(lambda v: _duration(v))

    @field_validator("bandwidth")
    @classmethod
    def _positive(cls, v: float) -> float:
        if not v > 0:
            raise ValueError(f"must be a positive bandwidth, got {units.bytes_per_s_to_gbps(v):g} Gbps")
        return v


class LogNormal(Strict):
    kind: Literal["lognormal"]
    mu: float
    sigma: float
    min: float = 1.0
    max: float = float("inf")
    _t = field_validator("min", "max", mode="before")(lambda v: _tokens(v))


class FixedLength(Strict):
    kind: Literal["fixed"]
    value: float
    _t = field_validator("value", mode="before")(lambda v: _tokens(v))


class UniformLength(Strict):
    kind: Literal["uniform"]
    min: float
    max: float
    _t = field_validator("min", "max", mode="before")(lambda v: _tokens(v))


class GammaLength(Strict):
    kind: Literal["gamma"]
    shape: float
    scale: float
    min: float = 1.0
    max: float = float("inf")
    _t = field_validator("min", "max", "scale", mode="before")(lambda v: _tokens(v))


class EmpiricalLength(Strict):
    """A CSV of lengths, one per row, or `length,count` rows (a histogram); path relative to the scenario."""

    kind: Literal["empirical"]
    file: str


class TraceLength(Strict):
    """A Mooncake JSONL trace; prefix reuse replayed through an LRU block cache."""

    kind: Literal["trace"]
    file: str
    cache_capacity_gib: PositiveFloat | None = None  # None = unbounded
    block_tokens: PositiveInt = 512


Lengths = Annotated[LogNormal | FixedLength | UniformLength | GammaLength | EmpiricalLength | TraceLength,
                    Field(discriminator="kind")]


class Workload(Strict):
    input: Lengths
    output_tokens: PositiveFloat | None = None  # required unless the trace gives output lengths
    arrival: Literal["poisson", "gamma"] = "poisson"
    arrival_cv: PositiveFloat = 1.0
    rate_rps: PositiveFloat | None = None


class Slo(Strict):
    decode_tokens_per_s: PositiveFloat
    ttft: PositiveFloat | None = None  # optional bound on a TTFT statistic, e.g. 5s
    ttft_statistic: Literal["mean", "p50", "p90", "p99"] = "p90"
    _d = field_validator("ttft", mode="before")(lambda v: None if v is None else _duration(v))


class Decode(Strict):
    mode: Literal["pinned", "derived"] = "derived"
    bs_max: PositiveInt | None = None
    t_decode: PositiveFloat | None = None
    memory_fraction: Annotated[float, Field(gt=0, le=1)] = 0.9
    _d = field_validator("t_decode", mode="before")(lambda v: None if v is None else _duration(v))

    @model_validator(mode="after")
    def _pinned(self) -> Decode:
        if self.mode == "pinned" and (self.bs_max is None or self.t_decode is None):
            raise ValueError("mode pinned needs bs_max and t_decode")
        return self


class Threshold(Strict):
    min: float
    max: float
    step: PositiveFloat = 128.0
    _t = field_validator("min", "max", "step", mode="before")(lambda v: _tokens(v))

    @model_validator(mode="after")
    def _order(self) -> Threshold:
        if self.min >= self.max:
            raise ValueError(f"threshold min {self.min:g} must be below max {self.max:g}")
        return self


class SearchFields(Strict):
    threshold: Threshold | None = None  # default: the workload's whole length range
    method: Literal["paper", "exact"] = "paper"
    size_prfaas: bool = False
    max_prfaas_instances: PositiveInt | None = None
    top: PositiveInt = 5


class Baselines(Strict):
    homogeneous: Cluster | None = None
    naive_heterogeneous: bool = True


class Clusters(Strict):
    prfaas: Cluster
    local: Cluster


class Control(Strict):
    """The scheduler's control loops in the simulator (PAPER.md 2, dual-timescale scheduling)."""

    max_link_utilization: Annotated[float, Field(gt=0, le=1)] | None = None  # short term; None: off
    window: PositiveFloat = 5.0  # sliding window of the link utilisation, s
    margin: NonNegativeFloat = 0.25  # requests with t < l <= t (1 + margin) stay local when the link is busy
    period: PositiveFloat | None = None  # long term: re-balance prefill/decode roles every period; None: off
    queue_per_instance: PositiveFloat = 2.0
    _d = field_validator("window", "period", mode="before")(lambda v: None if v is None else _duration(v))


class ScenarioProfile(ProfileFields):
    model: str


class ScenarioFile(Strict):
    name: str
    source: str = ""
    description: str = ""
    model: str
    profiles: list[ScenarioProfile] = Field(default_factory=list)
    clusters: Clusters
    link: Link
    workload: Workload
    slo: Slo
    decode: Decode = Field(default_factory=Decode)
    search: SearchFields = Field(default_factory=SearchFields)
    baselines: Baselines = Field(default_factory=Baselines)
    layerwise_pipelining: bool = True
    cache_mode: Literal["bandwidth-scarce", "bandwidth-abundant"] = "bandwidth-scarce"
    control: Control = Field(default_factory=Control)


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str) -> dict[str, Any]:
    """``key.sub=value`` overrides; the value is read as YAML (numbers, strings such as 10Gbps)."""
    out = copy.deepcopy(data)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SpecError(f"--set takes key=value, got {item!r}", field="--set")
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part) if isinstance(node, dict) else None
            if child is None:
                child = {}
                node[part] = child
            if not isinstance(child, dict):
                raise SpecError(f"{part!r} is not a section", source=source, field=key)
            node = child
        node[parts[-1]] = value
    return out


def load_lengths(spec: BaseModel, base: Path, model: Any, source: str):
    """The uncached-length distribution, plus trace details where the workload is a trace."""
    try:
        return _lengths(spec, base, model)
    except SpecError as exc:
        if exc.source is not None:  # a trace or CSV file's own error
            raise
        # the distributions call their bounds lo/hi; the YAML calls them min/max
        last = (exc.field or "").rsplit(".", 1)[-1]
        name = {"lo": "min", "hi": "max"}.get(last, last)
        msg = str(exc).split(": ", 1)[-1] if exc.field else str(exc)
        msg = re.sub(r"\blo\b", "min", re.sub(r"\bhi\b", "max", msg))
        raise SpecError(msg, source=source, field=f"workload.input.{name}") from None


def _lengths(spec: BaseModel, base: Path, model: Any):
    from prfaas_plan.core import lengths as L

    if isinstance(spec, LogNormal):
        return L.TruncatedLogNormal(mu=spec.mu, sigma=spec.sigma, lo=spec.min, hi=spec.max), None
    if isinstance(spec, FixedLength):
        return L.Fixed(value=spec.value), None
    if isinstance(spec, UniformLength):
        return L.Uniform(lo=spec.min, hi=spec.max), None
    if isinstance(spec, GammaLength):
        return L.Gamma(shape=spec.shape, scale=spec.scale, lo=spec.min, hi=spec.max), None
    if isinstance(spec, EmpiricalLength):
        from prfaas_plan.io.lengths_csv import read_lengths_csv

        return read_lengths_csv(_resolve(spec.file, base)), None
    assert isinstance(spec, TraceLength)
    from prfaas_plan.core import kv
    from prfaas_plan.core.trace import blocks_for_capacity, replay_prefix_cache
    from prfaas_plan.io.trace import load_mooncake_trace

    trace = load_mooncake_trace(_resolve(spec.file, base), block_tokens=spec.block_tokens)
    capacity = None
    if spec.cache_capacity_gib is not None:
        per_token = kv.footprint(model).kv_bytes_per_token
        capacity = blocks_for_capacity(spec.cache_capacity_gib * units.GIB, per_token, spec.block_tokens)
    replay = replay_prefix_cache(trace, capacity_blocks=capacity, block_tokens=spec.block_tokens)
    return replay.uncached_distribution(), (trace, replay)


def _resolve(file: str, base: Path) -> Path:
    p = Path(file).expanduser()
    if p.is_absolute() or p.exists():
        return p
    return base / p


def scenario_path(ref: str | None, catalog: Catalog) -> Path:
    if ref is None:
        return catalog.find("scenarios", DEFAULT_SCENARIO)
    if is_path_like(ref) or Path(ref).is_file():
        return Path(ref)
    return catalog.find("scenarios", ref)


def load_scenario(ref: str | None, catalog: Catalog, *, overrides: list[str] | None = None,
                  trace: str | None = None, method: str | None = None) -> ScenarioSpec:
    """A scenario by catalog name or file, with ``--set`` overrides, an optional trace and method."""
    path = scenario_path(ref, catalog)
    source = str(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise SpecError("expected a mapping of keys", source=source)
    extra = []
    if trace is not None:
        # the trace brings its own output lengths; --set comes after, e.g. workload.input.cache_capacity_gib
        extra += [f"workload.input={{kind: trace, file: '{Path(trace).resolve()}'}}", "workload.output_tokens=null"]
    extra += list(overrides or [])
    if method is not None:
        extra.append(f"search.method={method}")
    data = apply_overrides(raw, extra, source)
    sc = validate(ScenarioFile, data, source)
    return to_spec(sc, path, catalog)


def _cluster(c: Cluster, catalog: Catalog) -> ClusterSpec:
    return ClusterSpec(instance=InstanceSpec(gpu=load_gpu(c.hardware, catalog), gpus=c.gpus_per_instance),
                       instances=c.instances, price_per_gpu_hour=c.price_per_gpu_hour)


def _control(c: Control):
    if c.max_link_utilization is None and c.period is None:
        return None
    from prfaas_plan.sim.policies import ControlConfig

    return ControlConfig(max_link_utilization=c.max_link_utilization, window_s=c.window, margin=c.margin,
                         period_s=c.period, queue_per_instance=c.queue_per_instance)


def to_spec(sc: ScenarioFile, path: Path, catalog: Catalog) -> ScenarioSpec:
    from dataclasses import replace

    source = str(path)
    model = load_model(sc.model, catalog)
    extra = tuple(p.to_spec() for p in sc.profiles if p.model.lower() == model.name.lower())
    if extra:  # scenario profiles override the model's own for the same instance
        keep = tuple(p for p in model.profiles
                     if not any(e.hardware.lower() == p.hardware.lower() and e.gpus == p.gpus for e in extra))
        model = replace(model, profiles=extra + keep)
    if sc.clusters.prfaas.instances < 1:
        raise SpecError("a PrfaaS cluster needs at least 1 instance, got 0", source=source,
                        field="clusters.prfaas.instances")
    if sc.clusters.local.instances < 2:
        raise SpecError(f"the local PD cluster needs at least 2 instances (one prefill, one decode), got "
                        f"{sc.clusters.local.instances}: no decode instance is left", source=source,
                        field="clusters.local.instances")
    if sc.baselines.homogeneous is not None and sc.baselines.homogeneous.instances < 2:
        raise SpecError(f"homogeneous PD needs at least 2 instances, got {sc.baselines.homogeneous.instances}",
                        source=source, field="baselines.homogeneous.instances")
    lengths, traced = load_lengths(sc.workload.input, path.parent, model, source)
    trace, replay = traced if traced else (None, None)
    output = sc.workload.output_tokens
    if output is None:
        if trace is None:
            raise SpecError("required key is missing", source=source, field="workload.output_tokens")
        output = float(trace.decode_tokens.mean())  # 0 output tokens count as 1 (core.trace)
    input_total = float(trace.input_tokens.mean()) if trace is not None else float(lengths.mean)
    th = sc.search.threshold
    lo, hi = float(lengths.lo), float(lengths.hi)
    if th is None:
        # the workload's whole range; an unbounded tail stops where one request in a million is longer
        top = hi if math.isfinite(hi) else float(lengths.quantile(1 - 1e-6))
        t_min, t_max, step = max(lo - 1, 0.0), top, 128.0
    else:
        t_min, t_max, step = th.min, th.max, th.step
        if t_max < lo or t_min > hi:
            raise SpecError(f"threshold range {t_min:g}..{t_max:g} lies outside the workload's lengths "
                            f"{lo:g}..{hi:g}", source=source, field="search.threshold")
    pinned = sc.decode.mode == "pinned"
    return ScenarioSpec(
        name=sc.name,
        source=sc.source,
        model=model,
        prfaas=_cluster(sc.clusters.prfaas, catalog),
        local=_cluster(sc.clusters.local, catalog),
        link=LinkSpec(bandwidth_bytes_per_s=sc.link.bandwidth, usable_fraction=sc.link.usable_fraction,
                      rtt_s=sc.link.rtt),
        workload=WorkloadSpec(
            lengths=lengths, output_tokens=float(output), input_total_mean=input_total,
            prefix_hit_rate=None if replay is None else float(replay.hit_rate), trace=trace,
            trace_cached_tokens=None if replay is None else replay.cached_tokens,
            arrival=sc.workload.arrival, arrival_cv=sc.workload.arrival_cv, rate_rps=sc.workload.rate_rps,
            description={k: None if isinstance(v, float) and not math.isfinite(v) else v  # max: inf -> null
                         for k, v in sc.workload.input.model_dump().items()},
        ),
        decode_tokens_per_s=sc.slo.decode_tokens_per_s,
        ttft_slo_s=sc.slo.ttft,
        ttft_statistic=sc.slo.ttft_statistic,
        decode=DecodeSpec(bs_max=sc.decode.bs_max if pinned else None,
                          t_decode_s=sc.decode.t_decode if pinned else None,
                          memory_fraction=sc.decode.memory_fraction),
        search=SearchSpec(threshold_min=t_min, threshold_max=t_max, threshold_step=step, method=sc.search.method,
                          size_prfaas=sc.search.size_prfaas, max_prfaas_instances=sc.search.max_prfaas_instances,
                          top=sc.search.top),
        homogeneous=_cluster(sc.baselines.homogeneous, catalog) if sc.baselines.homogeneous else None,
        naive_heterogeneous=sc.baselines.naive_heterogeneous,
        layerwise_pipelining=sc.layerwise_pipelining,
        cache_mode=sc.cache_mode,
        control=_control(sc.control),
        path=source,
    )
