"""What `size -o PLAN.yaml` writes: the plan, whether its decode must be derived, the baseline.

The cheapest plan, or where it offloads nothing (homogeneous PD is cheapest) the cheapest plan that
does offload, since a PrfaaS-PD scenario needs a prefill service. A pinned decode is a measurement
of each site's own kind: a plan on another kind is written with the decode derived (as `size`
derived it), and the homogeneous baseline is one whose decode the file describes.
"""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sizing import SizedPlan, SizingResult


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanFile:
    plan: SizedPlan
    extra_per_hour: float  # over the cheapest plan (> 0 when that one offloads nothing)
    derived_decode: bool
    homogeneous: SizedPlan | None
    narrowest_bytes_per_s: float  # the link of a site that offloads nothing is written at this tier


def plan_file(sc: ScenarioSpec, result: SizingResult) -> PlanFile:
    plan = result.best
    if not plan.offloads:
        offloading = [p for p in [t.plan for t in result.tiers] + [result.naive] if p is not None and p.offloads]
        if not offloading:
            raise InfeasibleError("--output: no PrfaaS-PD plan offloads anything at this demand (homogeneous PD is "
                                  "cheapest at every link tier); there is no prefill service to write",
                                  binding="size")
        plan = min(offloading, key=lambda p: p.cost.per_hour)
    topo, spec = sc.topology, sc.sizing
    assert spec is not None
    own = {s.name: s.cluster.instance for s in topo.sites}
    derived = sc.decode.pinned and any(
        s.hardware.lower() != own[s.site].gpu.name.lower() or s.gpus_per_instance != own[s.site].gpus
        for s in plan.sites)
    same = [p for _, p, _ in result.homogeneous if p is not None and (
        derived or not sc.decode.pinned or p.sites[0].decode_source == "pinned")]
    return PlanFile(plan=plan, extra_per_hour=plan.cost.per_hour - result.best.cost.per_hour, derived_decode=derived,
                    homogeneous=min(same, key=lambda p: p.cost.per_hour) if same else None,
                    narrowest_bytes_per_s=min(t.bandwidth_bytes_per_s for t in spec.tiers))
