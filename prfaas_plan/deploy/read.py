"""Deployment files back to pools and thresholds: ours (their annotations and plan block) or a
user's, read within what each format says (Kubernetes Deployments with llm-d's role label, an
EndpointPickerConfig or the inferencepool chart's values, DynamoGraphDeployments, compose files of
SGLang or vLLM servers). Bad input is one SpecError naming the file, field and value."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from prfaas_plan.deploy.model import DECODE, LABEL, PREFILL_SERVICE, ReadDeployment, ReadPool
from prfaas_plan.deploy.provenance import PLAN_KEY
from prfaas_plan.errors import SpecError, kind_of

PLAN_FIELD = "x-prfaas-plan"
DECIDER = "prefix-based-pd-decider"


def _docs(path: Path) -> Iterator[Any]:
    try:
        yield from yaml.safe_load_all(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError(f"not YAML: {str(exc).splitlines()[0]}", source=str(path)) from None


def _count(value: Any, path: Path, field: str, *, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 100_000:
        raise SpecError(f"expected a whole number of instances or GPUs, got {value!r}", source=str(path), field=field)
    return value


def _map(value: Any, path: Path, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"expected a mapping, got {kind_of(value)}", source=str(path), field=field)
    return value


def _plan(text: Any, path: Path, field: str) -> dict[str, Any]:
    try:
        plan = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise SpecError(f"the plan block is not JSON ({exc.msg})", source=str(path), field=field) from None
    if not isinstance(plan, dict) or not isinstance(plan.get("scenario_data"), dict):
        raise SpecError("the plan block holds no scenario_data mapping", source=str(path), field=field)
    return plan


def _flag(args: list[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _args(value: Any, path: Path, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return shlex.split(value)
    if not isinstance(value, list):
        raise SpecError(f"expected a list of arguments, got {kind_of(value)}", source=str(path), field=field)
    return [str(v) for v in value]


def _role_of_args(args: list[str]) -> str | None:
    """A server's role from its own flags: SGLang's --disaggregation-mode, vLLM's kv_role, Dynamo's worker flags."""
    mode = _flag(args, "--disaggregation-mode")
    if mode in ("prefill", "decode"):
        return PREFILL_SERVICE if mode == "prefill" else DECODE
    if "--is-prefill-worker" in args or "--is-decode-worker" in args:
        return PREFILL_SERVICE if "--is-prefill-worker" in args else DECODE
    kv = _flag(args, "--kv-transfer-config")
    if kv is not None:
        try:
            role = json.loads(kv).get("kv_role")
        except (json.JSONDecodeError, AttributeError):
            return None
        return {"kv_producer": PREFILL_SERVICE, "kv_consumer": DECODE}.get(role)
    return None


def _gpus(args: list[str]) -> int | None:
    tp = _flag(args, "--tensor-parallel-size", "-tp", "--tp-size", "--tp")
    return int(tp) if tp is not None and tp.isdigit() else None


def _k8s_deployment(doc: dict[str, Any], path: Path, i: int) -> ReadPool | None:
    at = f"documents[{i}]"
    meta = _map(doc.get("metadata"), path, f"{at}.metadata")
    spec = _map(doc.get("spec"), path, f"{at}.spec")
    template = _map(spec.get("template"), path, f"{at}.spec.template")
    tmeta = _map(template.get("metadata"), path, f"{at}.spec.template.metadata")
    notes = {**_map(meta.get("annotations"), path, f"{at}.metadata.annotations"),
             **_map(tmeta.get("annotations"), path, f"{at}.spec.template.metadata.annotations")}
    labels = _map(tmeta.get("labels"), path, f"{at}.spec.template.metadata.labels")
    containers = _map(template.get("spec"), path, f"{at}.spec.template.spec").get("containers") or []
    args: list[str] = []
    gpus = None
    for c in containers if isinstance(containers, list) else []:
        c = _map(c, path, f"{at}.spec.template.spec.containers")
        args += _args(c.get("command"), path, f"{at}.containers.command") + _args(c.get("args"), path,
                                                                                     f"{at}.containers.args")
        limit = _map(_map(c.get("resources"), path, f"{at}.containers.resources").get("limits"), path,
                     f"{at}.containers.resources.limits").get("nvidia.com/gpu")
        gpus = gpus or (_count(limit, path, f"{at}.containers.resources.limits") if limit is not None else None)
    role = notes.get(f"{LABEL}/role") or {"prefill": PREFILL_SERVICE, "decode": DECODE}.get(
        str(labels.get("llm-d.ai/role"))) or _role_of_args(args)
    if role is None:
        return None
    return ReadPool(site=notes.get(f"{LABEL}/site"), role=role,
                    instances=_count(spec.get("replicas"), path, f"{at}.spec.replicas", default=1),
                    gpus=gpus or _gpus(args), hardware=notes.get(f"{LABEL}/hardware"), source=str(path))


def _epp_threshold(config: Any, path: Path, field: str) -> int | None:
    cfg = _map(config, path, field)
    for j, p in enumerate(cfg.get("plugins") or []):
        p = _map(p, path, f"{field}.plugins[{j}]")
        if p.get("type") == DECIDER:
            params = _map(p.get("parameters"), path, f"{field}.plugins[{j}].parameters")
            return _count(params.get("nonCachedTokens", 0), path, f"{field}.plugins[{j}].parameters.nonCachedTokens")
    return None


def _values_threshold(doc: dict[str, Any], path: Path) -> tuple[str | None, int | None]:
    """The inferencepool chart's values: the pool's site (our label) and its EPP's threshold."""
    ext = _map(doc.get("inferenceExtension"), path, "inferenceExtension")
    configs = _map(ext.get("pluginsCustomConfig"), path, "inferenceExtension.pluginsCustomConfig")
    chosen = configs.get(ext.get("pluginsConfigFile"))
    field = f"inferenceExtension.pluginsCustomConfig.{ext.get('pluginsConfigFile')}"
    try:
        config = yaml.safe_load(chosen) if isinstance(chosen, str) else chosen
    except yaml.YAMLError:
        raise SpecError("the EPP configuration is not YAML", source=str(path), field=field) from None
    pool = _map(_map(doc.get("inferencePool"), path, "inferencePool").get("modelServers"), path,
                "inferencePool.modelServers")
    keys = [k for k in _map(pool.get("matchLabels"), path, "inferencePool.modelServers.matchLabels")
            if str(k).startswith(f"{LABEL}/pool-")]
    site = str(keys[0]).removeprefix(f"{LABEL}/pool-") if keys else None
    return site, (_epp_threshold(config, path, field) if config is not None else None)


