"""Library API of `simulate`: each system of a scenario simulated at the same arrival rate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.latency import resolve_rate, site_latency
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, systems
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.result import SimulateRun, SystemRun
from prfaas_plan.sim.run import SimResult, simulate
from prfaas_plan.specs.latency import TRACE_CHECK_RTOL, LatencyResult, TraceCheck
from prfaas_plan.specs.run import RunArgs, check, check_size
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig, SystemConfig

DEFAULT_LOAD = 0.8
DEFAULT_REQUESTS = 20_000  # the run's length with neither --requests nor --duration (specs.run bounds it)
WARMUP_FRACTION = 0.1


@dataclass(frozen=True)
class SimRun:
    """``result``: the typed run (``sim.result.SimulateRun``; per system its ``SimResult`` with
    histograms, the link utilisation series and, if asked, per-request records); its JSON is written
    at the edge (``report.sim_json.simulate_json``), by the view that prints it."""

    result: SimulateRun
    scenario: ScenarioSpec

    @property
    def results(self) -> dict[str, SimResult]:
        return {name: s.result for name, s in self.result.systems.items()}


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


def run_systems(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
                n_requests: int | None = None, duration_s: float | None = None, seed: int | None = None,
                records: bool = False, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE),
                control: ControlConfig | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> SimRun:
    """Simulate every system the scenario compares at one arrival rate; see :func:`simulate_systems`.

    ``progress(label, arrived, expected)`` is called as each run advances.
    """
    args = checked(RunArgs(rate_rps=rate_rps, load=load, n_requests=n_requests, duration_s=duration_s, seed=seed),
                   sc)
    control = control if control is not None else sc.control
    configs: dict[str, SystemConfig] = systems(sc, which=which)
    rate, load_f = resolve_rate(configs, rate_rps, load, default_load=DEFAULT_LOAD)
    check_size(rate, args)
    if sc.workload.trace is None and n_requests is None and duration_s is None:
        n_requests = DEFAULT_REQUESTS
    streams = np.random.SeedSequence(int(seed or 0)).spawn(len(configs))
    runs: dict[str, SystemRun] = {}
    for (name, c), stream in zip(configs.items(), streams, strict=True):
        expected = expected_requests(sc, rate, n_requests, duration_s)
        tick = None if progress is None else (lambda n, name=name, expected=expected:
                                              progress(f"simulating {name}", n, expected))
        res = simulate(sc, c, rate_rps=rate, n_requests=n_requests, duration_s=duration_s,
                       rng=np.random.default_rng(stream), records=records, warmup_fraction=WARMUP_FRACTION,
                       control=control, progress=tick)
        runs[name] = SystemRun(name=name, result=res, capacity_rps=c.capacity_rps, capacity_binding=c.capacity_binding,
                               threshold_tokens=c.threshold_tokens, n_prfaas=c.n_prfaas, n_p=c.n_p, n_d=c.n_d,
                               bs_max=c.bs_max, load=rate / c.capacity_rps, analytic=site_latency(sc, c, rate))
    traced = sc.workload.trace is not None
    result = SimulateRun(scenario=sc.name, model=sc.model.name, head=PRFAAS if PRFAAS in runs else next(iter(runs)),
                         rate_rps=rate, load=load_f, systems=runs, seed=None if traced else int(seed or 0),
                         requests=n_requests, duration_s=duration_s, warmup_fraction=WARMUP_FRACTION,
                         workload="trace" if traced else "parametric",
                         arrival="trace" if traced else sc.workload.arrival,
                         cache_mode=sc.cache_mode, control=control, hit_rate_source=sc.workload.hit_rate_source)
    return SimRun(result=result, scenario=sc)


def simulate_systems(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
                     n_requests: int | None = None, duration_s: float | None = None, seed: int | None = None,
                     records: bool = False, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE),
                     control: ControlConfig | None = None) -> dict[str, Any]:
    """Simulate each system at the SAME arrival rate; a JSON-ready dict.

    The rate: ``rate_rps`` directly, or ``load`` x the smallest capacity (exact-method
    Lambda_max) among the systems compared; default load 0.8. One independent random stream per
    system (``SeedSequence(seed).spawn``, seed default 0). A trace replays its first
    ``n_requests`` (at most its length) and draws nothing at random, so ``seed`` is refused with
    it. Top-level keys describe PrfaaS-PD (TTFT mean and percentiles, TPOT, per path,
    throughput, link utilisation, prefix hit rate); ``systems`` holds every system with its
    capacity and the analytic TTFT at the same rate; ``sim`` the run's size and speed.
    :func:`run_systems` returns the typed run (histograms and series for plots).
    """
    from prfaas_plan.report.sim_json import simulate_json

    return simulate_json(run_systems(sc, rate_rps=rate_rps, load=load, n_requests=n_requests, duration_s=duration_s,
                                     seed=seed, records=records, which=which, control=control).result)


def trace_check(sc: ScenarioSpec, r: LatencyResult) -> LatencyResult:
    """`latency` on a trace: its arrivals are what they are, bursts included, so the whole trace is
    replayed through the simulator at ``r``'s rate, and each system's analytic P90 is held against
    the replay's (``TraceCheck``). ``r`` unchanged without a trace (or one with no time span), and
    with several PD sites (the replay is the simulator of one)."""
    profile = sc.workload.rate_profile
    if sc.workload.trace is None or profile is None or len(r.sites) > 1:
        return r
    run = run_systems(sc, rate_rps=r.rate_rps, which=tuple(r.systems))
    simulated, holds = {}, {}
    for name, res in run.results.items():
        mean, p90 = res.ttft.mean, res.ttft.quantile(0.9)
        if mean is None or p90 is None:
            continue
        simulated[name] = (mean, p90)
        a = r.systems[name].sites[r.sites[0]].ttft_p90_s
        holds[name] = a is not None and abs(a / p90 - 1.0) <= TRACE_CHECK_RTOL
    return replace(r, trace_check=TraceCheck(requests=len(sc.workload.trace), peak_to_mean=profile.peak_to_mean,
                                             arrival_scv=profile.arrival_scv, simulated=simulated, holds=holds))
