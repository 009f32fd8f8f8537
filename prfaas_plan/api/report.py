"""Library API of `report`: every result the HTML report shows, from the api calls the commands make.

The scenario is loaded once; `optimize`, `latency`, `size` and (with ``simulate``) `simulate` run
on it, `sweep` and `degrade` load it again from the same reference and overrides (as the commands
do). ``report.html.render`` turns the result into one page with the commands' own tables.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from prfaas_plan import __version__, units
from prfaas_plan.errors import InfeasibleError, PrfaasError, SpecError
from prfaas_plan.report.report_data import ReportData, Sweep, TtftCdf
from prfaas_plan.specs.scenario import ScenarioSpec

T = TypeVar("T")

LATENCY_LOAD = 0.8  # `latency --load 0.8`: the rate `simulate` runs at by default, so the two compare
SWEEP_POINTS = 12
SWEEP_BELOW, SWEEP_ABOVE = 100.0, 4.0  # the sweep runs from nominal / 100 to 4 x nominal, log steps


class _Clock:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def __call__(self, name: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, its wall time added to ``times[name]``."""
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - t0


def _gbps_text(bytes_per_s: float) -> str:
    return f"{float(f'{units.bytes_per_s_to_gbps(bytes_per_s):.4g}'):g}Gbps"


def sweep_settings(sc: ScenarioSpec) -> list[tuple[str, str, str]]:
    """(link name, swept key, the ranged --set) for each link: nominal / 100 .. 4 x nominal, log."""
    out = []
    for lk in sc.topology.links:
        key = lk.setting("bandwidth")
        b = lk.link.bandwidth_bytes_per_s
        lo, hi = _gbps_text(b / SWEEP_BELOW), _gbps_text(b * SWEEP_ABOVE)
        out.append((lk.name, key, f"{key}={lo}..{hi}:{SWEEP_POINTS}:log"))
    return out


def ttft_cdf(sc: ScenarioSpec, rate_rps: float, load: float, *, points: int = 120) -> TtftCdf:
    """The analytic TTFT CDF of each system at ``rate_rps``: the mixture over paths (and sites)
    whose quantiles `latency` prints (``core.latency.mixture_quantile``), on a log grid of x."""
    from prfaas_plan.api.latency import mixture, site_paths
    from prfaas_plan.api.systems import topology_systems
    from prfaas_plan.core import latency as lat

    laws: dict[str, list[tuple[Any, ...]]] = {}
    unstable: list[str] = []
    for name, system in topology_systems(sc).items():
        pool, paths = site_paths(sc, system, rate_rps)
        if ((pool is None or pool.utilization < 1.0 - lat.AT_CAPACITY_RTOL)
                and rate_rps < system.capacity_rps * (1 - lat.AT_CAPACITY_RTOL)
                and all(st.stable for sp in paths.values() for st in sp.stages)):
            laws[name] = mixture(system, paths)
        else:
            unstable.append(name)
    curves = {}
    if laws:
        lo = min(lat.mixture_quantile(0.001, parts) for parts in laws.values())
        hi = max(lat.mixture_quantile(0.999, parts) for parts in laws.values())
        x = np.geomspace(max(lo, 1e-3), max(hi, lo * 1.01, 2e-3), points)
        for name, parts in laws.items():
            curves[name] = (x, np.clip(lat.mixture_cdf(x, parts), 0.0, 1.0))
    return TtftCdf(title=f"{sc.name}: {sc.model.name}", rate_rps=rate_rps, load=load, curves=curves,
                   unstable=tuple(unstable))


