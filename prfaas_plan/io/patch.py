"""One ``--set key=value`` applied to a loaded scenario's typed spec (``dataclasses.replace``).

A sweep loads its scenario once (catalog model, hardware, a trace and its prefix-cache replay)
and builds each point by patching that spec. A patch happens only where it is provably the spec
the loader would build: the value goes through the schema model of its section (the same
validators and bounds) and the loader's own checks on that key (a PD cluster keeps 2 instances,
...). Any other key or value gives None: the caller reloads that point, which gives the loader's
result or its one-line error naming the ``--set`` key.

Patched: ``link.{bandwidth,usable_fraction,rtt}``, ``links[i].{bandwidth,usable_fraction,rtt}``,
``clusters.{prfaas,local}.instances``, ``sites.NAME.instances``, ``slo.{decode_tokens_per_s,ttft}``,
``decode.{bs_max,t_decode}``, ``workload.output_tokens``. Not ``sites.NAME.demand_share``: the
shares must sum to 1, so the loader refuses a sweep of one share at all but the fitting value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from prfaas_plan.io.load import Catalog
from prfaas_plan.io.overrides import Override, apply, parse_set
from prfaas_plan.io.scenario import TraceArg, scenario_mapping
from prfaas_plan.io.scenario_schema import Cluster, Decode, Link, ScenarioFile, Site, SiteLink, Slo, Workload
from prfaas_plan.io.topology import link_spec
from prfaas_plan.io.workload import beyond_context
from prfaas_plan.specs.scenario import ClusterSpec, DecodeSpec, LinkSpec, ScenarioSpec
from prfaas_plan.specs.topology import PD, PRFAAS, homogeneous_cluster


@dataclass(frozen=True, slots=True)
class Loaded:
    """A loaded scenario and what it was built from: the mapping after the overrides and its
    schema object (the spec alone cannot tell, e.g., a derived homogeneous baseline from a given one)."""

    spec: ScenarioSpec
    data: dict[str, Any]
    file: ScenarioFile


def loaded(spec: ScenarioSpec, ref: str | None, catalog: Catalog, *, overrides: list[str],
           trace: TraceArg = None, method: str | None = None) -> Loaded | None:
    """``spec`` (what ``load_scenario`` returned for these arguments) with its mapping; None if the
    mapping cannot be rebuilt (then nothing is patched)."""
    try:
        _, placed = scenario_mapping(ref, catalog, overrides=overrides, trace=trace, method=method)
        return Loaded(spec, placed.data, ScenarioFile.model_validate(placed.data))
    except Exception:  # the loader took it; whatever differs here, reload instead
        return None


def point(base: Loaded, key: str, text: str) -> ScenarioSpec | None:
    """The spec with ``--set key=text``, or None where a patch cannot prove it is the loader's."""
    try:
        ov = parse_set(f"{key}={text}")
    except Exception:  # the reload raises the loader's own error
        return None
    return _build(base, ov.key, ov.value)


def _build(base: Loaded, key: str, value: Any) -> ScenarioSpec | None:
    for pattern, build in _PATCHES:
        m = pattern.fullmatch(key)
        if m is not None:
            return build(base, m, value)
    return None


def chain(base: Loaded, values: Sequence[tuple[str, Any]]) -> ScenarioSpec | None:
    """The spec with each (key, value) set in turn, values as typed (a study's), or None where any
    patch cannot prove it is the loader's. Each patch sees the mapping with the ones before it."""
    spec, data = base.spec, base.data
    for key, value in values:
        spec = _build(Loaded(spec, data, base.file), key, value)
        if spec is None:
            return None
        try:
            data = apply(data, [Override(key, value, "axes")], "").data
        except Exception:  # the reload says what is wrong
            return None
    return spec


def _valid(model: type[BaseModel], section: Any, name: str, value: Any) -> Any:
    """The section re-validated with ``name`` set to ``value`` (the schema's own checks), else None."""
    if not isinstance(section, dict):
        return None
    try:
        return model.model_validate({**section, name: value})
    except (ValidationError, ValueError, TypeError, AttributeError):  # the reload says what is wrong
        return None


# --- the typed patches of the topology


def with_link(sc: ScenarioSpec, target: str, link: LinkSpec) -> ScenarioSpec:
    """``link`` on the topology's link to PD site ``target`` (and ``sc.link`` if it is the first)."""
    topo = sc.topology
    links = tuple(replace(lk, link=link) if lk.target == target else lk for lk in topo.links)
    return replace(sc, topology=replace(topo, links=links))


def with_cluster(sc: ScenarioSpec, site: str, cluster: ClusterSpec, *, derived_homogeneous: bool) -> ScenarioSpec:
    """``cluster`` at site ``site`` (the prefill site or a PD site); a derived homogeneous baseline follows."""
    topo = sc.topology
    if topo.prefill.name == site:
        topo = replace(topo, prefill=replace(topo.prefill, cluster=cluster))
    else:
        topo = replace(topo, sites=tuple(replace(s, cluster=cluster) if s.name == site else s for s in topo.sites))
    hom = homogeneous_cluster(topo.sites[0], topo) if derived_homogeneous else sc.homogeneous
    return replace(sc, topology=topo, homogeneous=hom)


