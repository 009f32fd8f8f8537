"""Which instances of a scenario must hold the model, and at what length (``core.memory``'s check).

A prefill instance holds the weights and the KV of the longest request it must prefill; a decode
instance the weights and one request's KV at the decode context (``api.laws.decode_rate``). A
measurement of the model on an instance kind (a prefill profile, or a pinned decode on the PD
site's own kind, which homogeneous PD on that kind shares) shows the engine held it there, so it
is not second-guessed by the check.
"""

from __future__ import annotations

import math
from typing import Any

from prfaas_plan.core.memory import Holding, holding
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import ScenarioSpec

TOP_Q = 1 - 1e-12  # stands for the longest length of an unbounded distribution


def longest(lengths: Any) -> float:
    """The longest request of a length distribution (its top quantile when unbounded)."""
    hi = float(lengths.hi)
    return hi if math.isfinite(hi) else float(lengths.quantile(TOP_Q))


def measured(sc: ScenarioSpec, instance: InstanceSpec) -> bool:
    """A prefill profile of the scenario's model on this instance kind."""
    return sc.model.profile_for(instance.gpu.name, instance.gpus) is not None


def decode_context(sc: ScenarioSpec) -> float:
    """The context a decode slot is sized at (``api.laws.decode_rate``)."""
    return sc.workload.input_total_mean + sc.workload.output_tokens


def prefill_holding(sc: ScenarioSpec, instance: InstanceSpec, tokens: float) -> Holding | None:
    """Why ``instance`` cannot prefill a ``tokens``-long request of the model, or None when it can."""
    if measured(sc, instance):
        return None
    h = holding(sc.model, instance, tokens, memory_fraction=sc.decode.memory_fraction)
    return None if h.fits else h


def require_fleet(sc: ScenarioSpec, local: InstanceSpec, *, homogeneous: bool = False) -> None:
    """Exit 1 (InfeasibleError) naming the instance when the scenario's fleet cannot hold the model:
    its prefill service at the longest request, the PD instances at the decode context (every
    length when they serve homogeneous PD, prefilling everything themselves)."""
    top = longest(sc.workload.lengths)
    roles = [(f"prefill {_where(sc, sc.prfaas.instance)}", sc.prfaas.instance, top)]
    pinned = sc.decode.pinned and _same_kind(local, sc.local.instance)  # a decode measured on this kind
    if homogeneous and not pinned:
        roles.append(("homogeneous baseline (baselines.homogeneous)", local, top))
    elif not (homogeneous or pinned or measured(sc, local)):
        roles.append((f"PD {_where(sc, local)}", local, decode_context(sc)))
    for role, inst, tokens in roles:
        h = prefill_holding(sc, inst, tokens)
        if h is not None:
            raise InfeasibleError(f"{role}: {h.why()}", binding="memory")


def _same_kind(a: InstanceSpec, b: InstanceSpec) -> bool:
    return a.gpu.name.lower() == b.gpu.name.lower() and a.gpus == b.gpus


def _where(sc: ScenarioSpec, inst: InstanceSpec) -> str:
    """How the scenario names the pool of ``inst``: ``service (clusters.prfaas)``, ``site NAME (sites.NAME)``."""
    topo = sc.topology
    for s in (topo.prefill, *topo.sites):
        if s.cluster.instance is inst and s.name not in ("prfaas", "local"):
            return f"site {s.name} (sites.{s.name})"
    return "service (clusters.prfaas)" if inst is sc.prfaas.instance else "site local (clusters.local)"
