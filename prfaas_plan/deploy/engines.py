"""SGLang and vLLM: one compose file per datacenter, one service per instance (each instance is one
node's server, so a router can name it), the plan block as the compose extension field x-prfaas-plan.

Definitions: sgl-project/sglang (ServerArgs, sglang_router's RouterArgs), vllm-project/vllm (the
OpenAI server's parser, KVTransferConfig, the KV connectors), compose-spec/compose-spec (the schema);
see tests/fixtures/deploy/.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from prfaas_plan.deploy import kube
from prfaas_plan.deploy.model import DECODE, LABEL, LOCAL_PREFILL, PREFILL_SERVICE, Deployment, Generated, Pool
from prfaas_plan.deploy.provenance import header, plan_block

SGLANG_IMAGE, VLLM_IMAGE = "lmsysorg/sglang:latest", "vllm/vllm-openai:latest"
SGLANG_PORT, VLLM_PORT, BOOTSTRAP_PORT = 30000, 8000, 8998
PLAN_FIELD = "x-prfaas-plan"
Command = Callable[[Deployment, Pool, str], list[str]]


def sglang_server(d: Deployment, pool: Pool, role: str) -> list[str]:
    mode = "decode" if role == DECODE else "prefill"
    args = ["python3", "-m", "sglang.launch_server", "--model-path", kube.model_path(d.model),
            "--tp-size", str(pool.gpus), "--host", "0.0.0.0", "--port", str(SGLANG_PORT), "--trust-remote-code",
            "--disaggregation-mode", mode, "--disaggregation-transfer-backend", "mooncake"]
    return args if mode == "decode" else [*args, "--disaggregation-bootstrap-port", str(BOOTSTRAP_PORT)]


def vllm_server(d: Deployment, pool: Pool, role: str) -> list[str]:
    kv = {"kv_connector": "NixlConnector", "kv_role": "kv_consumer" if role == DECODE else "kv_producer"}
    return ["vllm", "serve", kube.model_path(d.model), "--served-model-name", d.model,
            "--tensor-parallel-size", str(pool.gpus), "--kv-transfer-config", json.dumps(kv, separators=(",", ":"))]


def instance_name(site: str, role: str, i: int) -> str:
    return f"{kube.dns_name(site)}-{role}-{i}"


def _service(image: str, command: list[str], site: str, role: str, pool: Pool) -> dict[str, Any]:
    return {"image": image, "command": command, "network_mode": "host", "ipc": "host",
            "labels": {f"{LABEL}/site": site, f"{LABEL}/role": role, f"{LABEL}/hardware": pool.hardware},
            "volumes": [f"{kube.MODEL_DIR}:{kube.MODEL_DIR}:ro"],
            "deploy": {"resources": {"reservations": {"devices": [
                {"driver": "nvidia", "count": pool.gpus, "capabilities": ["gpu"]}]}}}}


def _router(urls_prefill: list[str], urls_decode: list[str], port: int) -> list[str]:
    args = ["python3", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--host", "0.0.0.0",
            "--port", str(port)]
    for url in urls_prefill:
        args += ["--prefill", url, str(BOOTSTRAP_PORT)]
    for url in urls_decode:
        args += ["--decode", url]
    return args


def _files(d: Deployment, image: str, server: Command, port: int, routers: bool) -> dict[str, dict[str, Any]]:
    """One compose project per datacenter: the prefill service's, then each PD site's."""
    block = plan_block(d)
    out: dict[str, dict[str, Any]] = {}
    pools = [(d.prefill_site, [(PREFILL_SERVICE, d.prefill)])]
    pools += [(s.name, [(LOCAL_PREFILL, s.local_prefill), (DECODE, s.decode)]) for s in d.sites]
    for site, roles in pools:
        services = {instance_name(site, role, i): _service(image, server(d, pool, role), site, role, pool)
                    for role, pool in roles for i in range(pool.instances)}
        out[site] = {"name": kube.dns_name(site), PLAN_FIELD: block, "services": services}
    if routers:
        def urls(site: str, role: str, n: int) -> list[str]:
            return [f"http://{instance_name(site, role, i)}:{port}" for i in range(n)]

        remote = urls(d.prefill_site, PREFILL_SERVICE, d.prefill.instances)
        for s in d.sites:
            local = urls(s.name, LOCAL_PREFILL, s.local_prefill.instances)
            decode = urls(s.name, DECODE, s.decode.instances)
            services = out[s.name]["services"]
            for name, prefill, listen in (("router-long", remote, 8000), ("router-short", local, 8001)):
                if prefill:
                    services[name] = {"image": image, "command": _router(prefill, decode, listen),
                                      "network_mode": "host", "labels": {f"{LABEL}/site": s.name,
                                                                         f"{LABEL}/role": name}}
    return out


def _generated(d: Deployment, target: str, data: dict[str, dict[str, Any]], what: str,
               cannot: tuple[str, ...], fill_in: tuple[str, ...]) -> Generated:
    files, describe = {}, {}
    for site, doc in data.items():
        f = f"{kube.dns_name(site)}.compose.yaml"
        files[f] = header(d, f"{what} for {site} (docker compose -f {f} up -d SERVICE, on its node)") + kube.dump(doc)
        roles = sorted({s["labels"][f"{LABEL}/role"] for s in doc["services"].values()})
        describe[f] = f"{site}: one service per instance ({', '.join(roles)}); the plan in {PLAN_FIELD}"
    warnings = [f"the prefill service {d.prefill_site} serves {len(d.sites)} sites over {len(d.sites)} links: "
                f"{target} does not model a link; each site's servers must reach the prefill service's"] \
        if d.multi_site else []
    return Generated(target=target, files=files, describe=describe, cannot=cannot, warnings=tuple(warnings),
                     fill_in=fill_in)


def sglang(d: Deployment) -> Generated:
    return _generated(d, "sglang", _files(d, SGLANG_IMAGE, sglang_server, SGLANG_PORT, routers=True),
                      "SGLang servers and PD routers", SGLANG_CANNOT, _fill(SGLANG_IMAGE))


def vllm(d: Deployment) -> Generated:
    return _generated(d, "vllm", _files(d, VLLM_IMAGE, vllm_server, VLLM_PORT, routers=False),
                      "vLLM servers", VLLM_CANNOT, _fill(VLLM_IMAGE))


def _fill(image: str) -> tuple[str, ...]:
    return (f"the image tag: {image} (pin the version you run)",
            f"the model weights at {kube.MODEL_DIR}/<model> on every node (the compose volume), or another path",
            "the nodes: each service is one instance on its own node (host networking); make every service name "
            "resolve to its node (DNS or extra_hosts), the routers' URLs use them",
            "the RDMA devices of the KV transfer (Mooncake/NIXL pick them up or take an option), and HF_TOKEN "
            "in the environment if the weights come from a gated repository")


SGLANG_CANNOT = (
    "the threshold t: sglang_router's PD mode sends every request through a prefill server chosen by its policy "
    "(random, round_robin, cache_aware, power_of_two), never by length. Each site has two routers: router-long "
    "(port 8000: the prefill service, then the site's decode) and router-short (port 8001: the site's local "
    "prefill, then the same decode); something in front must send a request whose uncached length exceeds t "
    "(the table below) to router-long and the rest to router-short",
    "the cross-datacenter link (bandwidth, RTT): the KV moves over the transfer backend (Mooncake) on whatever "
    "network joins the nodes",
    "the threshold table of `prfaas-plan thresholds`",
)
VLLM_CANNOT = (
    "a router: vLLM ships no prefill/decode router. The servers carry their KV roles (kv_producer on every "
    "prefill instance, kv_consumer on every decode instance, NixlConnector); the routing by the threshold t and "
    "the pairing of prefill with decode need a router in front, e.g. llm-d's EPP and pd sidecar (--target llm-d)",
    "the cross-datacenter link (bandwidth, RTT): NIXL moves the KV over whatever network joins the nodes",
    "the threshold table of `prfaas-plan thresholds`",
)
