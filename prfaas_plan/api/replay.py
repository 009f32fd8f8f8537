"""Library API of a replayed bandwidth series: the PrfaaS-PD plan under each router policy on the
same series and the same arrivals (``sim.replay``).

The fleet and split are the throughput plan's (at the nominal bandwidth); the series sets the
link's line bandwidth over time (B_out from the link's usable fraction, share cap and streams at
each value). Policies: the plan's t throughout (static), the paper's link-utilisation rule
(``control.max_link_utilization``, default 0.9 when the scenario sets none), and the threshold
table (`prfaas-plan thresholds` on a bandwidth grid spanning the series, read at the current
bandwidth and the last minute's arrival rate). The table's entries were chosen for the split
optimize re-plans at each bandwidth; the run holds the nominal split (the long-term loop is
``control.period``'s), so the table is read as the short-term loop would read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.replay import POLICIES, RULE, TABLE, BandwidthSeries, TableLookup
from prfaas_plan.sim.result import SimResult
from prfaas_plan.sim.run import simulate
from prfaas_plan.specs.run import MAX_REQUESTS, RunArgs, check_size
from prfaas_plan.specs.run import check as run_check
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig

GRID = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)  # the table's bandwidths x the nominal
LOADS = "0.25,0.5,0.75,0.9,1.0"


def series_of(sc: ScenarioSpec, times_s: Any, line_bytes_per_s: Any) -> BandwidthSeries:
    """A line-bandwidth series as the run replays it: B_out at each value from the scenario's link."""
    link = sc.link
    line = np.asarray(line_bytes_per_s, dtype=np.float64)
    usable = np.array([replace(link, bandwidth_bytes_per_s=float(b)).usable_bytes_per_s if b > 0 else 0.0
                       for b in line])
    return BandwidthSeries(times_s=np.asarray(times_s, dtype=np.float64), line_bytes_per_s=line,
                           usable_bytes_per_s=usable)


def series_from_law(sc: ScenarioSpec, law: Any) -> BandwidthSeries:
    """A ``specs.bandwidth.BandwidthLaw`` of kind series as the run replays it, its first time at 0."""
    if law is None or law.times_s is None or law.series_bytes_per_s is None:
        raise SpecError("no bandwidth series: give --series FILE or link.bandwidth: {kind: series, file: ...}",
                        field="--series")
    t0 = law.times_s[0]
    return series_of(sc, [t - t0 for t in law.times_s], law.series_bytes_per_s)


def lookup(table: Any, site: str | None = None) -> TableLookup:
    """One site's rows of a ``specs.thresholds.ThresholdTable`` as the router reads them (None:
    its only PD site, ``local`` or the one a ``sites:`` scenario names)."""
    if site is None:
        site = next(iter(table.sites))
    rows: dict[float, list[tuple[float, float]]] = {}
    split: dict[float, int] = {}
    for e in table.sites[site]:
        rows.setdefault(e.bandwidth_bytes_per_s, []).append(
            (e.rate_rps, math.inf if e.threshold_tokens is None else e.threshold_tokens))
        split[e.bandwidth_bytes_per_s] = e.n_p
    bws = sorted(rows)
    return TableLookup(bandwidths=tuple(bws), rates=tuple(tuple(r for r, _ in sorted(rows[b])) for b in bws),
                       thresholds=tuple(tuple(t for _, t in sorted(rows[b])) for b in bws),
                       n_p=tuple(split[b] for b in bws))


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRun:
    policy: str
    result: SimResult
    served_rps: float | None
    attainment: float | None  # share of measured requests with TTFT <= the SLO


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    scenario: str
    rate_rps: float
    series: BandwidthSeries
    runs: tuple[PolicyRun, ...]
    bound_s: float | None
    statistic: str


