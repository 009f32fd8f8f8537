"""The report's own tables: the scenario at a glance and the provenance of its inputs.

Every other table of the report is a command's, collected from its view (``render.collect``).
"""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import Table, num, pct, table
from prfaas_plan.report.report_data import ReportData
from prfaas_plan.specs.scenario import ScenarioSpec


def _gbps(b: float | None) -> str:
    return "-" if b is None else num(units.bytes_per_s_to_gbps(b), 2)


def _ms(s: float) -> str:
    return f"{units.s_to_ms(s):g}"


def _lengths(wl: Any) -> str:
    d = dict(wl.description or {})
    kind = d.pop("kind", None) or type(wl.lengths).__name__
    rest = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())
    return f"{kind} ({rest})" if rest else str(kind)


def _decode(sc: ScenarioSpec) -> str:
    if sc.decode.pinned:
        return (f"pinned: BS_max {sc.decode.bs_max}, T_decode {_ms(sc.decode.t_decode_s or 0.0)} ms "
                "(given in the scenario)")
    return f"derived from the decode model (memory fraction {sc.decode.memory_fraction:g})"


def glance(d: ReportData) -> list[Table]:
    """Scenario, fleet, links and workload as the scenario (after --set and --trace) gives them."""
    sc = d.scenario
    topo = sc.topology
    slo = f"TPOT <= {_ms(sc.tpot_slo_s)} ms ({sc.decode_tokens_per_s:g} tokens/s)"
    slo += (f"; {sc.ttft_statistic} TTFT <= {sc.ttft_slo_s:g} s" if sc.ttft_slo_s is not None else "; no TTFT SLO")
    rows = [["scenario", sc.name], ["described as", sc.source or "-"], ["file", d.scenario_file],
            ["model", sc.model.name], ["method", sc.search.method],
            ["threshold search", f"{num(sc.search.threshold_min, 0)} .. {num(sc.search.threshold_max, 0)} tokens, "
             f"step {num(sc.search.threshold_step, 0)}"
             + (f", N_prfaas searched up to {sc.search.max_prfaas_instances}" if sc.search.size_prfaas else "")],
            ["decode", _decode(sc)], ["SLOs", slo],
            ["KV transfer", ("layer-wise pipelining" if sc.layerwise_pipelining else "after the whole prefill")
             + f", prefix cache mode {sc.cache_mode}"],
            ["--set", ", ".join(d.overrides) or "-"], ["--trace", d.trace or "-"]]
    out = [table("Scenario", ["", ""], rows)]

    fleet = []
    for s in (topo.prefill, *topo.sites):
        c = s.cluster
        price = c.price_per_gpu_hour if c.price_per_gpu_hour is not None else c.instance.gpu.price_per_hour
        fleet.append([s.name, "prefill service (PrfaaS)" if s.role == "prfaas" else "PD cluster", c.instance.gpu.name,
                      c.instances, c.instance.gpus, c.gpus, "-" if s.role == "prfaas" else pct(s.demand_share),
                      "-" if price is None else f"${price:,.2f}"])
    out.append(table("Fleet", ["site", "role", "GPU", "instances", "GPUs per instance", "GPUs", "demand share",
                               "$ per GPU-hour"], fleet))

    links = []
    for tl in topo.links:
        lk = tl.link
        law = "-" if lk.bandwidth_law is None else f"{lk.bandwidth_law.kind} (bandwidth is its median)"
        links.append([tl.name, _gbps(lk.bandwidth_bytes_per_s), f"{lk.usable_fraction:g}", f"{lk.share_cap:g}",
                      _gbps(lk.usable_bytes_per_s), lk.limited_by, _ms(lk.rtt_s), _ms(lk.handoff_s), law])
    out.append(table("Links", ["link", "bandwidth Gbps", "usable fraction", "share cap", "B_out Gbps", "B_out set by",
                               "RTT ms", "handoff ms", "varies"], links,
                     caption="B_out = bandwidth x usable fraction x share cap, or the TCP streams' goodput if lower."))

    work = []
    for s in topo.sites:
        wl = s.workload or sc.workload
        arrivals = wl.arrival + (f" (CV {wl.arrival_cv:g})" if wl.arrival == "gamma" else "")
        if wl.trace is not None:  # the trace's own arrivals (core.arrivals), as the latency model takes them
            rp = wl.rate_profile
            arrivals = "the trace's timestamps" + ("" if rp is None else (
                f" (rate peak-to-mean {rp.peak_to_mean:.2f} over {rp.bin_s:g} s windows, gaps' SCV "
                f"{rp.arrival_scv:.2f} inside them)"))
        work.append([s.name, "trace" if wl.trace is not None else _lengths(wl), num(wl.lengths.mean, 0),
                     num(wl.input_total_mean, 0), num(wl.output_tokens, 0), pct(wl.prefix_hit_rate), arrivals])
    out.append(table("Workload", ["site", "input lengths (tokens)", "mean uncached input tokens",
                                  "mean input tokens", "output tokens", "prefix hit rate %", "arrivals"], work,
                     caption="1K = 1024 tokens; the uncached length is what is prefilled (and routed by t)."))
    return out


def provenance(d: ReportData) -> list[Table]:
    """Where every input comes from, the versions, and the command that reproduces the report."""
    sc = d.scenario
    topo = sc.topology
    rows = [["scenario file", d.scenario_file], ["scenario source", sc.source or "-"],
            ["overrides (--set)", "\n".join(d.overrides) or "none"], ["trace (--trace)", d.trace or "none"],
            ["model", f"{sc.model.name}: {sc.model.source}"]]
    gpus = {g.name: g for s in (topo.prefill, *topo.sites) for g in (s.cluster.instance.gpu,)}
    for gpu in gpus.values():
        rows.append([f"GPU {gpu.name} datasheet", gpu.source or "-"])
        rows.append([f"GPU {gpu.name} efficiency", gpu.efficiency.source if gpu.efficiency else "default"])
    for k, v in d.plan.sources.items():
        rows.append([k, v])
    rows.append(["decode", _decode(sc)])
    if d.kv_rate is not None:
        for s in d.kv_rate.sources:
            rows.append([f"kv-rate on {d.kv_rate.instance}", f"{s.source}: {s.detail}"])
    if d.latency is not None:
        rows.append(["latency", f"analytic model at --load {d.latency_load:g} ({d.latency.rate_rps:.3f} req/s)"])
    if d.simulation is not None:
        n = "the whole trace" if d.simulation_requests is None else f"{d.simulation_requests:,} requests a system"
        rows.append(["simulation", f"discrete-event, simulate's defaults: load 0.8, {n}, seed 0"])
    rows.append(["prfaas-plan version", d.version])
    rows.append(["reproduce with", d.command])
    files = [[f.kind, f.name, f.file, f.source, f.used_for] for f in d.inputs]
    return [table("Provenance", ["input", "source"], rows),
            table("Catalog entries used: every GPU, model, serving-stack profile and measured profile",
                  ["kind", "name", "file", "source", "used for"], files,
                  caption="A bundled file is named by its catalog path; `prfaas-plan hardware`, `models` and `stacks` "
                          "list the catalog.")]
