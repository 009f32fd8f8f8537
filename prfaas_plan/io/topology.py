"""A scenario's topology: its ``sites:`` and ``links:``, or the two-cluster form as one PD site.

The two-cluster form (``clusters.prfaas``, ``clusters.local``, ``link``) is the topology with a
prefill site ``prfaas``, one PD site ``local`` (share 1) and the link ``prfaas->local``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from prfaas_plan.errors import SpecError
from prfaas_plan.io.bandwidth import QuantileBandwidth, quantile_law
from prfaas_plan.io.overrides import Placed
from prfaas_plan.io.scenario_schema import ScenarioFile, Site
from prfaas_plan.specs.bandwidth import BandwidthLaw
from prfaas_plan.specs.scenario import ClusterSpec, LinkSpec, WorkloadSpec
from prfaas_plan.specs.topology import PD, PRFAAS, SiteSpec, TopologyLink, TopologySpec

SHARE_RTOL = 1e-6  # demand shares must sum to 1 within this


def link_spec(lk: Any, law: BandwidthLaw | None = None) -> LinkSpec:
    """A schema link (``Link`` or ``SiteLink``) as the typed LinkSpec; a bandwidth given as a law
    (``law``, read by ``io.scenario``) has its median as the bandwidth."""
    bw = lk.bandwidth
    if law is None and isinstance(bw, QuantileBandwidth):
        law = quantile_law(bw)
    if law is not None:
        bw = law.median_bytes_per_s
    elif not isinstance(bw, float):  # a law in a file that was not read (``io.patch``): never the loader's
        bw = math.nan  # link, so ``patch.agrees`` refuses it and the caller reloads
    return LinkSpec(bandwidth_bytes_per_s=bw, usable_fraction=lk.usable_fraction, rtt_s=lk.rtt,
                    handoff_s=lk.handoff, connections=lk.connections, max_window_bytes=lk.max_window,
                    stream_bytes_per_s_cap=lk.stream_bandwidth, share_cap=lk.share_cap, bandwidth_law=law)


def two_clusters(prfaas: ClusterSpec, local: ClusterSpec, link: LinkSpec, workload: WorkloadSpec) -> TopologySpec:
    return TopologySpec(prefill=SiteSpec(name="prfaas", role=PRFAAS, cluster=prfaas),
                        sites=(SiteSpec(name="local", role=PD, cluster=local, demand_share=1.0, workload=workload),),
                        links=(TopologyLink(source="prfaas", target="local", link=link),))


def check_form(sc: ScenarioFile, placed: Placed) -> None:
    where = placed.place
    if sc.sites is None:
        if sc.clusters is None:
            raise SpecError("required key is missing: give clusters and link (two clusters) or sites and links "
                            "(a topology)", **where("clusters"))
        if sc.link is None:
            raise SpecError("required key is missing", **where("link"))
        if sc.links is not None:
            raise SpecError("links go with sites; the two-cluster form has one link: use link", **where("links"))
        return
    if sc.clusters is not None or sc.link is not None:
        raise SpecError("give clusters and link, or sites and links, not both",
                        **where("clusters" if sc.clusters is not None else "link"))
    if sc.links is None:
        raise SpecError("required key is missing: one link from the prefill site to each PD site", **where("links"))


def _shares(pd: dict[str, Site], placed: Placed) -> dict[str, float]:
    given = {n: s.demand_share for n, s in pd.items() if s.demand_share is not None}
    if not given:
        return {n: 1.0 / len(pd) for n in pd}
    if len(given) < len(pd):
        missing = next(n for n in pd if n not in given)
        raise SpecError("give every PD site a demand_share or none (equal shares)",
                        **placed.place(f"sites.{missing}.demand_share"))
    total = math.fsum(given.values())
    if abs(total - 1.0) > SHARE_RTOL:
        listed = ", ".join(f"{n} {v:g}" for n, v in given.items())
        raise SpecError(f"the PD sites' demand shares sum to {total:g}, not 1 ({listed})",
                        **placed.place(f"sites.{next(iter(given))}.demand_share"))
    return given


def topology(sc: ScenarioFile, placed: Placed, *, cluster: Callable[[Any, str], ClusterSpec],
             workload: Callable[[Any, str], WorkloadSpec],
             law: Callable[[Any, str], BandwidthLaw | None] = lambda lk, at: None) -> TopologySpec:
    """The sites form as a TopologySpec: one prefill site, its PD sites and one link to each.

    ``cluster(site, field)``, ``workload(schema_workload, field)`` and ``law(link, field)`` (a
    bandwidth law's file read) build specs from schema objects (``io.scenario``); a site's
    workload keys replace the scenario's.
    """
    where = placed.place
    assert sc.sites is not None and sc.links is not None
    prefill = [n for n, s in sc.sites.items() if s.role == PRFAAS]
    pd = {n: s for n, s in sc.sites.items() if s.role == PD}
    if len(prefill) != 1:
        raise SpecError(f"a topology needs exactly one site with role prfaas, got {len(prefill)}"
                        + (f" ({', '.join(prefill)}); several prefill services are not supported" if prefill else ""),
                        **where("sites"))
    if not pd:
        raise SpecError("a topology needs at least one site with role pd", **where("sites"))
    name = prefill[0]
    for n, s in sc.sites.items():
        if s.role == PRFAAS and s.instances < 1:
            raise SpecError("a prefill site needs at least 1 instance, got 0", **where(f"sites.{n}.instances"))
        if s.role == PRFAAS and (s.demand_share is not None or s.workload is not None):
            key = "demand_share" if s.demand_share is not None else "workload"
            raise SpecError("a prefill site has no demand of its own: drop it", **where(f"sites.{n}.{key}"))
        if s.role == PD and s.instances < 2:
            raise SpecError(f"a PD site needs at least 2 instances (one prefill, one decode), got {s.instances}",
                            **where(f"sites.{n}.instances"))
    by_target: dict[str, Any] = {}
    index: dict[str, int] = {}
    for i, lk in enumerate(sc.links):
        for key, end in (("from", lk.source), ("to", lk.target)):
            if end not in sc.sites:
                raise SpecError(f"no site named {end!r} (sites: {', '.join(sc.sites)})", **where(f"links[{i}].{key}"))
        if lk.source != name:
            raise SpecError(f"a link runs from the prefill site {name!r}, got {lk.source!r}",
                            **where(f"links[{i}].from"))
        if lk.target not in pd:
            raise SpecError(f"a link runs to a PD site, got {lk.target!r}", **where(f"links[{i}].to"))
        if lk.target in by_target:
            raise SpecError(f"a second link to {lk.target!r}: one link per PD site", **where(f"links[{i}].to"))
        by_target[lk.target] = lk
        index[lk.target] = i
    for n in pd:
        if n not in by_target:
            raise SpecError(f"PD site {n!r} has no link from {name!r}", **where("links"))
    shares = _shares(pd, placed)
    sites = []
    for n, s in pd.items():
        own = {k: v for k, v in (s.workload.model_dump(exclude_none=True) if s.workload else {}).items()}
        wl = sc.workload.model_copy(update={k: getattr(s.workload, k) for k in own}) if own else sc.workload
        at = f"sites.{n}.workload" if "input" in own else "workload"
        if "input" in own and wl.output_tokens is None and placed.option_of("workload.output_tokens") == "--trace":
            # --trace's output lengths come with its requests; a site with its own input has none
            raise SpecError(f"the trace replaces the scenario's workload, but site {n!r} has its own input and takes "
                            f"its output length from the scenario: set sites.{n}.workload.output_tokens, or give "
                            f"each site its trace as sites.{n}.workload.input", field="--trace")
        sites.append(SiteSpec(name=n, role=PD, cluster=cluster(s, f"sites.{n}"), demand_share=shares[n],
                              workload=workload(wl, at)))
    return TopologySpec(prefill=SiteSpec(name=name, role=PRFAAS, cluster=cluster(sc.sites[name], f"sites.{name}")),
                        sites=tuple(sites),
                        links=tuple(TopologyLink(source=name, target=s.name, key=f"links[{index[s.name]}]",
                                                 link=link_spec(by_target[s.name],
                                                                law(by_target[s.name], f"links[{index[s.name]}]")))
                                    for s in sites))
