"""Library API of `import-deployment`: deployment files (``deploy.read``) into a scenario, `optimize`
on it, and the deployed configuration evaluated on the same service laws (``api.degrade.evaluate``)."""

from __future__ import annotations

import copy
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

from prfaas_plan.api.degrade import evaluate
from prfaas_plan.api.optimize import optimize
from prfaas_plan.api.topology import site_models
from prfaas_plan.core.throughput import Method
from prfaas_plan.deploy.fields import choice, fail, mapping
from prfaas_plan.deploy.kube import dns_name
from prfaas_plan.deploy.model import DECODE, LOCAL_PREFILL, PREFILL_SERVICE, ReadDeployment
from prfaas_plan.deploy.read import read_folder
from prfaas_plan.errors import SpecError
from prfaas_plan.io.scenario import load_scenario, scenario_mapping
from prfaas_plan.specs.degrade import Replanned, SiteConfig
from prfaas_plan.specs.deploy import ImportResult, SitePlan
from prfaas_plan.specs.results import PlanResult


def _sites_of(data: dict[Any, Any], source: str, prefix: str) -> tuple[str, list[str]]:
    """The scenario's prefill site and PD sites, as its form names them (``prefix``: where ``data`` sits in
    ``source``, to name a field)."""
    if data.get("sites") is None:  # the two-cluster form
        clusters = mapping(data.get("clusters"), source, f"{prefix}clusters", null="clusters" not in data)
        for name in ("prfaas", "local"):
            mapping(clusters.get(name), source, f"{prefix}clusters.{name}", null=name not in clusters)
        return "prfaas", ["local"]
    roles = {}
    for name, site in mapping(data["sites"], source, f"{prefix}sites").items():
        if not isinstance(name, str) or not name.strip():
            raise fail("expected site names that are non-empty strings", name, source, f"{prefix}sites")
        at = f"{prefix}sites.{name}"
        roles[name] = choice(mapping(site, source, at, null=False).get("role"), ("prfaas", "pd"), source,
                             f"{at}.role", null=False)
    prefill = [n for n, r in roles.items() if r == "prfaas"]
    pd = [n for n, r in roles.items() if r == "pd"]
    if len(prefill) != 1 or not pd:
        raise SpecError(f"expected one site of role prfaas and at least one of role pd, got {len(prefill)} and "
                        f"{len(pd)}", source=source, field=f"{prefix}sites")
    return prefill[0], pd


def _fleet(rd: ReadDeployment, prefill: str, sites: list[str], folder: Path) -> tuple[dict[str, list[Any]], int]:
    """Instances per (site, role) and N_prfaas; a pool with no site or an unknown one goes to the only PD site."""
    by_dns = {dns_name(s): s for s in sites}
    fleet: dict[str, list[Any]] = defaultdict(list)
    n_prfaas = 0
    for p in rd.pools:
        if p.role == PREFILL_SERVICE and (p.site in (None, prefill) or p.site not in sites):
            n_prfaas += p.instances
            fleet[prefill].append(p)
            continue
        site = p.site if p.site in sites else by_dns.get(dns_name(p.site or ""), sites[0] if len(sites) == 1 else None)
        if site is None:
            raise SpecError(f"a {p.role} pool of site {p.site!r}, which the scenario does not have "
                            f"(its PD sites: {', '.join(sites)})", source=p.source, field=p.where.get("site", "site"))
        fleet[site].append(p)
    if not fleet[prefill]:
        raise SpecError(f"no prefill-service pool in the files: the prefill site {prefill} needs instances",
                        source=str(folder))
    for s in sites:
        if not any(p.role == DECODE for p in fleet[s]):
            raise SpecError(f"site {s} has no decode pool in the files: a PD site needs decode instances",
                            source=str(folder), field=s)
    return fleet, n_prfaas


Origin = dict[str, tuple[str, str | None]]  # a scenario field the files set -> (file, key path) it came from


