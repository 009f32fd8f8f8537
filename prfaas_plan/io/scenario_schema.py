"""The scenario YAML schema (pydantic, extra="forbid"); ``io/scenario.py`` loads it into specs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator, model_validator

from prfaas_plan import units
from prfaas_plan.io.bandwidth import BandwidthField, bandwidth_field
from prfaas_plan.io.schema import ProfileFields, Strict


def _tokens(v: Any) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return float(units.parse_length(str(v)))


def _bandwidth(v: Any) -> float:
    return units.parse_bandwidth(v)


def _duration(v: Any) -> float:
    return units.parse_duration(v)


MAX_INSTANCES = 10_000  # per cluster (80,000 GPUs at 8 a piece): the search walks every split


class Cluster(Strict):
    hardware: str
    gpus_per_instance: Annotated[int, Field(ge=1, le=1024)] = 8
    instances: Annotated[int, Field(ge=0, le=MAX_INSTANCES)]
    price_per_gpu_hour: PositiveFloat | None = None
    stack: str | None = Field(default=None, min_length=1)  # its serving-stack profile (default: the scenario's)


class Link(Strict):
    bandwidth: float | BandwidthField  # "100Gbps", a number of Gbps, or a law (io/bandwidth.py): its median
    usable_fraction: Annotated[float, Field(gt=0, le=1)] = 1.0
    rtt: NonNegativeFloat = 0.0  # "5ms" or seconds
    handoff: NonNegativeFloat = 0.0  # fixed cost per transfer, "200ms" or seconds
    connections: Annotated[int, Field(ge=1, le=100_000)] | None = None  # parallel TCP streams
    max_window: PositiveFloat | None = None  # one stream's window, "4MiB" or bytes: goodput window / RTT
    stream_bandwidth: PositiveFloat | None = None  # or one stream's goodput cap, "2Gbps"
    share_cap: Annotated[float, Field(gt=0, le=1)] = 1.0  # the most of the line KV may use

    _law = field_validator("bandwidth", mode="before")(lambda v: bandwidth_field(v))
    _bw = field_validator("stream_bandwidth", mode="before")(lambda v: None if v is None else _bandwidth(v))
    _rtt = field_validator("rtt", "handoff", mode="before")(lambda v: _duration(v))
    _win = field_validator("max_window", mode="before")(lambda v: None if v is None else units.parse_size(v))


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
    """A request trace (``io/trace.py``: Mooncake, Azure, BurstGPT, Bailian); a trace with prefix
    hashes is replayed through an LRU block cache, one without may assume a hit rate."""

    kind: Literal["trace"]
    file: str
    format: Literal["auto", "mooncake", "azure", "burstgpt", "bailian"] = "auto"  # auto: from the first line
    model_filter: str | None = None  # BurstGPT: keep the rows whose Model is exactly this
    cache_capacity_gib: PositiveFloat | None = None  # None = unbounded; traces with hashes only
    block_tokens: PositiveInt | None = None  # None = the format's own (Mooncake 512, Bailian 16)
    assumed_hit_rate: Annotated[float, Field(ge=0, lt=1)] | None = None  # traces without hashes only


# a mean of whole tokens, each request decoding at least one; finite (inf was "beyond the context")
OutputTokens = Annotated[float, Field(ge=1, allow_inf_nan=False)]
Lengths = Annotated[LogNormal | FixedLength | UniformLength | GammaLength | EmpiricalLength | TraceLength,
                    Field(discriminator="kind")]


class Workload(Strict):
    input: Lengths
    output_tokens: OutputTokens | None = None  # required unless the trace gives output lengths
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
    min: Annotated[float, Field(allow_inf_nan=False)]
    max: Annotated[float, Field(allow_inf_nan=False)]
    step: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 128.0
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
    max_prfaas_instances: Annotated[int, Field(ge=1, le=MAX_INSTANCES)] | None = None
    top: PositiveInt = 5


class Baselines(Strict):
    homogeneous: Cluster | None = None
    naive_heterogeneous: bool = True


class Clusters(Strict):
    prfaas: Cluster
    local: Cluster


class SiteWorkload(Strict):
    """A PD site's own workload: each key given replaces the scenario's."""

    input: Lengths | None = None
    output_tokens: OutputTokens | None = None
    arrival: Literal["poisson", "gamma"] | None = None
    arrival_cv: PositiveFloat | None = None


class Site(Cluster):
    """A pool of instances with a role: ``prfaas`` (the prefill service) or ``pd`` (a PD cluster)."""

    role: Literal["prfaas", "pd"]
    demand_share: Annotated[float, Field(gt=0, le=1)] | None = None  # PD sites; default: equal
    workload: SiteWorkload | None = None  # PD sites


class SiteLink(Link):
    """A link from the prefill site to a PD site (``from``/``to`` name sites)."""

    source: str = Field(alias="from")
    target: str = Field(alias="to")


class Control(Strict):
    """The scheduler's control loops in the simulator (the dual-timescale scheduling of
    docs/model.md#the-prfaas-architecture)."""

    max_link_utilization: Annotated[float, Field(gt=0, le=1)] | None = None  # short term; None: off
    window: PositiveFloat = 5.0  # sliding window of the link utilisation, s
    margin: NonNegativeFloat = 0.25  # requests with t < l <= t (1 + margin) stay local when the link is busy
    period: PositiveFloat | None = None  # long term: re-balance prefill/decode roles every period; None: off
    queue_per_instance: PositiveFloat = 2.0
    _d = field_validator("window", "period", mode="before")(lambda v: None if v is None else _duration(v))


