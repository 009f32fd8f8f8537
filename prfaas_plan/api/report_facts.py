"""What the report says besides the commands' tables: where each input was read, the cheapest
selective plan when the cheapest plan does not split the traffic, and what one prefill costs on
each kind the sizing may buy (why a plan offloads everything, or nothing).

``api.report`` calls these; ``report.html_decision`` and ``report.html_glance`` write them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.report.report_data import InputFile, PrefillCost
from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sizing import SizedPlan, SizingResult

BUNDLED = "bundled with prfaas-plan"


def shown_path(path: str | os.PathLike[str] | None) -> str:
    """A file as the page names it: a bundled catalog file by its catalog path (``hardware/H200.yaml``,
    the same on every machine), a file under the working folder relative to it, else as given."""
    if not path:
        return "-"
    from prfaas_plan.io.load import KINDS, PACKAGED_CATALOG

    p = Path(path)
    absolute = p.resolve() if p.is_absolute() or p.exists() else p
    for kind in KINDS:
        root = (PACKAGED_CATALOG / kind).resolve()
        if absolute.is_relative_to(root):
            return f"{kind}/{absolute.relative_to(root).as_posix()} ({BUNDLED})"
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _file(catalog: Any, kind: str, name: str) -> str:
    try:
        return shown_path(catalog.find(kind, name))
    except SpecError:
        return "-"


def inputs(sc: ScenarioSpec, catalog: Any, sizing: SizingResult | None) -> tuple[InputFile, ...]:
    """Every catalog entry the page rests on: the model, each GPU (fleet, baseline, sizing
    candidates and what the sizing bought) and each serving-stack profile, with its file and source."""
    out = [InputFile(kind="model", name=sc.model.name, file=_file(catalog, "models", sc.model.name),
                     source=sc.model.source, used_for="every prefill, KV and decode number")]
    roles: dict[str, list[str]] = {}
    gpus: dict[str, GpuSpec] = {}

    def use(gpu: GpuSpec, role: str) -> None:
        gpus.setdefault(gpu.name, gpu)
        if role not in roles.setdefault(gpu.name, []):
            roles[gpu.name].append(role)

    for s in (sc.topology.prefill, *sc.topology.sites):
        use(s.cluster.instance.gpu, "prefill service" if s.role == "prfaas" else f"PD site {s.name}")
    if sc.homogeneous is not None:
        use(sc.homogeneous.instance.gpu, "homogeneous PD baseline")
    for g in sc.profile_gpus:
        use(g, "where a measured profile was taken")
    if sc.sizing is not None:
        for o in sc.sizing.prfaas.options:
            use(o.instance.gpu, "sizing: prefill-service candidate")
        for o in sc.sizing.local.options:
            use(o.instance.gpu, "sizing: PD candidate")
    bought = set() if sizing is None else {h for h in (sizing.best.prefill_hardware,
                                                       *(s.hardware for s in sizing.best.sites)) if h}
    stacks: dict[str, str] = {}
    for name, gpu in gpus.items():
        role = ", ".join(roles[name]) + ("; bought by the cheapest plan" if name in bought else "")
        out.append(InputFile(kind="GPU", name=name, file=_file(catalog, "hardware", name), source=gpu.source,
                             used_for=role))
        if gpu.efficiency.stack:
            stacks.setdefault(gpu.efficiency.stack, name)
    for name in stacks:
        users = ", ".join(g for g, spec in gpus.items() if spec.efficiency.stack == name)
        from prfaas_plan.io.load import load_stack

        try:
            stack = load_stack(name, catalog)
            source, file = stack.source, _file(catalog, "stacks", name)
        except SpecError:
            source, file = "-", "-"
        out.append(InputFile(kind="serving stack", name=name, file=file, source=source,
                             used_for=f"the time model's terms on {users}"))
    for p in sc.model.profiles:
        out.append(InputFile(kind="measured profile", name=f"{p.gpus}x{p.hardware}", file=_profile_file(sc, catalog, p),
                             source=p.source, used_for=f"T_prefill (and S_kv) of {sc.model.name} on it"))
    return tuple(out)


def _profile_file(sc: ScenarioSpec, catalog: Any, profile: Any) -> str:
    """The model's own file, or the scenario's where the scenario added the profile."""
    model_file = _file(catalog, "models", sc.model.name)
    if sc.path and model_file != "-":
        from prfaas_plan.io.load import load_model

        try:
            own = load_model(sc.model.name, catalog).profiles
        except SpecError:
            own = ()
        if profile not in own:
            return shown_path(sc.path)
    return model_file


def splits(plan: SizedPlan) -> bool:
    """Whether every PD site of ``plan`` both offloads and prefills locally (0 < p < 1)."""
    return all(0.0 < s.p_offload < 1.0 for s in plan.sites)


def selective(sc: ScenarioSpec, sizing: SizingResult | None) -> SizedPlan | None:
    """The cheapest plan in which every site splits its traffic (0 < p < 1), when the cheapest plan
    does not (it offloads everything, or nothing); None when it does, or no such plan serves."""
    if sizing is None or sc.sizing is None or splits(sizing.best):
        return None
    from prfaas_plan.api.size import fit, variant
    from prfaas_plan.api.size_grid import laws
    from prfaas_plan.api.size_solve import SELECTIVE

    try:
        lw = laws(sc, sc.sizing)
        plan, _ = fit(sc, lw, variant(lw, columns=SELECTIVE), sc.sizing.demand_rps)
    except (SpecError, InfeasibleError):
        return None
    return plan


def prefill_costs(sc: ScenarioSpec) -> tuple[PrefillCost, ...]:
    """What one prefill costs on each kind the sizing may buy, at the first PD site's workload: the
    mean prefill time of every request (offloaded to a prefill-service kind, or kept on a PD kind)
    times the instance's price."""
    if sc.sizing is None:
        return ()
    from prfaas_plan.api.size_grid import laws

    try:
        lw = laws(sc, sc.sizing)
    except (SpecError, InfeasibleError):
        return ()
    site = lw.sites[0]
    out = []
    for role, options, times, column in (("prefill service", sc.sizing.prfaas.options, site.t_long_s, site.all_column),
                                         ("PD site", sc.sizing.local.options, site.t_short_s, site.none_column)):
        for o in options:
            seconds = float(times[o.name][column]) if o.name in times else float("inf")
            out.append(PrefillCost(role=role, instance=o.name, price_per_instance_hour=o.price_per_instance_hour,
                                   seconds=seconds))
    return tuple(c for c in out if c.seconds < float("inf"))
