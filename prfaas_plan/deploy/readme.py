"""README.md of a deployment folder: what each file is, the plan's numbers in it, what the target
cannot express, this plan's warnings and what the user must still fill in."""

from __future__ import annotations

from prfaas_plan.deploy.model import Deployment, Generated


def _t(value: float | None) -> str:
    return "none (offloads nothing)" if value is None else f"{value:,.2f} tokens"


def _numbers(d: Deployment) -> list[str]:
    p = d.prefill
    rows = ["| pool | instances | GPUs each (tensor parallel) | GPU |", "|---|---|---|---|",
            f"| prefill service {d.prefill_site} | {p.instances} | {p.gpus} | {p.hardware} |"]
    for s in d.sites:
        rows.append(f"| {s.name} local prefill (N_p) | {s.local_prefill.instances} | {s.local_prefill.gpus} | "
                    f"{s.local_prefill.hardware} |")
        rows.append(f"| {s.name} decode (N_d) | {s.decode.instances} | {s.decode.gpus} | {s.decode.hardware} |")
    rows += ["", "| site | threshold t | router threshold (offload from) | offloaded | demand share | link |",
             "|---|---|---|---|---|---|"]
    for s in d.sites:
        router = "-" if s.router_tokens is None else f"{s.router_tokens:,} uncached tokens"
        rows.append(f"| {s.name} | {_t(s.threshold_tokens)} | {router} | {s.p_offload:.1%} | {s.demand_share:.0%} | "
                    f"{s.link_bytes_per_s * 8 / 1e9:g} Gbps, RTT {s.link_rtt_s * 1e3:g} ms |")
    return rows


def readme(d: Deployment, g: Generated) -> str:
    lines = [f"# {d.scenario}: deployment for {g.target}", "",
             f"Written by prfaas-plan {d.version}: `{d.command}`. Scenario {d.scenario} ({d.scenario_file}); "
             f"model {d.model}; time model: serving-stack profile {d.stack}; method {d.method}. The plan serves "
             f"Lambda_max {d.lambda_max_rps:.4g} req/s, bound by {d.binding}.", "", "## Files", ""]
    lines += [f"- `{name}`: {what}." for name, what in g.describe.items()]
    lines += ["", "## Numbers from the plan", "",
              "Replicas are instances; an instance runs on its GPUs with tensor parallelism over all of them, as "
              "the plan times it.", "", *_numbers(d), ""]
    if g.warnings:
        lines += ["## Warnings about this plan", "", *[f"- {w}." for w in g.warnings], ""]
    lines += [f"## What {g.target} cannot express", "", *[f"- {c}." for c in g.cannot], "",
              "## What you must still fill in", "", *[f"- {f}." for f in g.fill_in], "",
              "## Back again", "",
              "`prfaas-plan import-deployment DIR -o SCENARIO.yaml` reads these files into a scenario (the plan "
              "block carries the model, link and workload); `prfaas-plan optimize SCENARIO.yaml` then plans "
              "that fleet again.", ""]
    return "\n".join(lines)