def _whence(pools: list[Any], key: str, site: str, folder: Path) -> tuple[str, str | None]:
    """Where the files say a site's ``key``: the first pool's file and key path; for the instances, the
    largest pool's (and how many more add to it)."""
    given = sorted((p for p in pools if key in p.where), key=lambda p: -p.instances if key == "instances" else 0)
    if not given:
        return str(folder), f"site {site}"
    more = f" (and {len(given) - 1} more pools of site {site})" if key == "instances" and len(given) > 1 else ""
    return given[0].source, given[0].where[key] + more


def _same(pools: list[Any], key: str, site: str) -> Any:
    """The one value of ``key`` (gpus, hardware) the pools of a site that say it agree on, or None; a pool
    that differs from the most of them is named."""
    given = [p for p in pools if getattr(p, key) is not None]
    if not given:
        return None
    common = Counter(getattr(p, key) for p in given).most_common(1)[0][0]
    for p in given:
        if getattr(p, key) != common:
            other = next(q for q in given if getattr(q, key) == common)
            raise SpecError(f"the pools of site {site} differ in {key} (a site has one kind of instance): "
                            f"{getattr(p, key)!r} here, {common!r} at {other.where.get(key)} of "
                            f"{Path(other.source).name}", source=p.source, field=p.where.get(key))
    return common


def _set(entry: dict[str, Any], pools: list[Any], instances: int, at: str, origin: Origin,
         place: tuple[str, Path]) -> None:
    entry["instances"] = instances
    origin[f"{at}.instances"] = _whence(pools, "instances", *place)
    for key, name in (("gpus", "gpus_per_instance"), ("hardware", "hardware")):
        value = _same(pools, key, place[0])
        if value is not None:
            entry[name] = value
            origin[f"{at}.{name}"] = _whence(pools, key, *place)


def _patched(data: dict[str, Any], fleet: dict[str, list[Any]], n_prfaas: int, prefill: str,
             sites: list[str], folder: Path) -> tuple[dict[str, Any], Origin]:
    """The scenario with the files' fleet, and where each value set came from."""
    out = copy.deepcopy(data)
    origin: Origin = {}
    if out.get("sites") is not None:
        _set(out["sites"][prefill], fleet[prefill], n_prfaas, f"sites.{prefill}", origin, (prefill, folder))
        for s in sites:
            _set(out["sites"][s], fleet[s], sum(p.instances for p in fleet[s]), f"sites.{s}", origin, (s, folder))
    else:
        clusters = out.setdefault("clusters", {})
        _set(clusters.setdefault("prfaas", {}), fleet[prefill], n_prfaas, "clusters.prfaas", origin,
             (prefill, folder))
        _set(clusters.setdefault("local", {}), fleet[sites[0]], sum(p.instances for p in fleet[sites[0]]),
             "clusters.local", origin, (sites[0], folder))
    name = out.get("name", "scenario")
    if isinstance(name, str):  # anything else is left for the scenario's validation to name
        out["name"] = f"{name}-deployed"
    return out, origin


def _deployed(rd: ReadDeployment, fleet: dict[str, list[Any]], sites: list[str], folder: Path) -> list[SitePlan]:
    """Each site's threshold (the router's, or the plan block's where the router cannot hold one) and split."""
    planned = (rd.plan or {}).get("sites", {})  # checked by deploy.read
    out = []
    for s in sites:
        router = rd.thresholds.get(s, rd.thresholds.get(dns_name(s)))
        if router is None and len(sites) == 1 and len(rd.thresholds) == 1:
            router = next(iter(rd.thresholds.values()))
        if router is not None:
            t = None if router == 0 else float(router - 1)  # offloads l >= n, i.e. l > n - 1
        elif s in planned:
            t = planned[s]["threshold_tokens"]
        elif rd.plan is not None:
            raise SpecError(f"no router threshold for site {s} in the files and the plan block has none for it",
                            source=rd.plan_source, field=f"sites.{s}")
        else:
            raise SpecError(f"no router threshold for site {s} in the files and no plan block: give the EPP "
                            "configuration (prefix-based-pd-decider) or the files deploy wrote", source=str(folder))
        n_p = sum(p.instances for p in fleet[s] if p.role == LOCAL_PREFILL)
        n_d = sum(p.instances for p in fleet[s] if p.role == DECODE)
        if not any(p.role == LOCAL_PREFILL for p in fleet[s]) and s in planned:
            n_p, n_d = planned[s]["n_p"], planned[s]["n_d"]  # a target that folds the split into decode pods
        out.append(SitePlan(site=s, threshold_tokens=t, n_p=n_p, n_d=n_d))
    return out