def check(sc: ScenarioSpec, policies: tuple[str, ...]) -> None:
    """Refusals before any work: several PD sites, an unknown or no policy."""
    if sc.multi_site:
        raise SpecError("a replayed bandwidth series runs on one PD site; this scenario has several",
                        field="link.bandwidth")
    bad = [p for p in policies if p not in POLICIES]
    if bad or not policies:
        raise SpecError(f"unknown policy {bad[0]!r}; policies are {', '.join(POLICIES)}" if bad else
                        f"no policy given; policies are {', '.join(POLICIES)}", field="--policies")


def table_for(ref: str | None, catalog: Any, overrides: list[str], sc: ScenarioSpec, series: BandwidthSeries) -> Any:
    """The threshold table on a grid spanning the series (the nominal bandwidth x ``GRID``)."""
    from prfaas_plan.api.thresholds import thresholds

    nominal = sc.link.bandwidth_bytes_per_s
    top = max(float(series.line_bytes_per_s.max()), nominal)
    grid = sorted({nominal * g for g in GRID} | {top})
    texts = ",".join(f"{units.bytes_per_s_to_gbps(b):.6g}" for b in grid)
    return thresholds(ref, catalog, overrides=overrides, bandwidths=texts, loads=LOADS)


def run_size(sc: ScenarioSpec, series: BandwidthSeries, *, rate_rps: float | None = None,
             load: float | None = None, duration_s: float | None = None, source: str | None = None
             ) -> tuple[float, float]:
    """(rate, seconds of arrivals) of the runs, refused before any work: a rate, load or duration
    out of range (naming the option given), a run past ``MAX_REQUESTS`` (naming ``--duration`` or
    the series, ``source``, whose span sets it)."""
    run_check(RunArgs(rate_rps=rate_rps, load=load, duration_s=duration_s))
    c = systems(sc, which=(PRFAAS,))[PRFAAS]
    rate = rate_rps if rate_rps is not None else (load if load is not None else 0.7) * c.capacity_rps
    if duration_s is not None:
        check_size(rate, RunArgs(duration_s=duration_s))
        return rate, duration_s
    span = series.span_s
    if rate * span > MAX_REQUESTS:
        raise SpecError(f"the series lasts {span:.4g} s (its last value held as long as the first): at "
                        f"{rate:.4g} req/s that is about {rate * span:.3g} "
                        f"requests per policy; a run takes at most {MAX_REQUESTS:,}: give --duration <= "
                        f"{MAX_REQUESTS / rate:.4g} s (or a shorter series)", source=source or "--series")
    return rate, span


def replay(sc: ScenarioSpec, series: BandwidthSeries, *, rate_rps: float | None = None, load: float | None = None,
           duration_s: float | None = None, seed: int = 0, policies: tuple[str, ...] = POLICIES,
           table: TableLookup | None = None, window_s: float = 300.0) -> ReplayResult:
    """The plan under each policy on ``series``, the same arrivals for each (seed)."""
    check(sc, policies)
    rate, span = run_size(sc, series, rate_rps=rate_rps, load=load, duration_s=duration_s)
    c = systems(sc, which=(PRFAAS,))[PRFAAS]
    runs = []
    for policy in policies:
        control = sc.control
        if policy == RULE and (control is None or control.max_link_utilization is None):
            control = ControlConfig(max_link_utilization=0.9)
        elif policy != RULE and control is not None:
            control = replace(control, max_link_utilization=None)
        res = simulate(sc, c, rate_rps=rate, duration_s=span, rng=np.random.default_rng(seed), control=control,
                       warmup_fraction=0.0,
                       replay={"series": series, "policy": policy, "window_s": window_s,
                               "lookup": table if policy == TABLE else None})
        att = None
        if sc.ttft_slo_s is not None and res.timeline is not None:
            tl = res.timeline
            ok = np.nansum(np.nan_to_num(tl.attainment) * tl.arrived)
            att = float(ok / tl.arrived.sum()) if tl.arrived.sum() else None
        runs.append(PolicyRun(policy=policy, result=res, served_rps=res.throughput_rps, attainment=att))
    return ReplayResult(scenario=sc.name, rate_rps=rate, series=series, runs=tuple(runs), bound_s=sc.ttft_slo_s,
                        statistic=sc.ttft_statistic)