def report(ref: str | None, catalog: Any, *, overrides: list[str] | None = None, method: str | None = None,
           trace: Any = None, simulate: bool = False, command: str = "",
           ready: Callable[[str, Any], None] | None = None, plan_at: str | None = None) -> ReportData:
    """Run what the report shows (see the module docstring); each part's wall time in ``timings_s``.

    ``ready(name, result)`` is called as each result with a figure exists ("figure5", "sweep",
    "cdf", "sizing"), so that a renderer may draw it while the rest computes. ``plan_at``: as
    `optimize --plan-at` for the plan, and its rate percentile for the sizing (``api.plan_at``)."""
    hook = ready or (lambda name, value: None)
    from prfaas_plan.api import degrade as api_degrade
    from prfaas_plan.api import sweep as api_sweep
    from prfaas_plan.api.optimize import optimize
    from prfaas_plan.io.scenario import load_scenario

    clock = _Clock()
    overrides = list(overrides or [])
    notes: dict[str, list[str]] = {}
    from prfaas_plan.api import plan_at as plan_at_

    sc = clock("load", load_scenario, ref, catalog, overrides=overrides, method=method, trace=trace)
    at = plan_at_.parse(sc, plan_at)
    plan = clock("optimize", optimize, sc, plan_at=plan_at)
    fig5 = None
    if not sc.multi_site:
        from prfaas_plan.api.figures import figure5_data

        fig5 = clock("figure5", figure5_data, plan)
        hook("figure5", fig5)

    sweeps = []
    for link, key, setting in sweep_settings(sc):
        fixed = [o for o in overrides if o.partition("=")[0].strip() != key]  # the sweep replaces it
        try:
            res = clock("sweep", api_sweep.sweep, ref, catalog, overrides=[*fixed, setting], method=method,
                        trace=trace)
            sweeps.append(Sweep(link=link, setting=setting, result=res))
            hook("sweep", sweeps[-1])
        except (SpecError, InfeasibleError) as exc:
            notes.setdefault("sweep", []).append(left_out(f"The sweep of {key}", exc, overrides))

    latency, cdf = _latency(sc, clock, notes)
    hook("cdf", cdf)
    model, kv_rate = _kv(sc, catalog, clock, notes)
    run, requests = _simulate(sc, clock, notes) if simulate else (None, None)
    sized = None
    if sc.sizing is not None:
        from prfaas_plan.api.size import size

        try:
            busy = sc if at is None or at.rate is None else plan_at_.at_rate(sc, at.rate)
            sized = clock("size", size, busy)
            hook("sizing", sized)
        except (SpecError, InfeasibleError) as exc:
            notes.setdefault("sizing", []).append(left_out("The cheapest fleet (`prfaas-plan size`)", exc, overrides))
    stats = degraded = None
    if trace is not None:
        stats = _trace_stats(trace, clock, notes)
        hook("trace", stats)
        notes.setdefault("robustness", []).append("The link robustness (`prfaas-plan degrade`) is left out: degrade "
                                                  "takes no --trace")
    else:
        try:
            degraded = clock("degrade", api_degrade.degrade, ref, catalog, overrides=overrides, method=method)
        except (SpecError, InfeasibleError) as exc:
            notes.setdefault("robustness", []).append(left_out("The link robustness (`prfaas-plan degrade`)", exc,
                                                               overrides))
    from prfaas_plan.api import report_facts as facts

    return ReportData(scenario=sc, command=command, version=__version__, overrides=tuple(overrides),
                      trace=_trace_text(trace),
                      plan=plan.result, figure5=fig5, sweeps=tuple(sweeps),
                      latency=latency, latency_load=LATENCY_LOAD, cdf=cdf,
                      model=model, kv_rate=kv_rate, simulation=run, simulation_requests=requests, sizing=sized,
                      degrade=degraded, trace_stats=stats, scenario_file=facts.shown_path(sc.path),
                      inputs=clock("inputs", facts.inputs, sc, catalog, sized),
                      selective=clock("selective plan", facts.selective, sc, sized),
                      prefill_costs=clock("prefill costs", facts.prefill_costs, sc) if sized is not None else (),
                      notes=notes, timings_s=clock.times)


def left_out(part: str, exc: PrfaasError, overrides: Sequence[str]) -> str:
    """Why ``part`` is not on the page, in the user's terms: the reason without the command's own
    prefix ("size: ...") and without an option the report passed itself (a ``--set`` the user did
    not give, ``--levels``, ``--bandwidths``), which would read as the user's mistake."""
    text = str(exc)
    if isinstance(exc, SpecError) and exc.field and exc.field.startswith("--"):
        option, _, key = exc.field.partition(" ")
        given = option == "--set" and any(o.partition("=")[0].strip() == key.split(" ")[0] for o in overrides)
        if not given:
            text = f"{key}: {exc.message}" if key else exc.message
    for prefix in ("size: ", "degrade: ", "latency: ", "simulate: "):
        text = text.removeprefix(prefix)
    kind = "no plan meets the constraints" if isinstance(exc, InfeasibleError) else "an input it refuses"
    return f"{part} is left out: {kind}: {text}"


