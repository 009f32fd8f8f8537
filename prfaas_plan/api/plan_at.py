"""`--plan-at`: plan at a percentile of a link's bandwidth law, of a trace's windowed rate, or both.

A bandwidth law's percentile replaces each link's bandwidth (``api.robust``). A trace's windowed
rate (``core.arrivals.RateProfile``: the windows the piecewise-stationary TTFT uses) gives the
busy hour: at ``rate=p90`` the stream is held at the rate of the window that 90% of the trace's
time runs at or below, as if that window lasted. The TTFT SLO is then searched at that one rate
(the variability of gaps inside a window kept), and `size` buys for the sizing demand times the
window's factor over the mean: a demand given by ``--demand`` or ``sizing.demand`` is read as the
trace's mean rate.

The two percentiles point opposite ways (a low bandwidth and a high rate are the hard cases), so
a bare ``pNN`` names whichever law the scenario has, and a scenario with both asks for
``bandwidth=p10,rate=p90``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from prfaas_plan.api import robust
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.robust import RateLevel
from prfaas_plan.specs.scenario import ScenarioSpec

OPTION = "--plan-at"
KINDS = ("bandwidth", "rate")


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanAt:
    """What ``--plan-at`` asks: a bandwidth level (label, q) and a rate level, either None."""

    bandwidth: tuple[str, float] | None = None
    rate: RateLevel | None = None


def parse(sc: ScenarioSpec, text: str | None) -> PlanAt | None:
    """``--plan-at`` read and checked against the scenario: ``p10``, ``rate=p90``,
    ``bandwidth=p10,rate=p90``; None without the option."""
    if text is None:
        return None
    asked: dict[str, str] = {}
    for item in (x.strip() for x in text.split(",")):
        kind, sep, value = item.partition("=")
        if not sep:
            kind, value = _bare(sc, item), item
        kind = kind.strip()
        if kind not in KINDS:
            raise SpecError(f"{kind!r} in {text!r} is not bandwidth or rate: give pNN, bandwidth=pNN, rate=pNN "
                            "or both, comma-separated", field=OPTION)
        if kind in asked:
            raise SpecError(f"{text!r} gives {kind} twice", field=OPTION)
        asked[kind] = value.strip()
    bandwidth = robust.plan_level(sc, asked["bandwidth"]) if "bandwidth" in asked else None
    rate = _rate_level(sc, asked["rate"]) if "rate" in asked else None
    return PlanAt(bandwidth=bandwidth, rate=rate)


def _bare(sc: ScenarioSpec, item: str) -> str:
    """The law a bare ``pNN`` names: the one the scenario has."""
    law, trace = robust.has_law(sc), sc.workload.rate_profile is not None
    if law and trace:
        raise SpecError(f"{item!r} could be a percentile of the link's bandwidth law or of the trace's windowed "
                        f"rate: give bandwidth={item}, rate={item} or both, e.g. bandwidth=p10,rate=p90", field=OPTION)
    if trace:
        return "rate"
    if not law:
        raise SpecError(f"{item!r} is a percentile of a law, and the scenario has none: a link's bandwidth law "
                        "(link.bandwidth as {kind: empirical|quantiles|series, ...}) or a trace's windowed rate "
                        "(--trace FILE)", field=OPTION)
    return "bandwidth"


def _rate_level(sc: ScenarioSpec, value: str) -> RateLevel:
    label, q = robust.level(value)
    trace = sc.workload.trace
    profile, mean = sc.workload.rate_profile, None if trace is None else trace.mean_rate_rps
    if profile is None or mean is None:
        raise SpecError(f"rate={value} is a percentile of a trace's windowed rate, and the scenario has no trace "
                        "with two or more arrivals: give --trace FILE (or workload.input as a trace)", field=OPTION)
    factor = profile.rate_at(q)
    if not (factor > 0 and math.isfinite(factor)):
        raise SpecError(f"at rate={label} the trace's windowed rate is 0 req/s (no arrivals in {q:.0%} of its "
                        "windows): plan at a higher percentile", field=OPTION)
    return RateLevel(label=label, q=q, factor=factor, mean_rps=mean, windows=profile.windows, bin_s=profile.bin_s)


def at_rate(sc: ScenarioSpec, lv: RateLevel) -> ScenarioSpec:
    """The scenario with every workload's trace held at ``lv``'s window (one stationary rate) and
    the sizing demand scaled by its factor."""
    def held(w):
        return w if w is None or w.rate_profile is None else replace(w, rate_profile=w.rate_profile.held(),
                                                                    rate_rps=lv.rate_rps)

    topo = replace(sc.topology, sites=tuple(replace(s, workload=held(s.workload)) for s in sc.topology.sites))
    sizing = sc.sizing
    if sizing is not None:
        base = ("its mean rate" if sizing.demand_source else
                "the demand given (sizing.demand or --demand), read as its mean rate")
        sizing = replace(sizing, demand_rps=sizing.demand_rps * lv.factor,
                         demand_source=f"the trace's {lv.label.upper()} windowed rate, {lv.factor:.3g}x {base} "
                                       f"(--plan-at rate={lv.label})")
    return replace(sc, workload=held(sc.workload), topology=topo, sizing=sizing)


def apply(sc: ScenarioSpec, at: PlanAt | None) -> ScenarioSpec:
    """The scenario a plan at ``at`` is searched on."""
    if at is None:
        return sc
    if at.rate is not None:
        sc = at_rate(sc, at.rate)
    if at.bandwidth is not None:
        sc = robust.at_level(sc, at.bandwidth[1])
    return sc


def sized_at(sc: ScenarioSpec, text: str | None) -> ScenarioSpec:
    """The scenario `size` buys for at ``--plan-at``: a trace's windowed rate only (the sizing
    section's link tiers are what it buys, not a law's percentile)."""
    at = parse(sc, text)
    if at is not None and at.bandwidth is not None:
        raise SpecError(f"size buys the link from sizing.links, so a percentile of link.bandwidth's law does not "
                        f"apply to it; give rate=pNN (a trace's busy hour), or run optimize --plan-at "
                        f"bandwidth={at.bandwidth[0]} on the plan size -o writes", field=OPTION)
    return apply(sc, at)
