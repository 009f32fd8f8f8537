"""Library API of `deploy`: the plan `optimize` chooses for a scenario, as a typed deployment
(``deploy.model``), and one target's files for it (``deploy.llmd``, ``engines``, ``dynamo``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prfaas_plan import __version__
from prfaas_plan.api.laws import stack_names
from prfaas_plan.api.optimize import optimize
from prfaas_plan.deploy import dynamo, engines, llmd
from prfaas_plan.deploy.model import TARGETS, Deployment, Generated, Pool, SiteDeployment
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.results import PlanResult
from prfaas_plan.specs.scenario import ScenarioSpec

MIN_OFFLOAD = 1e-3  # a plan offloading less is homogeneous PD with an idle prefill service
WRITERS = {"llm-d": llmd.generate, "sglang": engines.sglang, "vllm": engines.vllm, "dynamo": dynamo.generate}


def check_target(target: str) -> str:
    if target not in TARGETS:
        raise SpecError(f"unknown target {target!r} (use one of {', '.join(TARGETS)})", field="--target")
    return target


def _pool(cluster: Any, instances: int) -> Pool:
    return Pool(hardware=cluster.instance.gpu.name, gpus=cluster.instance.gpus, instances=instances)


def _sites(sc: ScenarioSpec, result: PlanResult) -> tuple[int, tuple[SiteDeployment, ...]]:
    """N_prfaas and each site as the headline method's best plan sets them."""
    topo = sc.topology
    best = result.head.best
    points = {sp.site: (sp.threshold_tokens, sp.n_p, sp.n_d, sp.p_offload) for sp in best.sites}
    n_prfaas = round(best.n_prfaas)
    sites = []
    for s, lk in zip(topo.sites, topo.links, strict=True):
        t, n_p, n_d, p = points[s.name]
        offloads = t is not None and p > 0
        sites.append(SiteDeployment(name=s.name, local_prefill=_pool(s.cluster, n_p), decode=_pool(s.cluster, n_d),
                                    threshold_tokens=t if offloads else None, p_offload=p,
                                    demand_share=s.demand_share, link_bytes_per_s=lk.link.bandwidth_bytes_per_s,
                                    link_rtt_s=lk.link.rtt_s))
    return n_prfaas, tuple(sites)


def _check(sc: ScenarioSpec, n_prfaas: int, sites: tuple[SiteDeployment, ...]) -> None:
    """A plan the files could only carry in part is refused, naming what is missing."""
    where = sc.path or sc.name
    for s in sites:
        if s.decode.instances < 1:
            raise SpecError(f"the plan gives site {s.name} no decode instance (N_d = 0): nothing to deploy there",
                            source=where, field=f"sites.{s.name}")
    if n_prfaas < 1 or all(s.threshold_tokens is None or s.p_offload < MIN_OFFLOAD for s in sites):
        raise SpecError(f"the plan offloads nothing (under {MIN_OFFLOAD:.1%} of requests; every request is "
                        "prefilled locally, the prefill service idle): "
                        "there is no PrfaaS deployment to write; deploy homogeneous PD instead, or give the link "
                        "more bandwidth", source=where, field="plan")


def deployment(sc: ScenarioSpec, *, command: str, scenario_data: Mapping[str, Any]) -> Deployment:
    """The best plan of ``sc`` (its search method, throughput plan) as a deployment."""
    result = optimize(sc, ttft_slo=False).result
    n_prfaas, sites = _sites(sc, result)
    _check(sc, n_prfaas, sites)
    topo = sc.topology
    best = result.head.best
    return Deployment(scenario=sc.name, scenario_file=Path(sc.path).name if sc.path else sc.name, command=command,
                      version=__version__,
                      stack=stack_names(sc.prfaas.instance, *(s.cluster.instance for s in topo.sites)),
                      method=result.method, model=sc.model.name, prefill_site=topo.prefill.name,
                      prefill=_pool(topo.prefill.cluster, n_prfaas), sites=sites,
                      lambda_max_rps=best.lambda_max_rps, binding=str(best.binding), scenario_data=scenario_data)


def generate(d: Deployment, target: str) -> Generated:
    return WRITERS[check_target(target)](d)
