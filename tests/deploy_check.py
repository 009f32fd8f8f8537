"""Generated deployment files against the targets' own definitions (tests/fixtures/deploy/): every key
of a Kubernetes object, a chart's values, a DynamoGraphDeployment and an EPP configuration in the
recorded key trees, every compose file valid under the compose spec's JSON schema, every flag of a
server or router command in the flags recorded from its argument parser. ``problems`` lists what is
not; an empty list is a pass."""

from __future__ import annotations

import json
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

DEFS = Path(__file__).resolve().parent / "fixtures" / "deploy"


@cache
def defs(name: str) -> dict[str, Any]:
    return json.loads((DEFS / name).read_text(encoding="utf-8"))


def keys(obj: Any, tree: Any, at: str) -> list[str]:
    """``obj``'s keys within ``tree`` ({key: subtree}, [item tree], None: a value, "any", "*": free keys)."""
    if tree is None or tree == "any":
        return []
    if isinstance(tree, list):
        return [p for i, item in enumerate(obj if isinstance(obj, list) else [obj]) for p in keys(item, tree[0],
                                                                                                  f"{at}[{i}]")]
    if not isinstance(obj, dict):
        return [f"{at}: expected a mapping"]
    out = []
    for k, v in obj.items():
        if "*" in tree:
            continue
        if k not in tree:
            out.append(f"{at}.{k}: unknown key")
        else:
            out += keys(v, tree[k], f"{at}.{k}")
    return out


def flags(args: list[str], known: list[str], at: str, choices: dict[str, list[str]] | None = None) -> list[str]:
    out = []
    for i, a in enumerate(args):
        if not a.startswith("-") or a.lstrip("-").replace(".", "").isdigit():
            continue
        name, _, value = a.partition("=")
        if name not in known:
            out.append(f"{at}: unknown flag {name}")
        value = value or (args[i + 1] if i + 1 < len(args) else "")
        if choices and name in choices and value not in choices[name]:
            out.append(f"{at}: {name} {value!r} not one of {choices[name]}")
    return out


def vllm_args(args: list[str], at: str, extra: tuple[str, ...] = ()) -> list[str]:
    v = defs("vllm.json")
    out = flags(args, [*v["serve"]["flags"], *extra], at)
    kv = next((args[i + 1] for i, a in enumerate(args) if a == "--kv-transfer-config"), None)
    if kv is not None:
        cfg, ref = json.loads(kv), v["kvTransferConfig"]
        out += [f"{at}: kv-transfer-config key {k}" for k in cfg if k not in ref["keys"]]
        if cfg.get("kv_role") not in ref["kv_role"] or cfg.get("kv_connector") not in ref["kv_connector"]:
            out.append(f"{at}: kv-transfer-config {cfg}")
    return out


def epp_config(cfg: dict[str, Any], at: str) -> list[str]:
    e = defs("llm-d-epp.json")
    out = [f"{at}.{k}: unknown key" for k in cfg if k not in e["keys"]["config"]]
    if cfg.get("apiVersion") not in e["apiVersions"] or cfg.get("kind") != e["kind"]:
        out.append(f"{at}: apiVersion/kind {cfg.get('apiVersion')}/{cfg.get('kind')}")
    names = set()
    for i, p in enumerate(cfg.get("plugins", [])):
        out += [f"{at}.plugins[{i}].{k}: unknown key" for k in p if k not in e["keys"]["plugin"]]
        if p.get("type") not in e["pluginTypes"]:
            out.append(f"{at}.plugins[{i}]: unknown plugin type {p.get('type')}")
        if "parameters" in p:
            tree = e["parameters"].get(p["type"], {})
            out += keys(p["parameters"], tree if tree is not None else {}, f"{at}.plugins[{i}].parameters")
        names.add(p.get("name", p.get("type")))
    for i, prof in enumerate(cfg.get("schedulingProfiles", [])):
        out += [f"{at}.schedulingProfiles[{i}].{k}: unknown key" for k in prof if k not in e["keys"]["profile"]]
        for j, ref in enumerate(prof.get("plugins", [])):
            out += [f"{at}.schedulingProfiles[{i}].plugins[{j}].{k}: unknown key" for k in ref
                    if k not in e["keys"]["profilePlugin"]]
            if ref.get("pluginRef") not in names:
                out.append(f"{at}.schedulingProfiles[{i}].plugins[{j}]: pluginRef {ref.get('pluginRef')} undeclared")
    return out


