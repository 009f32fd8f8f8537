"""llm-d: the model servers as Kubernetes manifests and, per PD site, the values of the inferencepool
chart with the EPP's configuration, whose prefix-based-pd-decider holds the plan's threshold.

Definitions: llm-d/llm-d-inference-scheduler (EndpointPickerConfig, plugin types and parameters,
the pd-sidecar's flags, the inferencepool chart's values); see tests/fixtures/deploy/.
"""

from __future__ import annotations

import json
from typing import Any

from prfaas_plan.deploy import kube
from prfaas_plan.deploy.model import DECODE, LABEL, LOCAL_PREFILL, PREFILL_SERVICE, Deployment, Generated, Pool
from prfaas_plan.deploy.provenance import PLAN_KEY, header, plan_json

VLLM_IMAGE = "vllm/vllm-openai:latest"
SIDECAR_IMAGE = "ghcr.io/llm-d/llm-d-routing-sidecar:latest"
ROLE = "llm-d.ai/role"  # the label the EPP's prefill-filter and decode-filter read
SERVE_PORT, ENGINE_PORT = 8000, 8001  # decode pods: the sidecar in front of vLLM (the sidecar's defaults)
EPP_FILE = "prfaas-pd.yaml"
KV_CONFIG = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


def pool_label(site: str) -> str:
    return f"{LABEL}/pool-{kube.dns_name(site)}"


def epp_config(router_tokens: int | None) -> dict[str, Any]:
    """The EPP's P/D configuration (as the repository's deploy/config/pd-epp-config.yaml), the threshold
    in the decider: a request with at least ``router_tokens`` uncached tokens gets a separate prefill
    (0 disables the decider: nothing is offloaded)."""
    weights = [{"pluginRef": "max-score-picker"}, {"pluginRef": "prefix-cache-scorer", "weight": 2},
               {"pluginRef": "queue-scorer", "weight": 1}]
    return {
        "apiVersion": "llm-d.ai/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [{"type": "prefill-filter"}, {"type": "decode-filter"}, {"type": "prefix-cache-scorer"},
                    {"type": "queue-scorer"}, {"type": "max-score-picker"},
                    {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": router_tokens or 0}},
                    {"type": "disagg-profile-handler",
                     "parameters": {"deciders": {"prefill": "prefix-based-pd-decider"}}}],
        "schedulingProfiles": [{"name": "prefill", "plugins": [{"pluginRef": "prefill-filter"}, *weights]},
                               {"name": "decode", "plugins": [{"pluginRef": "decode-filter"}, *weights]}],
    }


def _vllm(d: Deployment, pool: Pool, port: int) -> dict[str, Any]:
    args = [kube.model_path(d.model), "--served-model-name", d.model, "--tensor-parallel-size", str(pool.gpus),
            "--port", str(port), "--kv-transfer-config", json.dumps(KV_CONFIG, separators=(",", ":"))]
    return {"name": "vllm", "image": VLLM_IMAGE, "command": ["vllm", "serve"], "args": args,
            "ports": [{"name": "http", "containerPort": port}], "env": kube.hf_env(),
            "resources": kube.gpu_resources(pool), "volumeMounts": kube.mounts()}


def _sidecar() -> dict[str, Any]:
    return {"name": "routing-proxy", "image": SIDECAR_IMAGE,
            "args": [f"--port={SERVE_PORT}", f"--vllm-port={ENGINE_PORT}", "--kv-connector=nixlv2"],
            "ports": [{"name": "proxy", "containerPort": SERVE_PORT}]}


def servers(d: Deployment) -> list[dict[str, Any]]:
    """The prefill service's and each site's pods; the plan block in a ConfigMap."""
    every = {pool_label(s.name): "true" for s in d.sites}
    name = kube.dns_name(d.prefill_site)
    docs = [kube.config_map("prfaas-plan", {"plan.json": plan_json(d)}),
            kube.deployment(f"{name}-prefill", replicas=d.prefill.instances,
                            labels={ROLE: "prefill", **every},
                            notes=kube.annotations(d.prefill_site, PREFILL_SERVICE, d.prefill),
                            containers=[_vllm(d, d.prefill, SERVE_PORT)])]
    for s in d.sites:
        for role, pool in ((DECODE, s.decode), (LOCAL_PREFILL, s.local_prefill)):
            if pool.instances == 0:
                continue
            # llm-d serves a request it does not disaggregate on a decode pod: the plan's local prefill
            # instances join the decode role and prefill the short requests there
            docs.append(kube.deployment(f"{kube.dns_name(s.name)}-{role}", replicas=pool.instances,
                                        labels={ROLE: "decode", pool_label(s.name): "true"},
                                        notes=kube.annotations(s.name, role, pool),
                                        containers=[_sidecar(), _vllm(d, pool, ENGINE_PORT)]))
    return docs


