"""The service laws `size` weighs: every candidate instance kind's prefill and decode at every site.

For each PD site: its thresholds (the scenario's search grid, plus every request offloaded and,
for a bounded workload, none), p = P(L > t) and, per instance kind, the routed means of the
scenario's method (``core.throughput.routing``): T_prfaas and S_kv of the offloaded requests when
the kind serves the prefill service, T_local of the local ones when it serves the site, and the
decode rate BS_max / (T_decode L_out) (Eq. 5). A pinned decode (``decode.mode: pinned``) is a
measurement of the site's own instance kind; every other kind's decode is derived from the decode
model, and a kind that cannot meet the decode SLO cannot serve a PD site.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.api import holds
from prfaas_plan.api.laws import decode_rate, scaled, search_space
from prfaas_plan.api.perf import gpu_lookup
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import kv
from prfaas_plan.core.memory import fits
from prfaas_plan.core.stages import offload_all_threshold
from prfaas_plan.core.throughput import Curves, Method, routing
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import DecodeSpec, ScenarioSpec
from prfaas_plan.specs.sizing import Option, SizingSpec
from prfaas_plan.specs.topology import LinkSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteLaws:
    """One PD site's routing over its thresholds and each instance kind's service laws there."""

    name: str
    link: str
    demand_share: float
    output_tokens: float
    link_usable_fraction: float
    link_spec: LinkSpec  # the scenario's link: its fraction, share cap and stream limits apply to every tier
    t: NDArray[np.float64]  # (K,) thresholds; column ``none`` offloads nothing, ``all`` everything
    p: NDArray[np.float64]  # (K,)
    t_long_s: dict[str, NDArray[np.float64]]  # kind -> (K,) on the prefill service
    s_long_bytes: dict[str, NDArray[np.float64]]  # kind of the prefill service -> (K,)
    t_short_s: dict[str, NDArray[np.float64]]  # kind -> (K,) on the site's instances
    decode_rps: dict[str, float]  # kind -> per instance; 0: cannot decode (``decode_why``)
    decode_source: dict[str, str]
    decode_why: dict[str, str]
    local_why: dict[str, str]  # kind -> why it cannot prefill the site's longest request ("": it can)
    all_column: int  # every request offloaded (p = 1)
    none_column: int  # none offloaded (p = 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Laws:
    spec: SizingSpec
    method: Method
    sites: tuple[SiteLaws, ...]
    kinds: dict[str, Option]  # every candidate kind of either role, by instance name
    prefill_why: dict[str, str]  # prefill-service kind -> why it cannot hold the model ("": it can)

    @property
    def candidates(self) -> int:
        """(kind, t) cells the search weighs: per site, every kind of either role at every t."""
        return sum(len(s.t) * (len(self.spec.prfaas.options) + len(self.spec.local.options)) for s in self.sites)


def _decode(sc: ScenarioSpec, own: InstanceSpec, inst: InstanceSpec) -> tuple[float, str, str]:
    """(req/s per instance, source, why not) of decode on ``inst`` at this site."""
    mine = inst.gpu.name.lower() == own.gpu.name.lower() and inst.gpus == own.gpus
    if sc.decode.pinned and not mine:
        sc = replace(sc, decode=DecodeSpec(memory_fraction=sc.decode.memory_fraction))
    try:
        rate, detail = decode_rate(sc, inst)
    except InfeasibleError as exc:
        return 0.0, "derived", str(exc)
    return rate, detail.mode, ""


def laws(sc: ScenarioSpec, spec: SizingSpec) -> Laws:
    topo = sc.topology
    method = Method(sc.search.method)
    kinds: dict[str, Option] = {}
    for o in (*spec.prfaas.options, *spec.local.options):
        kinds.setdefault(o.name, o)
    known = [*(o.instance.gpu for o in kinds.values()), sc.prfaas.instance.gpu, sc.local.instance.gpu, *sc.profile_gpus]
    gpu_of = gpu_lookup(known=known)
    timers = {name: scaled(prefill_timer(sc.model, o.instance, gpu_of=gpu_of), sc.time_scale[0])
              for name, o in kinds.items()}
    s_kv_engine = kv.footprint(sc.model).s_kv
    grid = search_space(sc).thresholds
    prefill_kinds = {o.name for o in spec.prfaas.options}
    sites = []
    for i, (s, lk) in enumerate(zip(topo.sites, topo.links, strict=True)):
        w = s.workload
        assert w is not None
        hi = float(w.lengths.hi)
        t = np.concatenate([grid, [offload_all_threshold(w.lengths), hi]])
        long_t, long_s, short = {}, {}, {}
        top = holds.longest(w.lengths)
        local_why = {}
        for name, tm in timers.items():
            s_kv = tm.kv_bytes if tm.kv_bytes is not None else s_kv_engine
            r = routing(w.lengths, Curves(t_prfaas=tm, t_local=tm, s_kv=s_kv), t, method)  # type: ignore[arg-type]
            if name in prefill_kinds:
                long_t[name], long_s[name] = r.t_long_s, r.s_long_bytes
            # homogeneous PD may run on any candidate kind; it prefills up to t: no candidate at a t whose
            # longest local request the kind cannot hold beside the weights
            short[name] = np.where(_holds_up_to(sc, kinds[name].instance, np.minimum(t, top)), r.t_short_s, np.inf)
            h = holds.prefill_holding(sc, kinds[name].instance, top)
            local_why[name] = h.why() if h else ""
            p = r.p  # the same for every kind
        si = site_scenario(sc, i)
        dec = {name: _decode(si, s.cluster.instance, o.instance) for name, o in kinds.items()}
        p = np.where(np.arange(len(t)) == len(t) - 1, 0.0, p)  # t = the longest: nothing above it
        sites.append(SiteLaws(
            name=s.name, link=lk.name, demand_share=s.demand_share, output_tokens=w.output_tokens,
            link_usable_fraction=lk.link.usable_fraction, link_spec=lk.link, t=t, p=p, t_long_s=long_t,
            s_long_bytes=long_s,
            t_short_s=short, decode_rps={k: v[0] for k, v in dec.items()},
            decode_source={k: v[1] for k, v in dec.items()}, decode_why={k: v[2] for k, v in dec.items()},
            local_why=local_why, all_column=len(t) - 2, none_column=len(t) - 1))
    top = max(holds.longest(s.workload.lengths) for s in topo.sites if s.workload is not None)
    pre_why = {o.name: holds.prefill_holding(sc, o.instance, top) for o in spec.prfaas.options}
    return Laws(spec=spec, method=method, sites=tuple(sites), kinds=kinds,
                prefill_why={k: h.why() if h else "" for k, h in pre_why.items()})


def _holds_up_to(sc: ScenarioSpec, inst: InstanceSpec, lengths: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per length: ``inst`` holds the weights and a request's KV at it (a measured kind: every length)."""
    if holds.measured(sc, inst):
        return np.ones(len(lengths), dtype=bool)
    return fits(sc.model, inst, lengths, memory_fraction=sc.decode.memory_fraction)