def _rate(v: Any) -> float:
    return units.parse_rate(v)


class SizingRole(Strict):
    """What one role may buy: hardware kinds, GPUs per instance, at most this many instances a site."""

    hardware: Annotated[list[str], Field(min_length=1)]
    gpus_per_instance: Annotated[list[Annotated[int, Field(ge=1, le=1024)]], Field(min_length=1)] = Field(
        default_factory=lambda: [8])
    max_instances: Annotated[int, Field(ge=1, le=MAX_INSTANCES)]
    price_per_gpu_hour: dict[str, PositiveFloat] = Field(default_factory=dict)  # by hardware: over the catalog's


class SizingTier(Strict):
    bandwidth: float
    price_per_hour: NonNegativeFloat
    usable_fraction: Annotated[float, Field(gt=0, le=1)] | None = None  # None: the link's own
    _bw = field_validator("bandwidth", mode="before")(lambda v: _bandwidth(v))


class Sizing(Strict):
    """`size`: the demand to serve and what may be bought for it."""

    demand: PositiveFloat  # "40rps" or req/s, total over the PD sites
    headroom: Annotated[float, Field(gt=0, le=1)] = 0.8
    prfaas: SizingRole
    local: SizingRole
    links: Annotated[list[SizingTier], Field(min_length=1)]
    egress_price_per_gb: NonNegativeFloat = 0.0  # dollars per GB (1e9 bytes) of KV that crosses
    demand_factors: Annotated[list[PositiveFloat], Field(min_length=1, max_length=64)] = Field(
        default_factory=lambda: [0.25, 0.5, 1.0, 2.0, 4.0])
    ttft_bounds: Annotated[list[PositiveFloat], Field(max_length=32)] | None = None  # the frontier's; None: derived
    _d = field_validator("demand", mode="before")(lambda v: _rate(v))
    _t = field_validator("ttft_bounds", mode="before")(
        lambda v: v if not isinstance(v, list) else [_duration(x) for x in v])


class ScenarioProfile(ProfileFields):
    model: str


class ScenarioFile(Strict):
    name: str
    source: str = ""
    description: str = ""
    model: str
    stack: str | None = Field(default=None, min_length=1)  # serving-stack profile (stacks/); default DEFAULT_STACK
    profiles: list[ScenarioProfile] = Field(default_factory=list)
    clusters: Clusters | None = None  # the two-cluster form, or
    link: Link | None = None
    sites: dict[str, Site] | None = None  # the topology form: sites and links
    links: list[SiteLink] | None = None
    workload: Workload
    slo: Slo
    decode: Decode = Field(default_factory=Decode)
    search: SearchFields = Field(default_factory=SearchFields)
    baselines: Baselines = Field(default_factory=Baselines)
    layerwise_pipelining: bool = True
    cache_mode: Literal["bandwidth-scarce", "bandwidth-abundant"] = "bandwidth-scarce"
    control: Control = Field(default_factory=Control)
    sizing: Sizing | None = None
