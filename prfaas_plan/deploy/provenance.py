"""Where a generated file comes from: a header comment naming the scenario, the command, the version
and the time model's profile, and the plan block that lets `import-deployment` read the plan back."""

from __future__ import annotations

import json
from typing import Any

from prfaas_plan.deploy.model import Deployment

PLAN_KEY = "prfaas-plan.io/plan"  # an annotation (Kubernetes) or an extension field (compose: x-prfaas-plan)


def header(d: Deployment, what: str) -> str:
    """YAML/shell comment lines; every value is one line (a name with a line break is shown escaped)."""
    lines = [f"{what}, written by prfaas-plan {d.version}",
             f"command: {d.command}",
             f"scenario: {d.scenario} ({d.scenario_file})",
             f"time model: serving-stack profile {d.stack}; method {d.method}",
             f"plan: Lambda_max {d.lambda_max_rps:.6g} req/s, bound by {d.binding}"]
    return "".join(f"# {json.dumps(line)[1:-1]}\n" for line in lines)


def plan_block(d: Deployment) -> dict[str, Any]:
    """The plan as data: what `import-deployment` needs beyond the fleet (model, link, workload: the scenario)."""
    return {
        "version": d.version,
        "command": d.command,
        "scenario": d.scenario,
        "stack": d.stack,
        "method": d.method,
        "prefill_site": d.prefill_site,
        "n_prfaas": d.prefill.instances,
        "lambda_max_rps": d.lambda_max_rps,
        "sites": {s.name: {"threshold_tokens": s.threshold_tokens, "n_p": s.local_prefill.instances,
                           "n_d": s.decode.instances} for s in d.sites},
        "scenario_data": dict(d.scenario_data),
    }


def plan_json(d: Deployment) -> str:
    return json.dumps(plan_block(d), sort_keys=True, separators=(",", ":"))
