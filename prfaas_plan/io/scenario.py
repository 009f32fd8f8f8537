"""A scenario: its YAML (schema in ``io/scenario_schema.py``), ``--set``/``--trace`` overrides
(``io/overrides.py``), conversion to specs."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.cache import cached_load
from prfaas_plan.io.load import (
    Catalog,
    is_path_like,
    load_gpu,
    load_model,
    load_stack,
    read_yaml,
    validation_message,
)
from prfaas_plan.io.overrides import Override, Placed, apply, parse_set
from prfaas_plan.io.workload import link_law, referenced, workload_spec
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import (
    ClusterSpec,
    DecodeSpec,
    ScenarioSpec,
    SearchSpec,
    WorkloadSpec,
)
from prfaas_plan.specs.topology import TopologySpec, homogeneous_cluster

if TYPE_CHECKING:  # pydantic and the schema are imported only when a scenario is validated (io/cache.py)

    from prfaas_plan.io.scenario_schema import Cluster, Control, ScenarioFile, Workload

DEFAULT_SCENARIO = "paper-case-study"
# the commands that take a scenario of several models (io.fleet)
FLEET_COMMANDS = "optimize, simulate, latency, size, degrade, study and report"


def is_fleet_file(ref: str | None, catalog: Catalog) -> bool:
    """The scenario file lists several models (``models:``), before any option applies."""
    raw = read_yaml(scenario_path(ref, catalog))
    return isinstance(raw, dict) and "models" in raw


def scenario_path(ref: str | None, catalog: Catalog) -> Path:
    if ref is None:
        return catalog.find("scenarios", DEFAULT_SCENARIO)
    if is_path_like(ref) or Path(ref).is_file():
        return Path(ref)
    try:
        return catalog.find("scenarios", ref)
    except SpecError as exc:
        raise exc.at(field="SCENARIO") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceChoice:
    """What ``--trace``, ``--trace-format`` and ``--model-filter`` give (each may be absent): the
    trace file, and how to read it (``workload.input.format`` / ``.model_filter``), which also
    apply to a trace the scenario file names. Wherever a ``trace`` argument is taken, a plain
    string is the file alone."""

    file: str | None = None
    format: str | None = None
    model_filter: str | None = None


TraceArg = str | TraceChoice | None


def scenario_mapping(ref: str | None, catalog: Catalog, *, overrides: list[str] | None = None,
                     trace: TraceArg = None, method: str | None = None,
                     demand: str | None = None, points: Sequence[Override] = ()) -> tuple[Path, Placed]:
    """The scenario file's mapping with the options applied, as ``load_scenario`` validates it."""
    path = scenario_path(ref, catalog)
    source = str(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise SpecError(f"expected a mapping of keys, got {kind_of(raw)}", source=source)
    choice = trace if isinstance(trace, TraceChoice) else TraceChoice(file=trace)
    extra: list[Override] = []
    if choice.file is not None:
        # the trace brings its own output lengths; --set comes after, e.g. workload.input.cache_capacity_gib
        extra += [Override("workload.input", {"kind": "trace", "file": str(Path(choice.file).expanduser().resolve())},
                           "--trace"), Override("workload.output_tokens", None, "--trace", implied=True)]
    if choice.format is not None:
        extra.append(Override("workload.input.format", choice.format, "--trace-format"))
    if choice.model_filter is not None:
        extra.append(Override("workload.input.model_filter", choice.model_filter, "--model-filter"))
    extra += [parse_set(item) for item in overrides or []]
    if method is not None:
        extra.append(Override("search.method", method, "--method"))
    if demand is not None:
        extra.append(Override("sizing.demand", demand, "--demand"))
    placed = apply(raw, [*extra, *points], source)
    return path, placed


def load_scenario(ref: str | None, catalog: Catalog, *, overrides: list[str] | None = None,
                  trace: TraceArg = None, method: str | None = None, demand: str | None = None,
                  points: Sequence[Override] = ()) -> ScenarioSpec:
    """A scenario by catalog name or file, with ``--set`` overrides, an optional trace and method.

    ``trace`` is a file or a ``TraceChoice`` (file, format, model filter). The overrides are
    values, not YAML text (see ``io/overrides.py``); a relative file they name
    (``--trace``, ``--set workload.input.file=``) is relative to the working folder, one the
    scenario file names is relative to the scenario's folder. A load run before, with the same
    mapping and options and every file it read unchanged, comes from the cache (``io.cache``),
    without pydantic; it is the same spec, field for field.
    """
    path, placed = scenario_mapping(ref, catalog, overrides=overrides, trace=trace, method=method, demand=demand,
                                    points=points)
    if "models" in placed.data:
        raise SpecError(f"this scenario lists several models; {FLEET_COMMANDS} take such a scenario, this command "
                        "one model (give a scenario with model:)", **placed.place("models"))
    return load_placed(path, placed, catalog)


def load_placed(path: Path, placed: Placed, catalog: Catalog) -> ScenarioSpec:
    """``load_scenario`` of a mapping ``scenario_mapping`` gave."""
    # what the load depends on besides the files it reads (io.cache.cached_load records those)
    where = repr((str(path), os.getcwd(), os.environ.get("HOME"), tuple(str(r) for r in catalog.roots)))
    key = repr((placed.data, placed.origins, placed.source))
    return cached_load("scenario", where, key, lambda: _validated(path, placed, catalog))


def _validated(path: Path, placed: Placed, catalog: Catalog) -> ScenarioSpec:
    from pydantic import ValidationError

    from prfaas_plan.io.scenario_schema import ScenarioFile

    try:
        sc = ScenarioFile.model_validate(placed.data)
    except ValidationError as exc:
        field_path, msg = validation_message(exc)
        raise SpecError(msg + placed.context(field_path), **placed.place(field_path or None)) from None
    return to_spec(sc, path, catalog, placed)


def named(load: Any, ref: str, catalog: Catalog, placed: Placed, field_path: str) -> Any:
    """A catalog entry by the name at ``field_path``; an unknown name is placed at that field."""
    try:
        return load(ref, catalog)
    except SpecError as exc:
        if exc.source is None and exc.field is None:  # a name, not a file of its own
            raise placed.error(exc, field_path) from None
        raise referenced(exc, placed, field_path) from None


def _gpu_loader(stack_ref: str | None, catalog: Catalog, placed: Placed, field_path: str) -> Any:
    """``load_gpu`` with the serving-stack profile named at ``field_path`` (the default's when None)."""
    stack = named(load_stack, stack_ref, catalog, placed, field_path) if stack_ref else load_stack(None, catalog)
    return lambda ref, cat: load_gpu(ref, cat, stack)


def _profile_gpus(model: Any, gpu: Any, catalog: Catalog) -> tuple[Any, ...]:
    """The catalog's spec of each GPU a measured profile of ``model`` names; one the catalog lacks is
    left out (its profile then transfers to no other instance, as before)."""
    found: dict[str, Any] = {}
    for p in model.profiles:
        if p.hardware.lower() not in found:
            try:
                found[p.hardware.lower()] = gpu(p.hardware, catalog)
            except SpecError:
                continue
    return tuple(found.values())


def _cluster(c: Cluster, catalog: Catalog, placed: Placed, field_path: str, stack: Any) -> ClusterSpec:
    if c.stack is not None:
        stack = _gpu_loader(c.stack, catalog, placed, f"{field_path}.stack")
    gpu = named(stack, c.hardware, catalog, placed, f"{field_path}.hardware")
    return ClusterSpec(instance=InstanceSpec(gpu=gpu, gpus=c.gpus_per_instance),
                       instances=c.instances, price_per_gpu_hour=c.price_per_gpu_hour)


def _prices(sc: ScenarioFile) -> dict[str, float]:
    """Prices per GPU-hour the scenario's clusters or sites give, by lower-case hardware name."""
    pools = [*(sc.sites or {}).values(), *((sc.clusters.prfaas, sc.clusters.local) if sc.clusters else ()),
             *((sc.baselines.homogeneous,) if sc.baselines.homogeneous else ())]
    return {c.hardware.lower(): c.price_per_gpu_hour for c in pools if c.price_per_gpu_hour is not None}


def _control(c: Control):
    if c.max_link_utilization is None and c.period is None:
        return None
    from prfaas_plan.specs.system import ControlConfig

    return ControlConfig(max_link_utilization=c.max_link_utilization, window_s=c.window, margin=c.margin,
                         period_s=c.period, queue_per_instance=c.queue_per_instance)


def to_spec(sc: ScenarioFile, path: Path, catalog: Catalog, placed: Placed | None = None) -> ScenarioSpec:
    from dataclasses import replace

    from prfaas_plan.io.sizing import sizing_spec, trace_demand
    from prfaas_plan.io.topology import check_form

    source = str(path)
    placed = placed or Placed({}, source)
    model = named(load_model, sc.model, catalog, placed, "model")
    gpu = _gpu_loader(sc.stack, catalog, placed, "stack")
    extra = tuple(p.to_spec() for p in sc.profiles if p.model.lower() == model.name.lower())
    if extra:  # scenario profiles override the model's own for the same instance
        keep = tuple(p for p in model.profiles
                     if not any(e.hardware.lower() == p.hardware.lower() and e.gpus == p.gpus for e in extra))
        model = replace(model, profiles=extra + keep)
    profile_gpus = _profile_gpus(model, gpu, catalog)
    check_form(sc, placed)
    topo, workload = _topology(sc, path, catalog, placed, model, gpu)
    search = _search(sc, placed, topo)
    pinned = sc.decode.mode == "pinned"
    return ScenarioSpec(
        name=sc.name,
        source=sc.source,
        model=model,
        topology=topo,
        workload=workload,
        decode_tokens_per_s=sc.slo.decode_tokens_per_s,
        ttft_slo_s=sc.slo.ttft,
        ttft_statistic=sc.slo.ttft_statistic,
        decode=DecodeSpec(bs_max=sc.decode.bs_max if pinned else None,
                          t_decode_s=sc.decode.t_decode if pinned else None,
                          memory_fraction=sc.decode.memory_fraction),
        search=search,
        homogeneous=(_cluster(sc.baselines.homogeneous, catalog, placed, "baselines.homogeneous", gpu)
                     if sc.baselines.homogeneous else
                     None if sc.sites is None or topo.multi_site else homogeneous_cluster(topo.sites[0], topo)),
        naive_heterogeneous=sc.baselines.naive_heterogeneous,
        layerwise_pipelining=sc.layerwise_pipelining,
        cache_mode=sc.cache_mode,
        control=_control(sc.control),
        path=source,
        profile_gpus=profile_gpus,
        sizing=None if sc.sizing is None else trace_demand(sizing_spec(
            sc.sizing, lambda name, at: named(gpu, name, catalog, placed, at), placed, _prices(sc)), workload, placed),
    )


def _topology(sc: ScenarioFile, path: Path, catalog: Catalog, placed: Placed, model: Any, gpu: Any
              ) -> tuple[TopologySpec, WorkloadSpec]:
    """The sites and links (the two-cluster form as one PD site) and the scenario's workload."""
    from prfaas_plan.io.topology import link_spec, topology, two_clusters

    where = placed.place
    if sc.baselines.homogeneous is not None and sc.baselines.homogeneous.instances < 2:
        raise SpecError(f"homogeneous PD needs at least 2 instances, got {sc.baselines.homogeneous.instances}",
                        **where("baselines.homogeneous.instances"))
    if sc.sites is None:
        assert sc.clusters is not None and sc.link is not None
        if sc.clusters.prfaas.instances < 1:
            raise SpecError("a PrfaaS cluster needs at least 1 instance, got 0", **where("clusters.prfaas.instances"))
        if sc.clusters.local.instances < 2:
            raise SpecError(f"the local PD cluster needs at least 2 instances (one prefill, one decode), got "
                            f"{sc.clusters.local.instances}: no decode instance is left",
                            **where("clusters.local.instances"))
        workload = workload_spec(sc.workload, path, model, placed)
        topo = two_clusters(_cluster(sc.clusters.prfaas, catalog, placed, "clusters.prfaas", gpu),
                            _cluster(sc.clusters.local, catalog, placed, "clusters.local", gpu),
                            link_spec(sc.link, link_law(sc.link, path, placed, "link")), workload)
    else:
        shared: dict[int, WorkloadSpec] = {}

        def site_workload(wl: Workload, at: str) -> WorkloadSpec:
            if wl is sc.workload:  # the scenario's own: loaded (and a trace replayed) once
                if not shared:
                    shared[0] = workload_spec(wl, path, model, placed, at)
                return shared[0]
            return workload_spec(wl, path, model, placed, at)

        topo = topology(sc, placed, cluster=lambda c, at: _cluster(c, catalog, placed, at, gpu), workload=site_workload,
                        law=lambda lk, at: link_law(lk, path, placed, at))
        if topo.multi_site and sc.baselines.homogeneous is not None:
            raise SpecError("with several PD sites each site's homogeneous baseline is derived (its own instances "
                            "plus its demand share of the prefill GPUs): drop baselines.homogeneous",
                            **where("baselines.homogeneous"))
        workload = topo.sites[0].workload if not topo.multi_site else workload_spec(sc.workload, path, model, placed)
    return topo, workload


def _search(sc: ScenarioFile, placed: Placed, topo: TopologySpec) -> SearchSpec:
    """The search space: t over the workloads' lengths (or the file's range), the split's options."""
    where = placed.place
    dists = [s.workload.lengths for s in topo.sites if s.workload is not None]
    th = sc.search.threshold
    lo, hi = min(float(d.lo) for d in dists), max(float(d.hi) for d in dists)
    # the workloads' whole range; an unbounded tail stops where one request in a million is longer
    top = max(float(d.hi) if math.isfinite(d.hi) else float(d.quantile(1 - 1e-6)) for d in dists)
    if th is None:
        t_min, t_max, step = max(lo - 1, 0.0), top, 128.0
    else:
        t_min, t_max, step = th.min, th.max, th.step
        set_by = [k for k in placed.origins if k == "search" or k.startswith("search.threshold")]
        if placed.option_of("workload.input") and not set_by:
            # an option replaced the workload the file's range was written for: search both ranges
            t_min, t_max = min(t_min, max(lo - 1, 0.0)), max(t_max, top)
        elif t_max < lo or t_min > hi:
            raise SpecError(f"threshold range {t_min:g}..{t_max:g} lies outside the workload's lengths "
                            f"{lo:g}..{hi:g}: set search.threshold.min and .max to cover them, or drop "
                            "search.threshold to search them all", **where((set_by or ["search.threshold"])[-1]))
    return SearchSpec(threshold_min=t_min, threshold_max=t_max, threshold_step=step, method=sc.search.method,
                      size_prfaas=sc.search.size_prfaas, max_prfaas_instances=sc.search.max_prfaas_instances,
                      top=sc.search.top)
