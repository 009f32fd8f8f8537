"""Library API of `simulate`: each system of a scenario simulated at the same total rate, per PD site."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.latency import resolve_rate, system_latency
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, topology_systems
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.result import SimulateRun, SystemRun
from prfaas_plan.sim.topology import simulate_topology
from prfaas_plan.specs.latency import TRACE_CHECK_RTOL, LatencyResult, TraceCheck
from prfaas_plan.specs.run import RunArgs, check, check_size
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig

DEFAULT_LOAD = 0.8
DEFAULT_REQUESTS = 20_000  # the run's length with neither --requests nor --duration (specs.run bounds it)
WARMUP_FRACTION = 0.1


def no_span_error(sc: ScenarioSpec, rate_rps: float | None, load: float | None) -> SpecError:
    """A trace whose requests all arrive at one instant has no rate to scale its timestamps to
    (t x native / rate, native = (n - 1) / span): refused, naming the file, the option given and
    what to do instead. Not replayed as a burst: that would ignore the rate the user asked for."""
    trace = sc.workload.trace
    file = sc.workload.description.get("file")
    n = len(trace)
    when = f"{units.s_to_ms(float(trace.arrival_s[0])):g} ms"
    who = f"one request (at {when})" if n == 1 else f"all {n:,} requests arrive at {when}"
    asked = (f"--rate {rate_rps:g} req/s" if rate_rps is not None else
             f"--load {load:g}" if load is not None else f"the default --load {DEFAULT_LOAD:g}")
    return SpecError(f"{who}: no time span to replay at {asked}; give the requests their arrival times, or run "
                     "`prfaas-plan latency` for TTFT at a rate (Poisson arrivals, the trace's lengths)",
                     source=str(file) if file else "--trace", field="timestamp")


def checked(args: RunArgs, *scs: ScenarioSpec, refuse_seed: bool = True) -> RunArgs:
    """``args`` for a run on ``scs`` (a topology: each site's scenario): first what a trace refuses
    outright, then the values themselves (``specs.run.check``), then a trace's length.

    ``refuse_seed`` False: the caller says itself why a seed is refused (a topology)."""
    for sc in scs:
        trace = sc.workload.trace
        if trace is not None and not trace.span_s > 0:
            raise no_span_error(sc, args.rate_rps, args.load)
        if refuse_seed and args.seed is not None and trace is not None:
            raise SpecError("a trace is replayed as recorded, nothing in it is drawn at random (arrivals, lengths "
                            "and prefix hits come from the file): drop --seed", field="--seed")
    check(args)
    for sc in scs:
        trace = sc.workload.trace
        if args.n_requests is not None and trace is not None and args.n_requests > len(trace):
            raise SpecError(f"the trace holds {len(trace):,} requests, got {args.n_requests:,} (--requests N "
                            "replays its first N)", field="--requests")
    return args


def expected_requests(sc: ScenarioSpec, rate_rps: float, n_requests: int | None, duration_s: float | None) -> int:
    """About how many requests one system's run will see (for progress bars)."""
    trace = sc.workload.trace
    if n_requests is not None:
        return n_requests
    if duration_s is not None:
        return max(1, round(rate_rps * duration_s))
    return len(trace) if trace is not None else DEFAULT_REQUESTS


def simulate(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
             n_requests: int | None = None, duration_s: float | None = None, seed: int | None = None,
             records: bool = False, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE),
             control: ControlConfig | None = None,
             progress: Callable[[str, int, int], None] | None = None) -> SimulateRun:
    """Simulate every system the scenario compares at the SAME total rate: ``rate_rps``, or ``load`` x
    the smallest capacity (exact-method Lambda_max) among the systems compared, default load 0.8.
    One independent random stream per system (``SeedSequence(seed).spawn``, seed default 0); a
    trace replays its first ``n_requests`` (at most its length) and draws nothing at random, so
    ``seed`` is refused with it. Its JSON is ``report.sim_json.simulate_json``'s.

    Every topology runs in ``sim.topology`` (one PD site on its fast path, ``sim.fast``; the control
    loops and per-request records are a site's own). ``progress(label, arrived, expected)`` is called
    as each run advances.
    """
    args = RunArgs(rate_rps=rate_rps, load=load, n_requests=n_requests, duration_s=duration_s, seed=seed)
    several = len(sc.topology.sites) > 1
    traced = [s.workload.trace is not None for s in sc.topology.sites if s.workload is not None]
    if several:
        _shared_checked(sc, args, traced)
    else:
        checked(args, sc)
    control = control if control is not None else sc.control
    systems = topology_systems(sc, which=which)
    rate, load_f = resolve_rate(systems, rate_rps, load, default_load=DEFAULT_LOAD)  # type: ignore[arg-type]
    check_size(rate, args)
    if n_requests is None and duration_s is None and not all(traced):
        n_requests = DEFAULT_REQUESTS
    streams = np.random.SeedSequence(int(seed or 0)).spawn(len(systems))
    runs: dict[str, SystemRun] = {}
    for (name, system), stream in zip(systems.items(), streams, strict=True):
        expected = expected_requests(sc, rate, n_requests, duration_s)
        tick = None if progress is None else (lambda n, name=name, expected=expected:
                                              progress(f"simulating {name}", n, expected))
        out = simulate_topology(sc, system, rate_rps=rate, n_requests=n_requests, duration_s=duration_s,
                                rng=np.random.default_rng(stream), warmup_fraction=WARMUP_FRACTION, progress=tick,
                                records=records, control=control)
        runs[name] = SystemRun(name=name, system=system, sites=dict(out.sites), shared=out if several else None,
                               analytic=system_latency(sc, system, rate), load=rate / system.capacity_rps)
    whole = all(traced)
    return SimulateRun(scenario=sc.name, model=sc.model.name, head=PRFAAS if PRFAAS in runs else next(iter(runs)),
                       rate_rps=rate, load=load_f, systems=runs, seed=None if whole else int(seed or 0),
                       requests=n_requests, duration_s=duration_s, warmup_fraction=WARMUP_FRACTION,
                       workload="trace" if whole else "parametric", arrival="trace" if whole else sc.workload.arrival,
                       cache_mode=sc.cache_mode, control=control, hit_rate_source=sc.workload.hit_rate_source)


