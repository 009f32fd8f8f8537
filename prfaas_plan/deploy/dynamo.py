"""NVIDIA Dynamo: one DynamoGraphDeployment per datacenter, prefill and decode workers with their
replica counts and GPUs, the plan block as an annotation.

Definitions: ai-dynamo/dynamo (the DynamoGraphDeployment CRD, a service's keys, the vLLM worker's
flags); see tests/fixtures/deploy/dynamo.json.
"""

from __future__ import annotations

from typing import Any

from prfaas_plan.deploy import kube
from prfaas_plan.deploy.model import DECODE, LABEL, LOCAL_PREFILL, PREFILL_SERVICE, Deployment, Generated, Pool
from prfaas_plan.deploy.provenance import PLAN_KEY, header, plan_json

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest"
WORKER = {PREFILL_SERVICE: ("VllmPrefillWorker", "prefill", "--is-prefill-worker"),
          LOCAL_PREFILL: ("VllmLocalPrefillWorker", "prefill", "--is-prefill-worker"),
          DECODE: ("VllmDecodeWorker", "decode", "--is-decode-worker")}


def _worker(d: Deployment, site: str, role: str, pool: Pool) -> dict[str, Any]:
    _, sub, flag = WORKER[role]
    gpus = str(pool.gpus)
    args = ["--model", kube.model_path(d.model), "--served-model-name", d.model,
            "--tensor-parallel-size", gpus, flag]
    return {"componentType": "worker", "subComponentType": sub, "replicas": pool.instances,
            "annotations": kube.annotations(site, role, pool),
            "resources": {"limits": {"gpu": gpus}, "requests": {"gpu": gpus}},
            "envFromSecret": kube.HF_SECRET,
            "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"],
                                               "args": args}}}


def graph(d: Deployment, site: str, roles: list[tuple[str, Pool]], frontend: bool) -> dict[str, Any]:
    services: dict[str, Any] = {}
    if frontend:
        services["Frontend"] = {"componentType": "frontend", "replicas": 1,
                                "annotations": {f"{LABEL}/site": site, f"{LABEL}/role": "frontend"},
                                "extraPodSpec": {"mainContainer": {"image": IMAGE,
                                                                   "command": ["python3", "-m", "dynamo.frontend"]}}}
    for role, pool in roles:
        if pool.instances > 0:
            services[WORKER[role][0]] = _worker(d, site, role, pool)
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": kube.dns_name(site), "annotations": {f"{LABEL}/site": site, PLAN_KEY: plan_json(d)}},
            "spec": {"backendFramework": "vllm", "services": services}}


def generate(d: Deployment) -> Generated:
    graphs = [(d.prefill_site, graph(d, d.prefill_site, [(PREFILL_SERVICE, d.prefill)], frontend=False))]
    graphs += [(s.name, graph(d, s.name, [(LOCAL_PREFILL, s.local_prefill), (DECODE, s.decode)], frontend=True))
               for s in d.sites]
    files, describe = {}, {}
    for site, doc in graphs:
        f = f"{kube.dns_name(site)}.dgd.yaml"
        files[f] = header(d, f"Dynamo graph for {site} (kubectl apply -f {f})") + kube.dump(doc)
        describe[f] = f"the DynamoGraphDeployment of {site}: " + ", ".join(
            f"{name} x{svc['replicas']}" for name, svc in doc["spec"]["services"].items())
    warnings = (f"the prefill service {d.prefill_site} serves {len(d.sites)} sites: each site's graph and the "
                "prefill service's are separate graphs, their workers meet only through a shared Dynamo discovery "
                "plane the CRD does not set up; no link between them is modelled",) if d.multi_site else ()
    return Generated(target="dynamo", files=files, describe=describe, cannot=CANNOT, warnings=warnings,
                     fill_in=FILL_IN)


CANNOT = (
    "the threshold t: a DynamoGraphDeployment has no field for a length threshold; with prefill workers in the "
    "graph the frontend's router decides which requests prefill remotely by its own configuration, not by t. "
    f"The plan's t is in the annotation {PLAN_KEY} only",
    "the cross-datacenter link: the prefill service is its own graph; the CRD does not join graphs across "
    "clusters, nor model a link's bandwidth or RTT",
    "the split between the prefill service and a site's local prefill by length: both are prefill workers "
    "(VllmPrefillWorker, VllmLocalPrefillWorker)",
    "the threshold table of `prfaas-plan thresholds`",
)
FILL_IN = (
    f"the image tag: {IMAGE} (pin the Dynamo release you run)",
    f"the model weights at {kube.MODEL_DIR}/<model> (a PVC in spec.pvcs mounted with volumeMounts), or a hub id",
    f"secrets: a Secret {kube.HF_SECRET} (envFromSecret) with HF_TOKEN if the weights are gated",
    "the Dynamo platform (operator, etcd, NATS) installed in each cluster",
)
