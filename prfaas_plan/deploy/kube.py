"""Kubernetes objects as data (apps/v1 Deployment, v1 ConfigMap) for the targets that run on Kubernetes."""

from __future__ import annotations

import re
from typing import Any

import yaml

from prfaas_plan.deploy.model import LABEL, Pool

MODEL_DIR = "/models"  # where the weights are mounted (the model-cache claim)
MODEL_CLAIM = "model-cache"
HF_SECRET = "hf-token"


def dns_name(text: str) -> str:
    """A name Kubernetes accepts (RFC 1123 label): lower case, [a-z0-9-], at most 63 characters."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-")
    return name or "site"


def model_path(model: str) -> str:
    return f"{MODEL_DIR}/{dns_name(model)}"


def gpu_resources(pool: Pool) -> dict[str, Any]:
    n = str(pool.gpus)
    return {"limits": {"nvidia.com/gpu": n}, "requests": {"nvidia.com/gpu": n}}


def pod_volumes() -> list[dict[str, Any]]:
    return [{"name": "models", "persistentVolumeClaim": {"claimName": MODEL_CLAIM, "readOnly": True}},
            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}}]


def mounts() -> list[dict[str, Any]]:
    return [{"name": "models", "mountPath": MODEL_DIR, "readOnly": True}, {"name": "shm", "mountPath": "/dev/shm"}]


def hf_env() -> list[dict[str, Any]]:
    return [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": HF_SECRET, "key": "token", "optional": True}}}]


def annotations(site: str, role: str, pool: Pool) -> dict[str, str]:
    return {f"{LABEL}/site": site, f"{LABEL}/role": role, f"{LABEL}/hardware": pool.hardware}


def deployment(name: str, *, replicas: int, labels: dict[str, str], notes: dict[str, str],
               containers: list[dict[str, Any]]) -> dict[str, Any]:
    """A Deployment whose pods carry ``labels`` (and app: name, its selector) and our ``notes``."""
    pod_labels = {"app": name, **labels}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": pod_labels, "annotations": notes},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": pod_labels, "annotations": notes},
                                  "spec": {"containers": containers, "volumes": pod_volumes()}}}}


def config_map(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


class _Dumper(yaml.SafeDumper):
    """yaml.safe_dump's dumper, with no anchors (each object written out, as people write manifests)
    and a multi-line string as a literal block (an embedded config file stays readable)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)
WIDTH = 1 << 20  # long values (a JSON plan) on one line


def dump_all(docs: list[dict[str, Any]]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=WIDTH)


def dump(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=WIDTH)
