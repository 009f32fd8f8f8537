"""Library API of `import-deployment`: deployment files (``deploy.read``) into a scenario, `optimize`
on it, and the deployed configuration evaluated on the same service laws (``api.degrade.evaluate``)."""

from __future__ import annotations

import copy
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from prfaas_plan.api.degrade import evaluate
from prfaas_plan.api.optimize import optimize
from prfaas_plan.api.topology import site_models
from prfaas_plan.core.throughput import Method
from prfaas_plan.deploy.kube import dns_name
from prfaas_plan.deploy.model import DECODE, LOCAL_PREFILL, PREFILL_SERVICE, ReadDeployment
from prfaas_plan.deploy.read import read_folder
from prfaas_plan.errors import SpecError
from prfaas_plan.io.scenario import load_scenario, scenario_mapping
from prfaas_plan.specs.degrade import Replanned, SiteConfig
from prfaas_plan.specs.deploy import ImportResult, SitePlan
from prfaas_plan.specs.results import OperatingPoint


def _sites_of(data: dict[str, Any]) -> tuple[str, list[str]]:
    """The scenario's prefill site and PD sites, as its form names them."""
    if "sites" in data and isinstance(data["sites"], dict):
        pre = [n for n, s in data["sites"].items() if isinstance(s, dict) and s.get("role") == "prfaas"]
        return (pre[0] if pre else "prfaas"), [n for n, s in data["sites"].items()
                                                if isinstance(s, dict) and s.get("role") == "pd"]
    return "prfaas", ["local"]


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
                            f"(its PD sites: {', '.join(sites)})", source=p.source, field="site")
        fleet[site].append(p)
    for s in sites:
        if not any(p.role == DECODE for p in fleet[s]):
            raise SpecError(f"site {s} has no decode pool in the files: a PD site needs decode instances",
                            source=str(folder), field=s)
    return fleet, n_prfaas


def _set(entry: dict[str, Any], pools: list[Any], instances: int) -> None:
    entry["instances"] = instances
    gpus = {p.gpus for p in pools if p.gpus}
    if len(gpus) == 1:
        entry["gpus_per_instance"] = gpus.pop()
    hardware = {p.hardware for p in pools if p.hardware}
    if len(hardware) == 1:
        entry["hardware"] = hardware.pop()


def _patched(data: dict[str, Any], fleet: dict[str, list[Any]], n_prfaas: int, prefill: str,
             sites: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    if "sites" in out:
        _set(out["sites"][prefill], fleet[prefill], n_prfaas)
        for s in sites:
            _set(out["sites"][s], fleet[s], sum(p.instances for p in fleet[s]))
    else:
        clusters = out.setdefault("clusters", {})
        _set(clusters.setdefault("prfaas", {}), fleet[prefill], n_prfaas)
        _set(clusters.setdefault("local", {}), fleet[sites[0]], sum(p.instances for p in fleet[sites[0]]))
    name = out.get("name", "scenario")
    if isinstance(name, str):  # anything else is left for the scenario's validation to name
        out["name"] = f"{name}-deployed"
    return out


def _deployed(rd: ReadDeployment, fleet: dict[str, list[Any]], sites: list[str]) -> list[SitePlan]:
    """Each site's threshold (the router's, or the plan block's where the router cannot hold one) and split."""
    planned = (rd.plan or {}).get("sites", {})
    out = []
    for s in sites:
        router = rd.thresholds.get(s, rd.thresholds.get(dns_name(s)))
        if router is None and len(sites) == 1 and len(rd.thresholds) == 1:
            router = next(iter(rd.thresholds.values()))
        if router is not None:
            t = None if router == 0 else float(router - 1)  # offloads l >= n, i.e. l > n - 1
        elif s in planned:
            t = planned[s].get("threshold_tokens")
        else:
            raise SpecError(f"no router threshold for site {s} in the files and no plan block: give the EPP "
                            "configuration (prefix-based-pd-decider) or the files deploy wrote", field=s)
        n_p = sum(p.instances for p in fleet[s] if p.role == LOCAL_PREFILL)
        n_d = sum(p.instances for p in fleet[s] if p.role == DECODE)
        if not any(p.role == LOCAL_PREFILL for p in fleet[s]) and s in planned:
            n_p, n_d = planned[s]["n_p"], planned[s]["n_d"]  # a target that folds the split into decode pods
        out.append(SitePlan(site=s, threshold_tokens=t, n_p=n_p, n_d=n_d))
    return out


def _best(result: Any, sites: list[str]) -> tuple[list[SitePlan], int, float, str]:
    best = result.head.best
    if isinstance(best, OperatingPoint):
        return ([SitePlan(site=sites[0], threshold_tokens=best.threshold_tokens, n_p=best.n_p, n_d=best.n_d)],
                best.n_prfaas, best.lambda_max_rps, str(best.binding))
    return ([SitePlan(site=sp.site, threshold_tokens=sp.threshold_tokens, n_p=sp.n_p, n_d=sp.n_d)
             for sp in best.sites], round(best.n_prfaas), best.lambda_max_rps, best.binding)


def import_deployment(folder: Path, catalog: Any, *, base: str | None = None,
                      output: Path | None = None) -> ImportResult:
    rd = read_folder(folder)
    notes = []
    if base is not None:
        data = scenario_mapping(base, catalog)[1].data
        context = "--scenario " + base
        notes.append(f"the model, link and workload are {base}'s (--scenario), not the files'")
    elif rd.plan is not None:
        data, context = rd.plan["scenario_data"], "the plan block"
    else:
        raise SpecError("the files carry no plan block (deploy did not write them): give --scenario BASE for the "
                        "model, link and workload they do not say", field="--scenario")
    prefill, sites = _sites_of(data)
    fleet, n_prfaas = _fleet(rd, prefill, sites, folder)
    scenario = _patched(data, fleet, n_prfaas, prefill, sites)
    text = yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True)
    header = f"# written by `prfaas-plan import-deployment {folder}` ({rd.target} files; context: {context})\n"
    if output is not None:
        output.write_text(header + text, encoding="utf-8")
        sc = load_scenario(str(output), catalog)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "imported.yaml"
            path.write_text(text, encoding="utf-8")
            try:
                sc = load_scenario(str(path), catalog)
            except SpecError as exc:  # the temporary file means nothing to the user: name what it came from
                if exc.source != str(path):
                    raise
                origin = rd.plan_source if base is None else base
                raise exc.at(source=origin or str(folder),
                             field=("scenario_data." if base is None else "") + (exc.field or "")) from None
    result = optimize(sc, ttft_slo=False).result
    deployed = _deployed(rd, fleet, sites)
    plan = Replanned(lambda_max_rps=0.0, binding="", n_prfaas=n_prfaas,
                     sites={d.site: SiteConfig(threshold_tokens=d.threshold_tokens, n_p=d.n_p, n_d=d.n_d,
                                               p_offload=0.0) for d in deployed})
    method = Method(sc.search.method)
    point = evaluate(site_models(sc)[0], plan, method)
    best, best_n, best_lam, best_bind = _best(result, sites)
    return ImportResult(scenario=sc.name, scenario_file=str(output) if output else None, target=rd.target,
                        context_from=context, n_prfaas=n_prfaas, deployed=tuple(deployed),
                        deployed_lambda_rps=point.lambda_max_rps, deployed_binding=point.binding,
                        best=tuple(best), best_n_prfaas=best_n, best_lambda_rps=best_lam, best_binding=best_bind,
                        method=sc.search.method, notes=tuple(notes))