def _dynamo(doc: dict[str, Any], path: Path) -> tuple[list[ReadPool], dict[str, Any] | None]:
    meta = _map(doc.get("metadata"), path, "metadata")
    notes = _map(meta.get("annotations"), path, "metadata.annotations")
    plan = _plan(notes[PLAN_KEY], path, f"metadata.annotations.{PLAN_KEY}") if PLAN_KEY in notes else None
    site = notes.get(f"{LABEL}/site", meta.get("name"))
    pools = []
    services = _map(_map(doc.get("spec"), path, "spec").get("services"), path, "spec.services")
    for name, svc in services.items():
        at = f"spec.services.{name}"
        svc = _map(svc, path, at)
        snotes = _map(svc.get("annotations"), path, f"{at}.annotations")
        main = _map(_map(svc.get("extraPodSpec"), path, f"{at}.extraPodSpec").get("mainContainer"), path,
                    f"{at}.extraPodSpec.mainContainer")
        args = _args(main.get("args"), path, f"{at}.extraPodSpec.mainContainer.args")
        role = snotes.get(f"{LABEL}/role") or {"prefill": PREFILL_SERVICE, "decode": DECODE}.get(
            str(svc.get("subComponentType"))) or _role_of_args(args)
        if role not in (PREFILL_SERVICE, DECODE, "local-prefill"):
            continue
        gpu = _map(_map(svc.get("resources"), path, f"{at}.resources").get("limits"), path,
                   f"{at}.resources.limits").get("gpu")
        pools.append(ReadPool(site=snotes.get(f"{LABEL}/site", site), role=role,
                              instances=_count(svc.get("replicas"), path, f"{at}.replicas", default=1),
                              gpus=_count(gpu, path, f"{at}.resources.limits.gpu") if gpu is not None else _gpus(args),
                              hardware=snotes.get(f"{LABEL}/hardware"), source=str(path)))
    return pools, plan