def _latency(sc: ScenarioSpec, clock: _Clock, notes: dict[str, list[str]]) -> tuple[Any, Any]:
    """`latency --load 0.8` and its analytic TTFT CDF; (None, None) and a note where it is infeasible."""
    try:
        from prfaas_plan.api import latency as api_latency
        from prfaas_plan.api.sim import trace_check

        r = clock("latency", api_latency.latency, sc, load=LATENCY_LOAD)
        r = clock("trace check", trace_check, sc, r)  # a trace: replayed, the analytic P90 held against it
    except InfeasibleError as exc:
        notes.setdefault("latency", []).append(left_out("The analytic TTFT (`prfaas-plan latency`)", exc, ()))
        return None, None
    return r, clock("ttft cdf", ttft_cdf, sc, r.rate_rps, r.load)


def _kv(sc: ScenarioSpec, catalog: Any, clock: _Clock, notes: dict[str, list[str]]) -> tuple[Any, Any]:
    """`model show` and `kv-rate` on the prefill instance, for the scenario's model by its catalog name."""
    from prfaas_plan import api
    inst = sc.topology.prefill.cluster
    try:
        model = clock("model show", api.model_show, sc.model.name, catalog)
        kv = clock("kv-rate", api.kv_rate, sc.model.name, hardware=inst.instance.gpu.name, gpus=inst.instance.gpus,
                   lengths=None, catalog=catalog, instances=inst.instances,
                   stack=inst.instance.gpu.efficiency.stack or None)  # the scenario's profile, not the default
    except SpecError as exc:
        notes.setdefault("scenario", []).append(left_out(f"The KV story of {sc.model.name} (`prfaas-plan model show`,"
                                                         " `kv-rate`)", exc, ()))
        return None, None
    return model, kv


def _simulate(sc: ScenarioSpec, clock: _Clock, notes: dict[str, list[str]]) -> tuple[Any, int | None]:
    """`simulate` at its defaults (load 0.8 of the smallest capacity, 20,000 requests a system, seed 0)
    and how many requests each system ran (None: the whole trace); (None, None) and a note where it cannot run."""
    from prfaas_plan.specs.run import parse

    args = parse(rate=None, load=None, requests=None, duration=None, seed=None)
    from prfaas_plan.api import sim as api_sim

    try:
        run = clock("simulate", api_sim.simulate, sc, **args.keywords())
    except (SpecError, InfeasibleError) as exc:
        notes.setdefault("latency", []).append(left_out("The simulated TTFT (`prfaas-plan simulate`)", exc, ()))
        return None, None
    return run, run.requests if sc.workload.trace is None else None


def _trace_stats(trace: Any, clock: _Clock, notes: dict[str, list[str]]) -> Any:
    """`trace stats` of the --trace file, with the hit-rate curve its figure draws; None (and a note)
    where it cannot be read on its own (a trace the scenario names, not --trace)."""
    from prfaas_plan.api.trace_stats import trace_stats

    file = trace if isinstance(trace, str) else trace.file
    if file is None:
        notes.setdefault("trace", []).append("`prfaas-plan trace stats` is left out: the trace is the scenario's own")
        return None
    fmt = None if isinstance(trace, str) else trace.format
    model_filter = None if isinstance(trace, str) else trace.model_filter
    try:
        return clock("trace stats", trace_stats, file, trace_format=fmt, model_filter=model_filter, curve=True)
    except SpecError as exc:
        notes.setdefault("trace", []).append(left_out("`prfaas-plan trace stats`", exc, ()))
        return None


def _trace_text(trace: Any) -> str | None:
    """The trace options as the page names them: the file, and a forced format or model filter."""
    if trace is None or isinstance(trace, str):
        return trace
    extra = [f"{k} {v}" for k, v in (("format", trace.format), ("model filter", trace.model_filter)) if v]
    return f"{trace.file or 'the scenario trace'}" + (f" ({', '.join(extra)})" if extra else "")