def with_output_tokens(sc: ScenarioSpec, output_tokens: float) -> ScenarioSpec:
    """Every workload (the scenario's and the sites', one object or several) with ``output_tokens``."""
    topo = sc.topology
    new: dict[int, Any] = {}  # by identity: a workload shared by the sites stays shared

    def out(wl: Any) -> Any:
        return new.setdefault(id(wl), replace(wl, output_tokens=output_tokens))

    topo = replace(topo, sites=tuple(replace(s, workload=out(s.workload)) for s in topo.sites))
    return replace(sc, topology=topo, workload=out(sc.workload))


# --- per key: the section's schema check, the loader's checks on that key, then the typed patch


def _link(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    if base.file.sites is not None:
        return None
    lk = _valid(Link, base.data.get("link"), m["field"], value)
    return None if lk is None else with_link(base.spec, "local", link_spec(lk))


def _links(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    raw = base.data.get("links")
    i = int(m["i"])
    if base.file.sites is None or not isinstance(raw, list) or i >= len(raw):
        return None
    lk = _valid(SiteLink, raw[i], m["field"], value)
    if lk is None or lk.target not in {x.target for x in base.spec.topology.links}:
        return None
    return with_link(base.spec, lk.target, link_spec(lk))


def _cluster(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    if base.file.sites is not None:
        return None
    which = m["which"]
    c = _valid(Cluster, (base.data.get("clusters") or {}).get(which), "instances", value)
    if c is None or c.instances < (1 if which == "prfaas" else 2):  # io.scenario.to_spec's own bounds
        return None
    spec = base.spec
    old = spec.prfaas if which == "prfaas" else spec.local
    # two clusters: a homogeneous baseline is the file's or derived later by api.plan, never here
    return with_cluster(spec, "prfaas" if which == "prfaas" else "local", replace(old, instances=c.instances),
                        derived_homogeneous=False)


def _site(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    name, sites, topo = m["name"], base.file.sites, base.spec.topology
    if sites is None or name not in sites:
        return None
    s = _valid(Site, (base.data.get("sites") or {}).get(name), "instances", value)
    if s is None or s.role not in (PRFAAS, PD) or s.instances < (1 if s.role == PRFAAS else 2):  # io.topology's
        return None
    old = next((x.cluster for x in (topo.prefill, *topo.sites) if x.name == name), None)
    if old is None:
        return None
    derived = base.file.baselines.homogeneous is None and not topo.multi_site  # as io.scenario.to_spec
    return with_cluster(base.spec, name, replace(old, instances=s.instances), derived_homogeneous=derived)


def _slo(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    s = _valid(Slo, base.data.get("slo"), m["field"], value)
    if s is None:
        return None
    return replace(base.spec, decode_tokens_per_s=s.decode_tokens_per_s, ttft_slo_s=s.ttft,
                   ttft_statistic=s.ttft_statistic)


def _decode(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    d = _valid(Decode, base.data.get("decode", {}), m["field"], value)
    if d is None:
        return None
    pinned = d.mode == "pinned"  # derived: the loader drops bs_max and t_decode (after checking them)
    return replace(base.spec, decode=DecodeSpec(bs_max=d.bs_max if pinned else None,
                                                t_decode_s=d.t_decode if pinned else None,
                                                memory_fraction=d.memory_fraction))


def _output_tokens(base: Loaded, m: re.Match[str], value: Any) -> ScenarioSpec | None:
    w = _valid(Workload, base.data.get("workload"), "output_tokens", value)
    if w is None or w.output_tokens is None:  # None: the trace's mean, which the loader works out
        return None
    if beyond_context(base.spec.model, w.output_tokens):  # the loader refuses it, naming the field
        return None
    # a site with workload keys of its own has its own workload (and maybe its own output): reload
    if any(s.workload is not None and s.workload.model_dump(exclude_none=True)
           for s in (base.file.sites or {}).values()):
        return None
    return with_output_tokens(base.spec, float(w.output_tokens))


_FIELD = r"(?P<field>bandwidth|usable_fraction|rtt)"
_PATCHES: tuple[tuple[re.Pattern[str], Callable[[Loaded, re.Match[str], Any], ScenarioSpec | None]], ...] = (
    (re.compile(rf"link\.{_FIELD}"), _link),
    (re.compile(rf"links\[(?P<i>\d+)\]\.{_FIELD}"), _links),
    (re.compile(r"clusters\.(?P<which>prfaas|local)\.instances"), _cluster),
    (re.compile(r"sites\.(?P<name>[^.\[\]]+)\.instances"), _site),
    (re.compile(r"slo\.(?P<field>decode_tokens_per_s|ttft)"), _slo),
    (re.compile(r"decode\.(?P<field>bs_max|t_decode)"), _decode),
    (re.compile(r"workload\.output_tokens"), _output_tokens),
)


def patchable(key: str) -> bool:
    """Whether ``key`` is one a patch may serve (its values may still need a reload)."""
    return any(p.fullmatch(key) for p, _ in _PATCHES)


def agrees(loaded_spec: ScenarioSpec, patched: ScenarioSpec | None) -> bool:
    """Whether a patch to the value the spec was loaded with gives back what the loader built:
    a guard against this module's mapping drifting from ``load_scenario``'s."""
    def fields(sc: ScenarioSpec) -> tuple[Any, ...]:
        t = sc.topology
        return (sc.link, sc.local, sc.prfaas, sc.homogeneous, sc.decode, sc.decode_tokens_per_s, sc.ttft_slo_s,
                sc.ttft_statistic, sc.workload.output_tokens, t and (t.prefill.cluster, t.links),
                t and tuple((s.cluster, s.workload and s.workload.output_tokens) for s in t.sites))

    return patched is not None and fields(patched) == fields(loaded_spec)