def _compose(doc: dict[str, Any], path: Path) -> tuple[list[ReadPool], dict[str, Any] | None]:
    plan = _plan(doc[PLAN_FIELD], path, PLAN_FIELD) if PLAN_FIELD in doc else None
    pools = []
    for name, svc in _map(doc.get("services"), path, "services").items():
        at = f"services.{name}"
        svc = _map(svc, path, at)
        labels = _map(svc.get("labels"), path, f"{at}.labels") if isinstance(svc.get("labels"), dict) else {}
        args = _args(svc.get("command"), path, f"{at}.command")
        role = labels.get(f"{LABEL}/role") or _role_of_args(args)
        if role not in (PREFILL_SERVICE, DECODE, "local-prefill"):
            continue
        deploy = _map(svc.get("deploy"), path, f"{at}.deploy")
        devices = _map(_map(deploy.get("resources"), path, f"{at}.deploy.resources").get("reservations"), path,
                       f"{at}.deploy.resources.reservations").get("devices") or []
        count = next((d.get("count") for d in devices if isinstance(d, dict) and "count" in d), None)
        pools.append(ReadPool(site=labels.get(f"{LABEL}/site", doc.get("name") or path.name.split(".")[0]),
                              role=role, instances=_count(deploy.get("replicas"), path, f"{at}.deploy.replicas",
                                                          default=1),
                              gpus=_count(count, path, f"{at}.deploy...devices.count") if count is not None
                              else _gpus(args), hardware=labels.get(f"{LABEL}/hardware"), source=str(path)))
    return pools, plan


def read_folder(folder: Path) -> ReadDeployment:
    """Every YAML file of ``folder``: its pools, its routers' thresholds, our plan block if present."""
    if not folder.is_dir():
        raise SpecError("is not a folder", source=str(folder))
    pools: list[ReadPool] = []
    thresholds: dict[str, int] = {}
    plan: dict[str, Any] | None = None
    plan_source: str | None = None
    kinds: set[str] = set()
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()):
        for i, doc in enumerate(_docs(path)):
            if not isinstance(doc, dict):
                continue
            kind = doc.get("kind")
            found, block = [], None
            if kind == "Deployment":
                found = [p for p in [_k8s_deployment(doc, path, i)] if p is not None]
                kinds.add("llm-d")
            elif kind == "ConfigMap" and isinstance(doc.get("data"), dict) and "plan.json" in doc["data"]:
                block = _plan(doc["data"]["plan.json"], path, f"documents[{i}].data.plan.json")
            elif kind == "DynamoGraphDeployment":
                found, block = _dynamo(doc, path)
                kinds.add("dynamo")
            elif kind == "EndpointPickerConfig":
                t = _epp_threshold(doc, path, "plugins")
                if t is not None:
                    thresholds[path.name.split(".")[0]] = t
            elif "inferenceExtension" in doc:
                site, t = _values_threshold(doc, path)
                if t is not None:
                    thresholds[site or path.name.split(".")[0]] = t
            elif "services" in doc:
                found, block = _compose(doc, path)
                kinds.add("compose")
            pools += found
            if plan is None and block is not None:
                plan, plan_source = block, str(path)
    if not pools:
        raise SpecError("no deployment files found (Kubernetes Deployments of llm-d, DynamoGraphDeployments, or "
                        "compose files of SGLang or vLLM servers)", source=str(folder))
    target = "/".join(sorted(kinds))
    return ReadDeployment(target=target, pools=tuple(pools), thresholds=thresholds, plan=plan, notes=(),
                          plan_source=plan_source)
