"""Library API of `thresholds`: the router's threshold table, what a router's short-term loop reads.

The fleet is the scenario's, as given (instances per site). On a grid of link bandwidth x load:

- Bandwidth. One link (the two-cluster form): absolute values, a range ``1Gbps..100Gbps:8:log``
  (the default; ``:log`` for log steps, as `sweep` takes them) or a list ``10,25,100Gbps`` (a bare
  number is Gbps), or percentages of the link's nominal bandwidth. Several PD sites: percentages
  only (default ``10%..100%:4:log``): each grid point scales EVERY link by that share of its own
  nominal bandwidth (the scenario's, after ``--set``). Each point patches the loaded spec
  (``io.patch``; a reload where a patch cannot prove it is the loader's). At most 100 points.
- At each bandwidth, ``optimize`` (the long-term loop, without its TTFT-SLO search) re-plans the
  split of each site (N_p,i / N_d,i) and N_prfaas, and gives the throughput-optimal t*_i.
  Lambda_max(B) is the exact-method capacity of that configuration (``core.joint.point``, what
  ``latency --load`` scales and a simulation saturates at); with ``--method paper`` optimize's
  own Lambda, kept as ``lambda_max_plan_rps``, is the paper method's and a few per cent higher.
- Load l: the total rate is l x Lambda_max(B); 0 < l <= 1.5 (at most 100 loads, each once). At
  l >= 1 the entry is t*_i (offload as optimize does; no TTFT). Below 1, with optimize's split
  and N_prfaas held, the t_i that minimises the scenario's TTFT statistic (``slo.ttft_statistic``,
  default p90) in the analytic model (``api.latency.system_latency`` on the PrfaaS
  system built as ``api.systems`` builds the plan's, at SEARCH_NODES quantile nodes per path)
  among the candidates: t*_i, "offload nothing" (t None), "offload everything" and 48 thresholds
  log-spaced between the workload's shortest and longest length, keeping those that route
  differently (distinct P(L > t)), and only configurations whose capacity exceeds the rate.
  ``offload`` is false when offloading nothing wins. Ties keep t*, then the earlier candidate.
- Several PD sites: coordinate descent from every site at t*_j, each site's t in turn with the
  others held, 2 passes (a site whose neighbours did not move since its last turn is skipped),
  minimising the demand-weighted mean of the sites' statistics, sum_i s_i TTFT_stat,i (for the
  mean: the mean over every request; a quantile over every request instead would let a small
  site's tail grow without bound unseen: region-b of two-regions reached a P90 of 794 s at 2 Gbps
  and load 0.8). A site's ``ttft_s`` may end above its own at t* where the others gain more.
  One site: one pass, every candidate weighed.

Cost: each weighed candidate is one evaluation of the analytic model (~10-25 ms, almost all in
its quantile bisections); a PD site weighs up to ~51 per load below 1, and per pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from prfaas_plan import ranges, units
from prfaas_plan.api.headline import headline
from prfaas_plan.api.holds import longest
from prfaas_plan.api.latency import system_latency
from prfaas_plan.api.slo import SEARCH_NODES
from prfaas_plan.api.systems import PRFAAS, site_config, topology_system
from prfaas_plan.api.topology import site_models
from prfaas_plan.core import joint
from prfaas_plan.core.stages import offload_all_threshold
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.io import patch
from prfaas_plan.io.overrides import grid_point
from prfaas_plan.io.scenario import TraceArg, load_scenario
from prfaas_plan.specs.latency import TopologyTiming
from prfaas_plan.specs.results import TopologyPoint
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.thresholds import ABSOLUTE, RELATIVE, LinkGrid, ThresholdEntry, ThresholdTable
from prfaas_plan.specs.topology import TopologySystem

GRID = 48  # log-spaced candidate thresholds per site
PASSES = 2  # coordinate-descent passes over several PD sites
MAX_POINTS = 100  # per axis
MAX_LOAD = 1.5
DEFAULT_BANDWIDTHS, DEFAULT_SCALES = "1Gbps..100Gbps:8:log", "10%..100%:4:log"
DEFAULT_LOADS = "0.2,0.4,0.6,0.8,1.0"
MIXED = "mixed"  # a list of shares and bandwidths, one link's nominal resolves it


def _items(text: str, option: str, parse: Callable[[str], float]) -> tuple[list[str], list[float]]:
    """``a..b:n[:log]`` or a comma list -> (texts, numbers); one line naming ``option`` if bad."""
    try:
        if ".." in text:
            texts, _ = ranges.parse_range(text, max_points=MAX_POINTS)
        else:
            texts = units.split_items(text, "value")
        values = [parse(t) for t in texts]
    except ValueError as exc:
        raise SpecError(str(exc), field=option) from None
    if len(texts) > MAX_POINTS:
        raise SpecError(f"{len(texts):,} values; at most {MAX_POINTS}", field=option)
    if len(set(values)) < len(values):
        twice = next(t for i, t in enumerate(texts) if values[i] in values[:i])
        raise SpecError(f"lists {twice} twice", field=option)
    return texts, values


def parse_loads(text: str) -> list[float]:
    """Loads as fractions of Lambda_max(B): a list ``0.2,0.5,1`` or a range ``0.1..1:10``; each in (0, 1.5]."""
    _, values = _items(str(text), "--loads", units.parse_fraction)
    for v in values:
        if not 0 < v <= MAX_LOAD:
            raise SpecError(f"a load is a fraction of Lambda_max in (0, {MAX_LOAD:g}], got {v:g}", field="--loads")
    return values


def parse_bandwidths(text: str) -> tuple[str, list[str], list[float]]:
    """(ABSOLUTE, texts, bytes/s), (RELATIVE, texts, multiples of the nominal bandwidth) or, for a
    list of both (10%,100Gbps), (MIXED, texts, each item's): one link's nominal resolves it (``_resolved``)."""
    text = str(text)
    if "%" not in text:
        texts, values = _items(text, "--bandwidths", units.parse_bandwidth)
        return ABSOLUTE, texts, values
    if ".." not in text:
        try:
            items = units.split_items(text, "value")
        except ValueError as exc:
            raise SpecError(str(exc), field="--bandwidths") from None
        if not all(t.endswith("%") for t in items):
            return MIXED, items, [_item(t) for t in items]
    plain = text.replace("%", "")
    texts, values = _items(plain, "--bandwidths", units.parse_number)
    for t, v in zip(texts, values, strict=True):
        if not v > 0:
            raise SpecError(f"{t}% is not a positive share of the nominal bandwidth", field="--bandwidths")
    return RELATIVE, [f"{t}%" for t in texts], [float(f"{v!r}e-2") for v in values]  # 21.54% is 0.2154


def _item(text: str) -> float:
    """One item of a mixed list: a share (50%: 0.5) or a bandwidth (bytes/s; a bare number is Gbps)."""
    try:
        if text.endswith("%"):
            v = units.parse_number(text[:-1]) / 100
            if not v > 0:
                raise units.UnitError(f"{text} is not a positive share of the nominal bandwidth")
            return v
        return units.parse_bandwidth(text)
    except units.UnitError as exc:
        raise SpecError(f"{exc} (each point a share of the nominal bandwidth, 50%, or a bandwidth, 10Gbps)",
                        field="--bandwidths") from None


def _resolved(sc: ScenarioSpec, texts: list[str], values: list[float]) -> list[float]:
    """A mixed list's bandwidths (bytes/s) on the scenario's one link: a share of its nominal or as given."""
    if sc.topology.multi_site:
        raise SpecError(f"this scenario has {len(sc.topology.links)} links; give every grid point as a share of each "
                        f"link's nominal bandwidth, e.g. 10%,50%,100% (got {', '.join(texts)})", field="--bandwidths")
    nominal = sc.topology.links[0].link.bandwidth_bytes_per_s
    out = [v * nominal if t.endswith("%") else v for t, v in zip(texts, values, strict=True)]
    for i, b in enumerate(out):
        if b in out[:i]:
            raise SpecError(f"{texts[out.index(b)]} and {texts[i]} are the same bandwidth on this link",
                            field="--bandwidths")
    return out


@dataclass
class Fleet:
    """optimize's configuration at one bandwidth and each site's candidate thresholds; a choice
    is one candidate index per site (0 is t*). Capacities are cached, they hold for every load."""

    sc: ScenarioSpec
    models: list[Any]
    timings: list[Any]
    n_prfaas: int
    n_p: list[int]
    n_d: list[int]
    lambda_plan: float
    cands: list[list[float | None]]  # per site: t*, then the others
    routed: list[Any]  # core.stages.Candidates at every candidate (None: no request offloaded)
    _caps: dict[tuple[int, ...], TopologyPoint] = field(default_factory=dict)

    @property
    def star(self) -> tuple[int, ...]:
        return (0,) * len(self.cands)

    def capacity(self, choice: tuple[int, ...]) -> TopologyPoint:
        if choice not in self._caps:
            self._caps[choice] = joint.point(self.models, self.routed, list(choice), float(self.n_prfaas))
        return self._caps[choice]

    def system(self, choice: tuple[int, ...]) -> TopologySystem:
        """The PrfaaS-PD system at these thresholds, built as ``api.systems`` builds the plan's."""
        cap = self.capacity(choice)
        binding = cap.stage
        configs = [site_config(self.sc, i, self.timings[i], name=PRFAAS, threshold=self.cands[i][k],
                           n_prfaas=self.n_prfaas, n_p=self.n_p[i], n_d=self.n_d[i],
                           capacity=cap.lambda_max_rps * sp.demand_share, binding=binding)
                   for i, (k, sp) in enumerate(zip(choice, cap.sites, strict=True))]
        return topology_system(self.sc, PRFAAS, self.n_prfaas, configs, cap.lambda_max_rps, binding)

    def timing(self, choice: tuple[int, ...], rate_rps: float) -> TopologyTiming:
        return system_latency(self.sc, self.system(choice), rate_rps, nodes=SEARCH_NODES)


def candidates(lengths: Any, t_star: float) -> list[float | None]:
    """t*, offload nothing (None), offload everything and GRID log-spaced thresholds between the
    shortest and longest length, without those routing like an earlier one (same P(L > t))."""
    lo, hi = max(float(lengths.lo), 1.0), _none_at(lengths)
    out: list[float | None] = []
    seen: set[float] = set()
    for t in [t_star, None, offload_all_threshold(lengths), *np.geomspace(lo, max(hi, lo * 2), GRID)]:
        p = 0.0 if t is None else float(lengths.tail_prob(t))
        if p not in seen:
            seen.add(p)
            out.append(None if t is None else float(t))
    return out


def _none_at(lengths: Any) -> float:
    """A threshold offloading nothing, for the throughput kernel (which takes numbers)."""
    return longest(lengths)


def fleet(sc: ScenarioSpec) -> Fleet:
    """optimize on ``sc`` (without the TTFT SLO search) and the candidates around its plan."""
    best = headline(sc).point
    models, timings = site_models(sc)  # the service laws api.systems builds its systems from
    sites = [(sp.threshold_tokens, sp.n_p, sp.n_d) for sp in best.sites]
    cands, routed = [], []
    for m, (t, n_p, _) in zip(models, sites, strict=True):
        assert t is not None
        c = candidates(m.lengths, float(t))
        cands.append(c)
        ts = np.array([_none_at(m.lengths) if x is None else x for x in c])
        routed.append(joint.at(m, ts, n_p, Method.EXACT))
    return Fleet(sc=sc, models=models, timings=timings, n_prfaas=round(best.n_prfaas), n_p=[s[1] for s in sites],
                 n_d=[s[2] for s in sites], lambda_plan=best.lambda_max_rps, cands=cands, routed=routed)


def statistic(t: Any, stat: str) -> float | None:
    """A site's TTFT statistic (its SystemTiming)."""
    return t.statistic(stat)


def objective(t: TopologyTiming, stat: str) -> float | None:
    """The demand-weighted mean of the sites' statistics (one site: its own); None if unstable."""
    values = [(t.demand_shares[name], statistic(s, stat)) for name, s in t.sites.items()]
    if not t.stable or any(v is None for _, v in values):
        return None
    return float(sum(w * v for w, v in values if v is not None)) if len(values) > 1 else values[0][1]


def descend(f: Fleet, rate_rps: float, stat: str
            ) -> tuple[tuple[int, ...], TopologyTiming | None, TopologyTiming | None]:
    """(the choice minimising the ``objective`` at ``rate_rps``, its timing, the timing at t*);
    the timings None if not even t* is stable there."""
    memo: dict[tuple[int, ...], tuple[float, TopologyTiming] | None] = {}

    def value(choice: tuple[int, ...]) -> tuple[float, TopologyTiming] | None:
        if choice not in memo:
            memo[choice] = None
            if f.capacity(choice).lambda_max_rps > rate_rps:
                t = f.timing(choice, rate_rps)
                v = objective(t, stat)
                if v is not None:
                    memo[choice] = (float(v), t)
        return memo[choice]

    current, k = f.star, len(f.cands)
    best = star = value(current)
    if star is None:
        return current, None, None
    dirty = set(range(k))
    for _ in range(PASSES if k > 1 else 1):
        for i in range(k):
            if i not in dirty:
                continue
            dirty.discard(i)
            trials = [c for j in range(len(f.cands[i]))
                      if f.capacity(c := (*current[:i], j, *current[i + 1:])).lambda_max_rps > rate_rps]
            chosen = current
            for trial in trials:
                r = value(trial)
                if r is not None and r[0] < best[0]:  # ties: the current choice stays, else the first
                    best, chosen = r, trial
            if chosen != current:
                current = chosen
                dirty |= set(range(k)) - {i}
    return current, best[1], star[1]


def _keys(sc: ScenarioSpec) -> list[str]:
    return [lk.setting("bandwidth") for lk in sc.topology.links]


def _patched(base: patch.Loaded, keys: list[str], texts: list[str]) -> ScenarioSpec | None:
    spec = base.spec
    for key, text in zip(keys, texts, strict=True):  # each key patches its own link of the mapping
        got = patch.point(replace(base, spec=spec), key, text)
        if got is None:
            return None
        spec = got
    return spec


def _specs(sc0: ScenarioSpec, ref: str | None, catalog: Any, *, overrides: list[str], method: str | None,
           trace: TraceArg, grid: str, texts: list[str], values: list[float]) -> Iterator[ScenarioSpec]:
    """The scenario at each grid point: ``sc0`` (loaded with ``overrides``) patched, else reloaded."""
    if grid == ABSOLUTE and sc0.topology.multi_site:
        raise SpecError(f"this scenario has {len(sc0.topology.links)} links; give each grid point as a share of "
                        "every link's nominal bandwidth, e.g. 10%..100%:4:log", field="--bandwidths")
    nominal = [lk.link.bandwidth_bytes_per_s for lk in sc0.topology.links]
    base = patch.loaded(sc0, ref, catalog, overrides=overrides, trace=trace, method=method)
    keys = _keys(sc0)
    if base is not None and not patch.agrees(sc0, _patched(base, keys, [f"{b!r}B/s" for b in nominal])):
        base = None  # the patch would not rebuild the scenario as loaded: reload every point
    for v in values:
        point = [f"{v!r}B/s"] if grid == ABSOLUTE else [f"{v * b!r}B/s" for b in nominal]
        sc = _patched(base, keys, point) if base is not None else None
        yield sc if sc is not None else load_scenario(
            ref, catalog, overrides=overrides, method=method, trace=trace,
            points=[grid_point(k, t, "--bandwidths") for k, t in zip(keys, point, strict=True)])


def _entries(f: Fleet, load: float, choice: tuple[int, ...], timing: TopologyTiming | None,
             star: TopologyTiming | None, lam: float, stat: str, scale: float) -> list[ThresholdEntry]:
    topo = f.sc.topology
    cap = f.capacity(choice)
    out = []
    for i, (s, lk) in enumerate(zip(topo.sites, topo.links, strict=True)):
        t = f.cands[i][choice[i]]
        p = float(cap.sites[i].p_offload) if t is not None else 0.0
        bw = lk.link.bandwidth_bytes_per_s
        out.append(ThresholdEntry(
            site=s.name, bandwidth_bytes_per_s=bw, scale=scale, load=load, rate_rps=load * lam,
            site_rate_rps=load * lam * s.demand_share, threshold_tokens=t, offload=p > 0, p_offload=p,
            ttft_s=statistic(timing.sites[s.name], stat) if timing else None,
            ttft_weighted_s=objective(timing, stat) if timing else None,
            threshold_star_tokens=float(f.cands[i][0]),  # type: ignore[arg-type]
            ttft_star_s=statistic(star.sites[s.name], stat) if star else None,
            ttft_weighted_star_s=objective(star, stat) if star else None, lambda_max_rps=lam,
            lambda_max_plan_rps=f.lambda_plan, n_p=f.n_p[i], n_d=f.n_d[i], n_prfaas=f.n_prfaas))
    return out


def thresholds(ref: str | None, catalog: Any, *, overrides: list[str] | None = None, bandwidths: str | None = None,
               loads: str = DEFAULT_LOADS, method: str | None = None, trace: TraceArg = None,
               progress: Callable[[str, int, int], None] | None = None) -> ThresholdTable:
    """The threshold table of a scenario (see the module docstring); ``bandwidths`` None: the
    default grid of its form (one link: absolute, several: shares)."""
    load_values = parse_loads(loads)
    parsed = parse_bandwidths(bandwidths) if bandwidths is not None else None
    overrides = list(overrides or [])
    sc0 = load_scenario(ref, catalog, overrides=overrides, method=method, trace=trace)
    topo = sc0.topology
    grid, texts, values = parsed or parse_bandwidths(DEFAULT_SCALES if sc0.multi_site else DEFAULT_BANDWIDTHS)
    if grid == MIXED:
        grid, values = ABSOLUTE, _resolved(sc0, texts, values)
    nominal = [lk.link.bandwidth_bytes_per_s for lk in topo.links]
    per: dict[str, list[ThresholdEntry]] = {}
    done, total = 0, len(texts) * len(load_values)
    bws: list[list[float]] = []
    points = _specs(sc0, ref, catalog, overrides=overrides, method=method, trace=trace, grid=grid, texts=texts,
                    values=values)
    for sc, text, v in zip(points, texts, values, strict=True):
        bws.append([lk.link.bandwidth_bytes_per_s for lk in sc.topology.links])
        scale = v if grid == RELATIVE else bws[-1][0] / nominal[0]
        try:
            f = fleet(sc)
        except InfeasibleError as exc:
            if exc.binding == "memory":  # a fleet that cannot hold the model, at every bandwidth
                raise
            raise InfeasibleError(f"--bandwidths {text}: {exc}", binding=exc.binding) from None
        lam = f.capacity(f.star).lambda_max_rps
        for load in load_values:
            choice, timing, star = (f.star, None, None) if load >= 1 else descend(f, load * lam, sc.ttft_statistic)
            for e in _entries(f, load, choice, timing, star, lam, sc.ttft_statistic, scale):
                per.setdefault(e.site, []).append(e)
            done += 1
            if progress is not None:
                progress("thresholds", done, total)
    links = tuple(LinkGrid(site=lk.target, link=lk.name, nominal_bytes_per_s=lk.link.bandwidth_bytes_per_s,
                           bandwidths_bytes_per_s=tuple(b[i] for b in bws)) for i, lk in enumerate(topo.links))
    scales = tuple(e.scale for e in per[topo.sites[0].name][::len(load_values)])
    return ThresholdTable(
        scenario=sc0.name, model=sc0.model.name, statistic=sc0.ttft_statistic, method=sc0.search.method, grid=grid,
        bandwidth_texts=tuple(texts), scales=scales, loads=tuple(load_values), links=links,
        sites={k: tuple(v) for k, v in per.items()}, candidates=GRID, passes=PASSES if sc0.multi_site else 1,
        nodes=SEARCH_NODES)