def _load(scenario: dict[str, Any], header: str, output: Path | None, catalog: Any, origin: Origin,
          source: str, prefix: str) -> Any:
    """The imported scenario, loaded; an error is named where its value came from: the files (the fleet) or
    the scenario they were read with (``source``, its fields under ``prefix``), never the copy loaded."""
    text = yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = output if output is not None else Path(tmp) / "imported.yaml"
        path.write_text((header if output is not None else "") + text, encoding="utf-8")
        try:
            return load_scenario(str(path), catalog)
        except SpecError as exc:
            if exc.source != str(path):
                raise
            if exc.field in origin:
                raise exc.at(source=origin[exc.field][0], field=origin[exc.field][1]) from None
            raise exc.at(source=source, field=prefix + (exc.field or "")) from None


def _best(result: PlanResult) -> tuple[list[SitePlan], int, float, str]:
    best = result.head.best
    return ([SitePlan(site=sp.site, threshold_tokens=sp.threshold_tokens, n_p=sp.n_p, n_d=sp.n_d)
             for sp in best.sites], round(best.n_prfaas), best.lambda_max_rps, best.binding)


def import_deployment(folder: Path, catalog: Any, *, base: str | None = None,
                      output: Path | None = None) -> ImportResult:
    rd = read_folder(folder)
    notes = []
    if base is not None:
        where, placed = scenario_mapping(base, catalog)
        data, source, prefix = placed.data, str(where), ""
        context = "--scenario " + base
        notes.append(f"the model, link and workload are {base}'s (--scenario), not the files'")
    elif rd.plan is not None:
        data, context = rd.plan["scenario_data"], "the plan block"
        source, prefix = rd.plan_source or str(folder), "scenario_data."
    else:
        raise SpecError("the files carry no plan block (deploy did not write them): give --scenario BASE for the "
                        "model, link and workload they do not say", source=str(folder), field="--scenario")
    prefill, sites = _sites_of(data, source, prefix)
    fleet, n_prfaas = _fleet(rd, prefill, sites, folder)
    scenario, origin = _patched(data, fleet, n_prfaas, prefill, sites, folder)
    header = f"# written by `prfaas-plan import-deployment {folder}` ({rd.target} files; context: {context})\n"
    sc = _load(scenario, header, output, catalog, origin, source, prefix)
    result = optimize(sc, ttft_slo=False).result
    deployed = _deployed(rd, fleet, sites, folder)
    plan = Replanned(lambda_max_rps=0.0, binding="", n_prfaas=n_prfaas,
                     sites={d.site: SiteConfig(threshold_tokens=d.threshold_tokens, n_p=d.n_p, n_d=d.n_d,
                                               p_offload=0.0) for d in deployed})
    method = Method(sc.search.method)
    point = evaluate(site_models(sc)[0], plan, method)
    best, best_n, best_lam, best_bind = _best(result)
    return ImportResult(scenario=sc.name, scenario_file=str(output) if output else None, target=rd.target,
                        context_from=context, n_prfaas=n_prfaas, deployed=tuple(deployed),
                        deployed_lambda_rps=point.lambda_max_rps, deployed_binding=point.binding,
                        best=tuple(best), best_n_prfaas=best_n, best_lambda_rps=best_lam, best_binding=best_bind,
                        method=sc.search.method, notes=tuple(notes))
