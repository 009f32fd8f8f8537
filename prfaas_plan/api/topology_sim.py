"""`simulate` of a topology: each system (``api.topology_systems``) simulated at the same total
rate (``sim.topology``), with the analytic per-site TTFT beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from prfaas_plan.api.latency import resolve_rate, system_latency
from prfaas_plan.api.sim import DEFAULT_LOAD, DEFAULT_REQUESTS, WARMUP_FRACTION, checked
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, topology_systems
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.result import TopologyRun, TopologySimulateRun
from prfaas_plan.sim.topology import simulate_topology
from prfaas_plan.specs.run import RunArgs, check_size
from prfaas_plan.specs.scenario import ScenarioSpec


def simulate(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
             n_requests: int | None = None, duration_s: float | None = None, seed: int | None = None,
             which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE),
             progress: Callable[[str, int, int], None] | None = None) -> TopologySimulateRun:
    """Every system of the topology at the same total rate (``rate_rps``, or ``load`` x the
    smallest exact-method capacity; default load 0.8); per system and site the simulated and
    analytic TTFT, link utilisation and throughput. One random stream per system."""
    if sc.control is not None:
        raise SpecError("the control loops run in the simulation of one PD site; with several sites drop the "
                        "control section", source=sc.path, field="control")
    traced = [s.workload.trace is not None for s in sc.topology.sites if s.workload is not None]
    args = RunArgs(rate_rps=rate_rps, load=load, n_requests=n_requests, duration_s=duration_s, seed=seed)
    checked(args, *(sc if s.workload is None else replace(sc, workload=s.workload) for s in sc.topology.sites),
            refuse_seed=not any(traced))
    if seed is not None and all(traced):
        raise SpecError("every site replays a trace as recorded, nothing is drawn at random: drop --seed",
                        field="--seed")
    systems = topology_systems(sc, which=which)
    rate, load_f = resolve_rate(systems, rate_rps, load, default_load=DEFAULT_LOAD)  # type: ignore[arg-type]
    check_size(rate, args)
    if n_requests is None and duration_s is None and not all(traced):
        n_requests = DEFAULT_REQUESTS
    streams = np.random.SeedSequence(int(seed or 0)).spawn(len(systems))
    runs: dict[str, TopologyRun] = {}
    for (name, system), stream in zip(systems.items(), streams, strict=True):
        expected = n_requests or max(1, round(rate * (duration_s or 0.0)))
        tick = None if progress is None else (lambda n, name=name, e=expected: progress(f"simulating {name}", n, e))
        res = simulate_topology(sc, system, rate_rps=rate, n_requests=n_requests, duration_s=duration_s,
                                rng=np.random.default_rng(stream), warmup_fraction=WARMUP_FRACTION, progress=tick)
        runs[name] = TopologyRun(name=name, result=res, system=system, analytic=system_latency(sc, system, rate),
                                 load=rate / system.capacity_rps)
    return TopologySimulateRun(scenario=sc.name, model=sc.model.name, rate_rps=rate, load=load_f, systems=runs,
                               seed=None if all(traced) else int(seed or 0), requests=n_requests,
                               duration_s=duration_s, warmup_fraction=WARMUP_FRACTION)
