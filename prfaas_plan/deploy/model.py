"""The deployment a plan asks for, typed: what every target's writer reads."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TARGETS = ("llm-d", "sglang", "vllm", "dynamo")

# roles of a pool in the plan (our annotation; each target has its own word for them)
PREFILL_SERVICE, LOCAL_PREFILL, DECODE = "prefill-service", "local-prefill", "decode"
ROLES = (PREFILL_SERVICE, LOCAL_PREFILL, DECODE)
LABEL = "prfaas-plan.io"  # our labels and annotations: prfaas-plan.io/site, /role, /hardware, /plan


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """Instances of one kind: ``gpus`` GPUs each, tensor parallel over all of them (as the plan times them)."""

    hardware: str
    gpus: int
    instances: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteDeployment:
    """A PD site: its local prefill and decode instances, its router's threshold and its link."""

    name: str
    local_prefill: Pool  # N_p instances
    decode: Pool  # N_d instances
    threshold_tokens: float | None  # offload a request whose uncached length exceeds it; None: offload nothing
    p_offload: float
    demand_share: float
    link_bytes_per_s: float  # the line's nominal bandwidth
    link_rtt_s: float

    @property
    def router_tokens(self) -> int | None:
        """The smallest uncached length offloaded: lengths are whole tokens, so l > t is l >= floor(t) + 1
        (a router that separates at >= n, as llm-d's prefix-based-pd-decider does)."""
        return None if self.threshold_tokens is None else math.floor(self.threshold_tokens) + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """The plan `optimize` chose for a scenario, as a deployment: the prefill service and each PD site."""

    scenario: str
    scenario_file: str
    command: str
    version: str
    stack: str
    method: str
    model: str
    prefill_site: str
    prefill: Pool  # N_prfaas instances
    sites: tuple[SiteDeployment, ...]
    lambda_max_rps: float
    binding: str
    scenario_data: Mapping[str, Any] = field(default_factory=dict)  # the scenario, to read the plan back

    @property
    def multi_site(self) -> bool:
        return len(self.sites) > 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Generated:
    """One target's files (name -> text), what the target cannot express, and warnings about this plan."""

    target: str
    files: Mapping[str, str]
    describe: Mapping[str, str]  # file -> what it is
    cannot: tuple[str, ...]  # what the target cannot express, whatever the plan
    warnings: tuple[str, ...]  # what this plan asks that the files do not carry
    fill_in: tuple[str, ...]  # what the user must still fill in


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadPool:
    """A pool found in deployment files: where, which role, how many instances of how many GPUs."""

    site: str | None
    role: str
    instances: int
    gpus: int | None
    hardware: str | None
    source: str  # the file it came from
    # the key path in ``source`` each of site, instances, gpus and hardware was read at (to name it in errors)
    where: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadDeployment:
    """What deployment files say: pools, routers' thresholds (uncached tokens), and our plan block if any."""

    target: str
    pools: tuple[ReadPool, ...]
    thresholds: Mapping[str, int]  # site -> the router's threshold as the files give it (>= n is offloaded)
    plan: Mapping[str, Any] | None  # our provenance block: the scenario and the plan
    notes: tuple[str, ...]
    plan_source: str | None = None  # the file holding the plan block
