"""Record the deployment targets' own definitions as test fixtures (tests/fixtures/deploy/).

Reads git snapshots of the targets' public repositories (the search tool's `fetch` puts them under
/work/.mirror/OWNER+NAME/repo) and extracts data only: key trees, flag names, a CRD's schema.
Usage: python scripts/record_deploy_definitions.py [MIRRORS] (default /work/.mirror).
The definitions read by hand from repositories too large to fetch (SGLang, vLLM, Dynamo) are
written in the fixtures themselves, each with its repository, path and commit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "deploy"

# fields whose value is a map of free keys (labels, resource names): `*` in a key tree
MAPS = {"labels", "annotations", "matchLabels", "nodeSelector", "limits", "requests", "data", "binaryData",
        "selector@Service", "overhead", "capacity", "allocatable"}


def git(mirrors: Path, repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={mirrors / repo / 'repo'}", *args], check=True, capture_output=True,
                          text=True).stdout


def source(mirrors: Path, repo: str, path: str) -> dict[str, str]:
    commit = git(mirrors, repo, "rev-parse", "HEAD").strip()
    return {"repo": repo.replace("+", "/"), "path": path, "commit": commit}


def key_tree(node, kind: str = "", key: str = ""):
    """The keys of a fully populated example object; free-key maps as {"*": None}."""
    if isinstance(node, dict):
        if key in MAPS or f"{key}@{kind}" in MAPS:
            return {"*": None}
        return {k: key_tree(v, kind, k) for k, v in node.items()}
    if isinstance(node, list):
        merged: dict = {}
        for item in node:
            sub = key_tree(item, kind, key)
            if isinstance(sub, dict):
                merged |= sub
        return [merged] if merged else [None]
    return None


def kubernetes(mirrors: Path) -> None:
    repo = "kubernetes+api"
    out = {"source": [], "kinds": {}}
    for kind, path in (("Deployment", "testdata/HEAD/apps.v1.Deployment.yaml"),
                       ("ConfigMap", "testdata/HEAD/core.v1.ConfigMap.yaml"),
                       ("Service", "testdata/HEAD/core.v1.Service.yaml")):
        doc = yaml.safe_load(git(mirrors, repo, "show", f"HEAD:{path}"))
        tree = key_tree(doc, kind)
        tree.pop("status", None)
        out["kinds"][f"{doc['apiVersion']}/{kind}"] = tree
        out["source"].append(source(mirrors, repo, path))
    out["note"] = ("key trees of the round-trip test objects of k8s.io/api (every field set); '*': a map of free "
                   "keys; status left out")
    write("kubernetes-keys.json", out)



def chart_values(mirrors: Path) -> None:
    repo = "llm-d+llm-d-inference-scheduler"
    path = "config/charts/inferencepool/values.yaml"
    values = yaml.safe_load(git(mirrors, repo, "show", f"HEAD:{path}"))
    tree = key_tree(values)
    # keys the file documents in comments (and the templates read): the EPP config files by name, the pool's labels
    tree["inferenceExtension"]["pluginsCustomConfig"] = {"*": None}
    tree["inferenceExtension"]["flags"] = {"*": None}
    tree["inferencePool"]["modelServers"] = {"matchLabels": {"*": None}}
    tree["inferenceExtension"]["env"] = [None]
    write("llm-d-inferencepool-values.json", {
        "source": [source(mirrors, repo, path), source(mirrors, repo, "config/charts/epplib/templates/_config.yaml")],
        "note": "key tree of the chart's values.yaml; pluginsCustomConfig, flags and modelServers.matchLabels are "
                "named in its comments and read by config/charts/epplib/templates", "keys": tree})


def _consts(text: str) -> dict[str, str]:
    return dict(re.findall(r'^\s*(\w+)\s*=\s*"([^"]*)"', text, flags=re.M))


def epp(mirrors: Path) -> None:
    repo = "llm-d+llm-d-inference-scheduler"
    files = ["pkg/epp/framework/plugins/register.go", "cmd/epp/runner/runner.go"]
    consts: dict[str, str] = {}
    for f in git(mirrors, repo, "ls-tree", "-r", "--name-only", "HEAD").split():
        if (f.endswith(".go") and not f.endswith("_test.go") and "/plugins/" in f) or f.endswith("runner.go"):
            text = git(mirrors, repo, "show", f"HEAD:{f}")
            consts |= {f"{Path(f).parent.name}.{k}": v for k, v in _consts(text).items()}
    types = set()
    for f in files:
        text = git(mirrors, repo, "show", f"HEAD:{f}")
        for pkg, name in re.findall(r"Register(?:AsDefaultProducer)?\((\w+)\.(\w+)", text):
            for key, value in consts.items():
                if key.endswith(f".{name}") and (key.split(".")[0] == pkg or key.split(".")[0].startswith(pkg[:4])):
                    types.add(value)
                    break
    write("llm-d-epp.json", {
        "source": [source(mirrors, repo, p) for p in
                   ("apix/config/v1alpha1/endpointpickerconfig_types.go", "pkg/epp/config/loader/configloader.go",
                    *files, "pkg/epp/framework/plugins/scheduling/profilehandler/disagg/disagg_profile_handler.go",
                    "pkg/epp/framework/plugins/scheduling/profilehandler/disagg/prefix_based_pd_decider.go",
                    "pkg/epp/framework/plugins/scheduling/filter/bylabel/roles.go")],
        "apiVersions": ["llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"],
        "kind": "EndpointPickerConfig",
        "keys": {"config": ["apiVersion", "kind", "featureGates", "plugins", "schedulingProfiles", "saturationDetector",
                            "dataLayer", "flowControl", "parser"],
                 "plugin": ["name", "type", "parameters"], "profile": ["name", "plugins"],
                 "profilePlugin": ["pluginRef", "weight"]},
        "pluginTypes": sorted(types),
        # the parameters of the plugins the generator uses (json tags of their parameter structs); null: none
        "parameters": {"disagg-profile-handler": {"profiles": {"decode": None, "prefill": None, "encode": None},
                                                  "deciders": {"prefill": None, "encode": None}},
                       "prefix-based-pd-decider": {"nonCachedTokens": None},
                       "prefill-filter": None, "decode-filter": None},
        "roleLabel": "llm-d.ai/role",
        "roles": {"decode-filter": ["decode", "prefill-decode", "both", "encode-prefill-decode"],
                  "prefill-filter": ["prefill", "encode-prefill", "prefill-decode", "both", "encode-prefill-decode"]},
    })


def sidecar(mirrors: Path) -> None:
    repo = "llm-d+llm-d-inference-scheduler"
    path = "pkg/sidecar/proxy/options.go"
    text = git(mirrors, repo, "show", f"HEAD:{path}")
    names = _consts(text)
    flags = set()
    for arg in re.findall(r"fs\.\w+Var\(&[\w.]+,\s*(\w+|\"[^\"]+\")", text):
        flags.add(arg.strip('"') if arg.startswith('"') else names[arg])
    kv = re.search(r"supportedKVConnectors = map\[string\]struct\{\}\{(.*?)\}\n", text, re.S)
    proxy = _consts(git(mirrors, repo, "show", "HEAD:pkg/sidecar/proxy/proxy.go"))
    write("llm-d-sidecar.json", {
        "source": [source(mirrors, repo, p) for p in (path, "cmd/pd-sidecar/main.go", "pkg/sidecar/proxy/proxy.go")],
        "flags": sorted(f"--{f}" for f in flags),
        "kvConnectors": [proxy[c] for c in re.findall(r"(\w+):", kv.group(1))] if kv else []})


def compose(mirrors: Path) -> None:
    repo = "compose-spec+compose-spec"
    path = "schema/compose-spec.json"
    schema = json.loads(git(mirrors, repo, "show", f"HEAD:{path}"))
    write("compose-spec.json", {"source": [source(mirrors, repo, path)], "schema": schema})


def write(name: str, data: dict) -> None:
    (OUT / name).write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT / name}")


if __name__ == "__main__":
    mirrors = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror")
    for step in (kubernetes, chart_values, epp, sidecar, compose):
        step(mirrors)