def values(d: Deployment, site_index: int) -> dict[str, Any]:
    s = d.sites[site_index]
    text = kube.dump(epp_config(s.router_tokens))
    return {"inferencePool": {"modelServers": {"matchLabels": {pool_label(s.name): "true"}},
                              "targetPorts": [{"number": SERVE_PORT}], "modelServerType": "vllm"},
            "inferenceExtension": {"pluginsConfigFile": EPP_FILE, "pluginsCustomConfig": {EPP_FILE: text}}}


def values_file(site: str) -> str:
    return f"{kube.dns_name(site)}-inferencepool-values.yaml"


def generate(d: Deployment) -> Generated:
    files = {"model-servers.yaml": header(d, "llm-d model servers (kubectl apply -f)") + kube.dump_all(servers(d))}
    describe = {"model-servers.yaml": f"the ConfigMap prfaas-plan (the plan, for import-deployment; key plan.json, "
                f"annotation {PLAN_KEY} elsewhere) and one Deployment per pool: the prefill service's vLLM pods "
                "(llm-d.ai/role=prefill) and each site's decode pods with the pd routing sidecar"}
    for i, s in enumerate(d.sites):
        f = values_file(s.name)
        release = kube.dns_name(s.name)
        files[f] = header(d, f"inferencepool chart values for site {s.name} (helm install {release} "
                             f"oci://ghcr.io/llm-d/charts/inferencepool -f {f})") + kube.dump(values(d, i))
        describe[f] = (f"values of the inferencepool Helm chart for {s.name}: its InferencePool (the pods labelled "
                       f"{pool_label(s.name)}=true) and its EPP, whose prefix-based-pd-decider offloads a request "
                       f"with at least nonCachedTokens = {s.router_tokens or 0} uncached tokens")
    warnings = []
    if d.multi_site:
        warnings.append(f"the prefill service {d.prefill_site} serves {len(d.sites)} sites: its pods carry every "
                        "site's pool label, so each site's InferencePool must see them; across clusters that needs "
                        "multi-cluster networking llm-d does not set up, and no link between them is modelled")
    return Generated(target="llm-d", files=files, describe=describe, cannot=CANNOT, warnings=tuple(warnings),
                     fill_in=FILL_IN)


CANNOT = (
    "a separate pool of local prefill instances for short requests: llm-d prefills a request it does not "
    "disaggregate on the decode pod that serves it. The plan's N_p local prefill instances are deployed as decode "
    "pods (llm-d.ai/role=decode, our annotation prfaas-plan.io/role=local-prefill keeps the split), so the "
    "local prefill and decode share every such pod",
    "the cross-datacenter link: bandwidth, RTT and its share cap are not modelled; the EPP picks prefill pods "
    "by its scorers, not by the link's load",
    "the threshold exactly: the decider counts uncached tokens as characters / 4 (an estimate) against the "
    "decode pod's prefix cache; nonCachedTokens = floor(t) + 1 offloads exactly the lengths l > t when the "
    "count is exact",
    "the threshold table of `prfaas-plan thresholds`: one static nonCachedTokens per EPP",
)
FILL_IN = (
    f"image tags: {VLLM_IMAGE} and {SIDECAR_IMAGE} (pin the versions you run)",
    f"the model weights: a PersistentVolumeClaim {kube.MODEL_CLAIM} holding them at {kube.MODEL_DIR}/<model> "
    "(the vLLM argument), or another volume",
    f"secrets: a Secret {kube.HF_SECRET} (key token) if the weights come from a gated hub repository",
    "the Gateway (istio, kgateway or GKE) the InferencePool attaches to, as llm-d's guides install it",
    "GPU node selection (nodeSelector or affinity) for each pool's GPU model",
)