def _k8s(doc: dict[str, Any], at: str) -> list[str]:
    kinds = defs("kubernetes-keys.json")["kinds"]
    key = f"{doc.get('apiVersion')}/{doc.get('kind')}"
    if key not in kinds:
        return [f"{at}: kind {key} not recorded"]
    out = keys(doc, kinds[key], at)
    if doc["kind"] == "Deployment":
        side = defs("llm-d-sidecar.json")
        for c in doc["spec"]["template"]["spec"]["containers"]:
            args = c.get("args", [])
            if c.get("command") == ["vllm", "serve"]:
                out += vllm_args(args, f"{at} {c['name']}")
            else:
                out += flags(args, side["flags"], f"{at} {c['name']}")
                out += [f"{at}: kv-connector {a}" for a in args if a.startswith("--kv-connector=")
                        and a.split("=", 1)[1] not in side["kvConnectors"]]
    return out


def _values(doc: dict[str, Any], at: str) -> list[str]:
    out = keys(doc, defs("llm-d-inferencepool-values.json")["keys"], at)
    for name, text in doc.get("inferenceExtension", {}).get("pluginsCustomConfig", {}).items():
        out += epp_config(yaml.safe_load(text), f"{at} {name}")
    return out


def _compose(doc: dict[str, Any], at: str) -> list[str]:
    schema = jsonschema.Draft7Validator(defs("compose-spec.json")["schema"])
    out = [f"{at}: {e.message}" for e in schema.iter_errors(doc)]
    s = defs("sglang.json")
    for name, svc in doc.get("services", {}).items():
        args = svc.get("command", [])
        where = f"{at} services.{name}"
        if args[:3] == ["python3", "-m", "sglang.launch_server"]:
            out += flags(args[3:], s["server"]["flags"], where, s["server"]["choices"])
        elif args[:3] == ["python3", "-m", "sglang_router.launch_router"]:
            out += flags(args[3:], s["router"]["flags"], where, s["router"]["choices"])
        elif args[:2] == ["vllm", "serve"]:
            out += vllm_args(args[2:], where)
        else:
            out.append(f"{where}: unknown command {args[:3]}")
    return out


def _dynamo(doc: dict[str, Any], at: str) -> list[str]:
    d = defs("dynamo.json")
    pod = defs("kubernetes-keys.json")["kinds"]["apps/v1/Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    out = [] if (doc.get("apiVersion"), doc.get("kind")) == (d["apiVersion"], d["kind"]) else [f"{at}: kind"]
    out += keys(doc, {"apiVersion": None, "kind": None, "metadata": defs("kubernetes-keys.json")["kinds"][
        "apps/v1/Deployment"]["metadata"], "spec": dict.fromkeys(d["spec"]["keys"], "any")}, at)
    if doc["spec"].get("backendFramework") not in d["spec"]["backendFramework"]:
        out.append(f"{at}: backendFramework")
    service = {**d["service"], "extraPodSpec": {**pod, "mainContainer": container}}
    for name, svc in doc["spec"]["services"].items():
        out += keys(svc, service, f"{at}.spec.services.{name}")
        main = svc.get("extraPodSpec", {}).get("mainContainer", {})
        if main.get("command") == ["python3", "-m", "dynamo.vllm"]:
            out += vllm_args(main.get("args", []), f"{at} {name}", extra=tuple(d["worker"]["flags"]))
        elif main.get("command") != ["python3", "-m", "dynamo.frontend"]:
            out.append(f"{at} {name}: unknown command {main.get('command')}")
    return out


def problems(folder: Path) -> list[str]:
    """What in ``folder``'s files the recorded definitions do not accept."""
    out = []
    for path in sorted(folder.glob("*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            at = f"{path.name}[{i}]"
            if doc.get("kind") == "DynamoGraphDeployment":
                out += _dynamo(doc, at)
            elif "kind" in doc:
                out += _k8s(doc, at)
            elif "inferenceExtension" in doc:
                out += _values(doc, at)
            elif "services" in doc:
                out += _compose(doc, at)
            else:
                out.append(f"{at}: not a file of any target")
    return out


def args_of(text: str) -> list[str]:
    return shlex.split(text)