def _shared_checked(sc: ScenarioSpec, args: RunArgs, traced: list[bool]) -> None:
    """What a run of several PD sites refuses: the control loops (they act on one site's pools),
    a seed where every site replays a trace; then each site's scenario as ``checked``."""
    if sc.control is not None:
        raise SpecError("the control loops run in the simulation of one PD site; with several sites drop the "
                        "control section", source=sc.path, field="control")
    checked(args, *(sc if s.workload is None else replace(sc, workload=s.workload) for s in sc.topology.sites),
            refuse_seed=not any(traced))
    if args.seed is not None and all(traced):
        raise SpecError("every site replays a trace as recorded, nothing is drawn at random: drop --seed",
                        field="--seed")


def trace_check(sc: ScenarioSpec, r: LatencyResult) -> LatencyResult:
    """`latency` on a trace: its arrivals are what they are, bursts included, so the whole trace is
    replayed through the simulator at ``r``'s rate, and each system's analytic P90 is held against
    the replay's (``TraceCheck``). ``r`` unchanged without a trace (or one with no time span), and
    with several PD sites (the check is written for one site's trace and its system's P90)."""
    profile = sc.workload.rate_profile
    if sc.workload.trace is None or profile is None or len(r.sites) > 1:
        return r
    run = simulate(sc, rate_rps=r.rate_rps, which=tuple(r.systems))
    simulated, holds = {}, {}
    for name, res in run.at_site(run.sites[0]).items():
        mean, p90 = res.ttft.mean, res.ttft.quantile(0.9)
        if mean is None or p90 is None:
            continue
        simulated[name] = (mean, p90)
        a = r.systems[name].sites[r.sites[0]].ttft_p90_s
        holds[name] = a is not None and abs(a / p90 - 1.0) <= TRACE_CHECK_RTOL
    return replace(r, trace_check=TraceCheck(requests=len(sc.workload.trace), peak_to_mean=profile.peak_to_mean,
                                             arrival_scv=profile.arrival_scv, simulated=simulated, holds=holds))
