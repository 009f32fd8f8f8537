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

from prfaas_plan.deploy.fields import MAX_GPUS, MAX_TOKENS, choice, count, fail, listing, mapping, text, tokens
from prfaas_plan.deploy.model import DECODE, LABEL, PREFILL_SERVICE, ROLES, ReadDeployment, ReadPool
from prfaas_plan.deploy.provenance import PLAN_KEY
from prfaas_plan.errors import SpecError

PLAN_FIELD = "x-prfaas-plan"
DECIDER = "prefix-based-pd-decider"
SITE, ROLE, HARDWARE = f"{LABEL}/site", f"{LABEL}/role", f"{LABEL}/hardware"
OTHER_ROLES = ("router-long", "router-short", "frontend")  # what deploy labels besides pools
_BY_NAME = {"prefill": PREFILL_SERVICE, "decode": DECODE}  # llm-d's role label, Dynamo's subComponentType
TP_FLAGS = ("--tensor-parallel-size", "-tp", "--tp-size", "--tp")
Noted = dict[str, tuple[str, str]]  # our key -> (value, the key path it was read at)


def _docs(path: Path) -> Iterator[Any]:
    try:
        yield from yaml.safe_load_all(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError(f"not YAML: {str(exc).splitlines()[0]}", source=str(path)) from None


def _ours(notes: dict[Any, Any], path: Path, field: str) -> Noted:
    """Our annotations or labels of a mapping (site, role, hardware): non-empty strings, a role we write."""
    out = {}
    for key in (SITE, ROLE, HARDWARE):
        value = text(notes.get(key), path, f"{field}.{key}")
        if value is not None:
            out[key] = (value, f"{field}.{key}")
    if ROLE in out:
        choice(out[ROLE][0], ROLES + OTHER_ROLES, path, out[ROLE][1])
    return out


def _plan(value: Any, path: Path, field: str) -> dict[str, Any]:
    """Our plan block (JSON text or a mapping): the scenario, and each site's threshold and split, checked
    (a field inside it is named from the block, e.g. ``sites.local.n_p`` or ``scenario_data.clusters``)."""
    try:
        plan = json.loads(value) if isinstance(value, str) else value
    except ValueError as exc:
        raise SpecError(f"the plan block is not JSON ({getattr(exc, 'msg', exc)})", source=str(path),
                        field=field) from None
    if not isinstance(plan, dict):
        raise fail("expected the plan block, a mapping", plan, path, field)
    mapping(plan.get("scenario_data"), path, "scenario_data", null=False)
    sites = {}
    for s, entry in mapping(plan.get("sites"), path, "sites").items():
        at = f"sites.{s}"
        entry = mapping(entry, path, at, null=False)
        sites[s] = {"threshold_tokens": tokens(entry.get("threshold_tokens"), path, f"{at}.threshold_tokens"),
                    "n_p": count(entry.get("n_p"), path, f"{at}.n_p"),
                    "n_d": count(entry.get("n_d"), path, f"{at}.n_d")}
    return {**plan, "sites": sites}


def _flag(args: list[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _args(value: Any, path: Path, field: str) -> list[str]:
    """A command line: a string (split as a shell would) or a list of strings (or numbers)."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise fail(f"expected a command line ({str(exc).lower()})", value, path, field) from None
    for j, v in enumerate(listing(value, path, field)):
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise fail("expected a string", v, path, f"{field}[{j}]")
    return [str(v) for v in value]


def _role_of_args(args: list[str], path: Path, field: str) -> str | None:
    """A server's role from its own flags: SGLang's --disaggregation-mode, vLLM's kv_role, Dynamo's worker flags."""
    mode = _flag(args, "--disaggregation-mode")
    if mode in ("prefill", "decode"):
        return PREFILL_SERVICE if mode == "prefill" else DECODE
    if "--is-prefill-worker" in args or "--is-decode-worker" in args:
        return PREFILL_SERVICE if "--is-prefill-worker" in args else DECODE
    kv = _flag(args, "--kv-transfer-config")
    if kv is None:
        return None
    try:
        config = json.loads(kv)
    except ValueError:
        raise fail("expected JSON after --kv-transfer-config", kv, path, field) from None
    role = text(config.get("kv_role"), path, f"{field} (--kv-transfer-config kv_role)") \
        if isinstance(config, dict) else None
    return {"kv_producer": PREFILL_SERVICE, "kv_consumer": DECODE}.get(role or "")


def _gpus(args: list[str], path: Path, field: str) -> tuple[int | None, str]:
    """GPUs of a server from its tensor parallel flag, and where that was read."""
    for flag in TP_FLAGS:
        tp = _flag(args, flag)
        if tp is not None:
            return count(tp, path, f"{field} ({flag})", what="GPUs", least=1, most=MAX_GPUS), f"{field} ({flag})"
    return None, ""


def _pool(path: Path, role: str, notes: Noted, site: tuple[str | None, str | None], instances: tuple[int, str],
          gpus: tuple[int | None, str]) -> ReadPool:
    site = notes.get(SITE, site)
    hardware = notes.get(HARDWARE, (None, None))
    where = {"site": site[1], "instances": instances[1], "gpus": gpus[1], "hardware": hardware[1]}
    return ReadPool(site=site[0], role=role, instances=instances[0], gpus=gpus[0], hardware=hardware[0],
                    source=str(path), where={k: v for k, v in where.items() if v})


def _k8s_deployment(doc: dict[str, Any], path: Path, i: int) -> ReadPool | None:
    at = f"documents[{i}]"
    meta = mapping(doc.get("metadata"), path, f"{at}.metadata")
    spec = mapping(doc.get("spec"), path, f"{at}.spec")
    template = mapping(spec.get("template"), path, f"{at}.spec.template")
    tmeta = mapping(template.get("metadata"), path, f"{at}.spec.template.metadata")
    notes = {**_ours(mapping(meta.get("annotations"), path, f"{at}.metadata.annotations"), path,
                     f"{at}.metadata.annotations"),
             **_ours(mapping(tmeta.get("annotations"), path, f"{at}.spec.template.metadata.annotations"), path,
                     f"{at}.spec.template.metadata.annotations")}
    labels = mapping(tmeta.get("labels"), path, f"{at}.spec.template.metadata.labels")
    llmd = text(labels.get("llm-d.ai/role"), path, f"{at}.spec.template.metadata.labels.llm-d.ai/role")
    args: list[str] = []
    gpus: tuple[int | None, str] = (None, "")
    tp: tuple[int | None, str] = (None, "")
    at_c = f"{at}.spec.template.spec.containers"
    for j, c in enumerate(listing(mapping(template.get("spec"), path, f"{at}.spec.template.spec").get("containers"),
                                  path, at_c)):
        c = mapping(c, path, f"{at_c}[{j}]")
        own = _args(c.get("command"), path, f"{at_c}[{j}].command") + _args(c.get("args"), path, f"{at_c}[{j}].args")
        args += own
        limits = mapping(mapping(c.get("resources"), path, f"{at_c}[{j}].resources").get("limits"), path,
                         f"{at_c}[{j}].resources.limits")
        if gpus[0] is None and limits.get("nvidia.com/gpu") is not None:
            where = f"{at_c}[{j}].resources.limits.nvidia.com/gpu"
            gpus = count(limits["nvidia.com/gpu"], path, where, what="GPUs", least=1, most=MAX_GPUS), where
        if tp[0] is None:
            tp = _gpus(own, path, f"{at_c}[{j}].args")
    role = notes.get(ROLE, (None,))[0] or _BY_NAME.get(llmd or "") or _role_of_args(args, path, at_c)
    if role not in ROLES:
        return None
    return _pool(path, role, notes, (None, None),
                 (count(spec.get("replicas"), path, f"{at}.spec.replicas", default=1), f"{at}.spec.replicas"),
                 gpus if gpus[0] is not None else tp)


def _epp_threshold(config: Any, path: Path, field: str) -> int | None:
    """The prefix-based-pd-decider's nonCachedTokens of an EndpointPickerConfig (``field``: where it is)."""
    cfg = mapping(config, path, field)
    at = f"{field}.plugins"
    for j, p in enumerate(listing(cfg.get("plugins"), path, at)):
        p = mapping(p, path, f"{at}[{j}]")
        if text(p.get("type"), path, f"{at}[{j}].type") == DECIDER:
            params = mapping(p.get("parameters"), path, f"{at}[{j}].parameters")
            return count(params.get("nonCachedTokens"), path, f"{at}[{j}].parameters.nonCachedTokens", what="tokens",
                         most=MAX_TOKENS, default=0)
    return None


def _values_threshold(doc: dict[str, Any], path: Path) -> tuple[str | None, int | None]:
    """The inferencepool chart's values: the pool's site (our label) and its EPP's threshold."""
    ext = mapping(doc.get("inferenceExtension"), path, "inferenceExtension")
    configs = mapping(ext.get("pluginsCustomConfig"), path, "inferenceExtension.pluginsCustomConfig")
    name = text(ext.get("pluginsConfigFile"), path, "inferenceExtension.pluginsConfigFile")
    field = f"inferenceExtension.pluginsCustomConfig.{name}"
    chosen = configs.get(name)
    try:
        config = yaml.safe_load(chosen) if isinstance(chosen, str) else chosen
    except yaml.YAMLError:
        raise SpecError("the EPP configuration is not YAML", source=str(path), field=field) from None
    at = "inferencePool.modelServers"
    labels = mapping(mapping(mapping(doc.get("inferencePool"), path, "inferencePool").get("modelServers"), path, at)
                     .get("matchLabels"), path, f"{at}.matchLabels")
    keys = [k for k in labels if isinstance(k, str) and k.startswith(f"{LABEL}/pool-")]
    site = keys[0].removeprefix(f"{LABEL}/pool-") or None if keys else None
    return site, (_epp_threshold(config, path, field) if config is not None else None)


def _dynamo(doc: dict[str, Any], path: Path) -> tuple[list[ReadPool], dict[str, Any] | None]:
    meta = mapping(doc.get("metadata"), path, "metadata")
    notes = mapping(meta.get("annotations"), path, "metadata.annotations")
    plan = _plan(notes[PLAN_KEY], path, f"metadata.annotations.{PLAN_KEY}") if PLAN_KEY in notes else None
    graph = _ours(notes, path, "metadata.annotations")
    site = graph.get(SITE, (text(meta.get("name"), path, "metadata.name"), "metadata.name"))
    pools = []
    services = mapping(mapping(doc.get("spec"), path, "spec").get("services"), path, "spec.services")
    for name, svc in services.items():
        at = f"spec.services.{name}"
        svc = mapping(svc, path, at)
        snotes = _ours(mapping(svc.get("annotations"), path, f"{at}.annotations"), path, f"{at}.annotations")
        main = mapping(mapping(svc.get("extraPodSpec"), path, f"{at}.extraPodSpec").get("mainContainer"), path,
                       f"{at}.extraPodSpec.mainContainer")
        args = _args(main.get("args"), path, f"{at}.extraPodSpec.mainContainer.args")
        sub = text(svc.get("subComponentType"), path, f"{at}.subComponentType")
        role = snotes.get(ROLE, (None,))[0] or _BY_NAME.get(sub or "") or _role_of_args(
            args, path, f"{at}.extraPodSpec.mainContainer.args")
        if role not in ROLES:
            continue
        limits = mapping(mapping(svc.get("resources"), path, f"{at}.resources").get("limits"), path,
                         f"{at}.resources.limits")
        gpus = ((count(limits["gpu"], path, f"{at}.resources.limits.gpu", what="GPUs", least=1, most=MAX_GPUS),
                 f"{at}.resources.limits.gpu") if limits.get("gpu") is not None
                else _gpus(args, path, f"{at}.extraPodSpec.mainContainer.args"))
        pools.append(_pool(path, role, snotes, site, (count(svc.get("replicas"), path, f"{at}.replicas", default=1),
                                                      f"{at}.replicas"), gpus))
    return pools, plan


def _labels(value: Any, path: Path, field: str) -> dict[Any, Any]:
    """A compose service's labels: a mapping, or a list of KEY=VALUE strings."""
    if not isinstance(value, list):
        return mapping(value, path, field)
    out = {}
    for j, item in enumerate(value):
        if not isinstance(item, str):
            raise fail("expected a KEY=VALUE string", item, path, f"{field}[{j}]")
        key, _, val = item.partition("=")
        out[key] = val
    return out


def _devices_gpus(deploy: dict[str, Any], path: Path, at: str) -> tuple[int | None, str]:
    """GPUs a compose service reserves (deploy.resources.reservations.devices[].count); "all" says no number."""
    resources = mapping(deploy.get("resources"), path, f"{at}.deploy.resources")
    at = f"{at}.deploy.resources.reservations"
    reservations = mapping(resources.get("reservations"), path, at)
    for j, device in enumerate(listing(reservations.get("devices"), path, f"{at}.devices")):
        n = mapping(device, path, f"{at}.devices[{j}]").get("count")
        if n is not None and n != "all":
            return count(n, path, f"{at}.devices[{j}].count", what="GPUs", least=1, most=MAX_GPUS), \
                f"{at}.devices[{j}].count"
    return None, ""


def _compose(doc: dict[str, Any], path: Path) -> tuple[list[ReadPool], dict[str, Any] | None]:
    plan = _plan(doc[PLAN_FIELD], path, PLAN_FIELD) if PLAN_FIELD in doc else None
    name = text(doc.get("name"), path, "name")
    site = (name, "name") if name is not None else (path.name.split(".")[0], None)
    pools = []
    for key, svc in mapping(doc.get("services"), path, "services").items():
        at = f"services.{key}"
        svc = mapping(svc, path, at)
        labels = _ours(_labels(svc.get("labels"), path, f"{at}.labels"), path, f"{at}.labels")
        args = _args(svc.get("command"), path, f"{at}.command")
        role = labels.get(ROLE, (None,))[0] or _role_of_args(args, path, f"{at}.command")
        if role not in ROLES:
            continue
        deploy = mapping(svc.get("deploy"), path, f"{at}.deploy")
        gpus = _devices_gpus(deploy, path, at)
        pools.append(_pool(path, role, labels, site, (count(deploy.get("replicas"), path, f"{at}.deploy.replicas",
                                                            default=1), f"{at}.deploy.replicas"),
                           gpus if gpus[0] is not None else _gpus(args, path, f"{at}.command")))
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
            at = f"documents[{i}]"
            kind = text(doc.get("kind"), path, f"{at}.kind", null="apiVersion" not in doc)
            found, block = [], None
            if kind == "Deployment":
                found = [p for p in [_k8s_deployment(doc, path, i)] if p is not None]
                kinds.add("llm-d")
            elif kind == "ConfigMap" and "plan.json" in mapping(doc.get("data"), path, f"{at}.data"):
                block = _plan(doc["data"]["plan.json"], path, f"{at}.data.plan.json")
            elif kind == "DynamoGraphDeployment":
                found, block = _dynamo(doc, path)
                kinds.add("dynamo")
            elif kind == "EndpointPickerConfig":
                t = _epp_threshold(doc, path, at)
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
