"""The scenario's ``sizing:`` section (schema ``io.scenario_schema.Sizing``) into a ``SizingSpec``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.overrides import Placed
from prfaas_plan.io.scenario_schema import Sizing, SizingRole
from prfaas_plan.specs.hardware import GpuSpec, InstanceSpec
from prfaas_plan.specs.sizing import LinkTier, Option, RoleOptions, SizingSpec
from prfaas_plan.specs.topology import WorkloadSpec


def _role(r: SizingRole, role: str, gpu: Callable[[str, str], GpuSpec], placed: Placed,
          scenario_prices: dict[str, float]) -> RoleOptions:
    at = f"sizing.{role}"
    names = [n.lower() for n in r.hardware]
    for k, n in enumerate(names):
        if n in names[:k]:
            raise SpecError(f"{r.hardware[k]!r} is listed twice", **placed.place(f"{at}.hardware[{k}]"))
    for name in r.price_per_gpu_hour:
        if name.lower() not in names:
            raise SpecError(f"a price for {name!r}, which is not among the candidates {r.hardware}",
                            **placed.place(f"{at}.price_per_gpu_hour.{name}"))
    if len(set(r.gpus_per_instance)) < len(r.gpus_per_instance):
        raise SpecError(f"a GPU count is listed twice: {r.gpus_per_instance}",
                        **placed.place(f"{at}.gpus_per_instance"))
    given = {k.lower(): v for k, v in r.price_per_gpu_hour.items()}
    options = []
    for k, name in enumerate(r.hardware):
        spec = gpu(name, f"{at}.hardware[{k}]")
        price = given.get(name.lower(), scenario_prices.get(spec.name.lower(), spec.price_per_hour))
        if price is None:
            raise SpecError(f"no price for {spec.name}: the catalog has none; give it, e.g. "
                            f"price_per_gpu_hour: {{{spec.name}: 6.0}}", **placed.place(f"{at}.price_per_gpu_hour"))
        options += [Option(instance=InstanceSpec(gpu=spec, gpus=g), price_per_gpu_hour=float(price))
                    for g in r.gpus_per_instance]
    return RoleOptions(options=tuple(options), max_instances=r.max_instances)


def sizing_spec(s: Sizing, gpu: Callable[[str, str], GpuSpec], placed: Placed,
                scenario_prices: dict[str, float] | None = None) -> SizingSpec:
    """``gpu(name, field_path)`` loads a catalog GPU, an unknown name placed at the field. A kind's
    price per GPU-hour: the sizing section's, else the scenario's for that hardware
    (``scenario_prices``, by lower-case name: a cluster's or site's ``price_per_gpu_hour``), else the
    catalog's."""
    prices = scenario_prices or {}
    seen: dict[float, int] = {}
    for k, t in enumerate(s.links):
        if t.bandwidth in seen:
            raise SpecError(f"tiers {seen[t.bandwidth]} and {k} have the same bandwidth "
                            f"({units.bytes_per_s_to_gbps(t.bandwidth):g} Gbps)",
                            **placed.place(f"sizing.links[{k}].bandwidth"))
        seen[t.bandwidth] = k
    return SizingSpec(
        demand_rps=s.demand, headroom=s.headroom,
        prfaas=_role(s.prfaas, "prfaas", gpu, placed, prices), local=_role(s.local, "local", gpu, placed, prices),
        tiers=tuple(LinkTier(bandwidth_bytes_per_s=t.bandwidth, price_per_hour=t.price_per_hour,
                             usable_fraction=t.usable_fraction) for t in s.links),
        egress_price_per_byte=s.egress_price_per_gb / units.GB,
        demand_factors=tuple(sorted(set(s.demand_factors))),
        ttft_bounds=tuple(sorted(set(s.ttft_bounds))) if s.ttft_bounds else None,
    )



def trace_demand(spec: SizingSpec, workload: WorkloadSpec, placed: Placed) -> SizingSpec:
    """A trace given by --trace replaces the workload the file's sizing.demand was written for: the
    demand is then the trace's mean rate, (n - 1) / span, and the spec says so; --demand still wins,
    and a trace the file itself names keeps the file's demand."""
    trace = workload.trace
    if trace is None or placed.option_of("sizing.demand") or not placed.option_of("workload.input"):
        return spec
    if trace.mean_rate_rps is None:
        return spec
    return replace(spec, demand_rps=trace.mean_rate_rps,
                   demand_source="the trace's mean rate, (n - 1) / span; --demand to set another")
