"""`simulate` of several models sharing one prefill service (``sim.fleet``): the plan and the
separate services, each at its configuration, at the same total rate.

Each configuration carries Lambda_max of the exact method at it (``core.fleet.evaluate`` on the
exact routing at each entry's threshold), which is what a simulation saturates at.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from prfaas_plan.api.context import remembered
from prfaas_plan.api.fleet import Shape, held, laws, placement, plan, separate_caps, shape
from prfaas_plan.api.latency import resolve_rate
from prfaas_plan.api.laws import timing
from prfaas_plan.api.sim import DEFAULT_LOAD, DEFAULT_REQUESTS, WARMUP_FRACTION
from prfaas_plan.api.systems import site_config
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import fleet as core
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.fleet import simulate_fleet
from prfaas_plan.specs.fleet import FleetPoint, FleetRun, FleetSimulateRun, FleetSpec, FleetSystem
from prfaas_plan.specs.run import RunArgs, check, check_size
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import SiteSystem

SHARED, SEPARATE = "prfaas", "separate"


def _system(fs: FleetSpec, sh: Shape, name: str, p: FleetPoint, caps: list[core.Caps] | None
            ) -> tuple[FleetSystem, list[ScenarioSpec]]:
    """The configuration ``p`` as a system to simulate, its capacity the exact method's."""
    exact, choices = held(sh, laws(fs), p, Method.EXACT)
    cap = core.evaluate(sh.fleet, exact, choices, caps)
    entries, scs, pools, links = [], [], {}, {}
    for k, ((mi, si), e) in enumerate(zip(sh.owners, p.entries, strict=True)):
        sc = fs.models[mi].scenario
        label = e.label
        link = e.link if caps is None else f"{e.link} ({label})"
        bw = caps[k].link_bytes_per_s if caps else sh.fleet.link_bytes_per_s[sh.fleet.sites.index(e.site)]
        c = site_config(sc, si, timing(site_scenario(sc, si)), name=name, threshold=e.threshold_tokens,
                        n_prfaas=e.n_prfaas, n_p=e.n_p, n_d=e.n_d, capacity=cap.lambda_max_rps * e.demand_share,
                        binding=cap.binding)
        c = replace(c, link_bytes_per_s=bw, t_local=c.t_local if e.n_p > 0 else None)
        entries.append(SiteSystem(site=label, link=link, demand_share=e.demand_share, config=c,
                                  workload=site_scenario(sc, si).workload))
        scs.append(site_scenario(sc, si))
        pools[label] = e.n_prfaas
        links[link] = bw
    return FleetSystem(name=name, entries=tuple(entries), pools=tuple(pools.items()), links=tuple(links.items()),
                       capacity_rps=cap.lambda_max_rps,
                       capacity_binding=cap.binding), scs


def fleet_systems(fs: FleetSpec) -> dict[str, tuple[FleetSystem, list[ScenarioSpec]]]:
    """The plan's configuration and the separate services' (under the headline method)."""
    def build() -> dict[str, tuple[FleetSystem, list[ScenarioSpec]]]:
        r = plan(fs)
        sh = shape(fs)
        head = r.methods[r.method]
        out = {SHARED: _system(fs, sh, SHARED, head.best, None)}
        if head.separate is not None:
            out[SEPARATE] = _system(fs, sh, SEPARATE, head.separate, separate_caps(sh, placement(sh, laws(fs))))
        return out

    return remembered("fleet systems", (fs,), (), build)


def simulate(fs: FleetSpec, *, rate_rps: float | None = None, load: float | None = None,
             n_requests: int | None = None, duration_s: float | None = None, seed: int | None = None
             ) -> FleetSimulateRun:
    """Both configurations at the same total rate (``rate_rps``, or ``load`` x the smaller
    capacity, default 0.8), one random stream each."""
    if any(m.scenario.workload.trace is not None for m in fs.models):
        raise SpecError("a scenario of several models is simulated on parametric workloads; a model's trace "
                        "is not replayed here", field="models")
    args = check(RunArgs(rate_rps=rate_rps, load=load, n_requests=n_requests, duration_s=duration_s, seed=seed))
    systems = fleet_systems(fs)
    rate, load_f = resolve_rate({n: s for n, (s, _) in systems.items()}, rate_rps, load,  # type: ignore[misc]
                                default_load=DEFAULT_LOAD)
    check_size(rate, args)
    if n_requests is None and duration_s is None:
        n_requests = DEFAULT_REQUESTS
    streams = np.random.SeedSequence(int(seed or 0)).spawn(len(systems))
    runs = {}
    for (name, (system, scs)), stream in zip(systems.items(), streams, strict=True):
        res = simulate_fleet(scs, system, rate_rps=rate, n_requests=n_requests, duration_s=duration_s,
                             rng=np.random.default_rng(stream), warmup_fraction=WARMUP_FRACTION)
        runs[name] = FleetRun(name=name, system=system, result=res, load=rate / system.capacity_rps)
    return FleetSimulateRun(scenario=fs.name, rate_rps=rate, load=load_f, systems=runs,
                            seed=int(seed or 0), requests=n_requests, duration_s=duration_s,
                            warmup_fraction=WARMUP_FRACTION)
