"""The report's sections in page order: the decision first, then the evidence (the scenario, the
plan, latency, the trace, the topology, sizing, link robustness), the glossary and the provenance.

Each command's tables come from its own view, collected rather than printed (``render.collect``),
so the page holds the numbers the terminal shows.
"""

from __future__ import annotations

import shlex
from typing import Any

from prfaas_plan.report import (
    views,
    views_degrade,
    views_latency,
    views_plan,
    views_sim,
    views_size,
    views_sweep,
)
from prfaas_plan.report.glossary import GLOSSARY
from prfaas_plan.report.html_blocks import Numbered, Section
from prfaas_plan.report.html_decision import as_block, decision
from prfaas_plan.report.html_figures import Figures
from prfaas_plan.report.html_glance import glance, provenance
from prfaas_plan.report.render import collect, table
from prfaas_plan.report.report_data import ReportData
from prfaas_plan.specs.catalog_view import ModelShow
from prfaas_plan.specs.kv_rate import KvRateResult


def sections(d: ReportData, figures: Figures | None = None) -> list[Section]:
    """The page's sections in order; ``figures``: SVG drawn ahead (``html_figures``), else drawn here."""
    fig = Numbered(figures if figures is not None else Figures(parallel=False))
    multi = d.scenario.multi_site
    out = [_decision(d), _scenario(d), _plan(d, fig), _latency(d, fig)]
    if d.trace_stats is not None or d.notes.get("trace"):
        out.append(_trace(d, fig))
    if multi:
        out.append(_topology(d, fig))
    out.append(_sizing(d, fig))  # there even without its tables: the page says why (the notes below)
    if d.degrade is not None or d.notes.get("robustness"):
        out.append(_robustness(d))
    out += [_glossary(), _provenance(d)]
    for sec in out:
        for text in d.notes.get(sec.id, []) + (d.notes.get("sweep", []) if sec.id == "plan" else []):
            sec.note(text)
    return out


def _decision(d: ReportData) -> Section:
    s = Section("decision", "The decision")
    what, rows = decision(d)
    s.intro.append(what)
    s.blocks.append(as_block(rows))
    return s


def _scenario(d: ReportData) -> Section:
    sc = d.scenario
    s = Section("scenario", "Scenario at a glance")
    s.add(glance(d))
    if d.model is not None:
        s.intro.append(f"The model's KV story (`prfaas-plan model show {sc.model.name}`) and its KV throughput on "
                       f"the prefill instance (`prfaas-plan kv-rate`).")
        s.add(collect(views.emit_model, d.model))
        s.add(collect(views.emit_kv_rate, d.kv_rate))
        why = skv_note(d.model, d.kv_rate)
        if why:
            s.note(why)
    return s


def skv_note(model: ModelShow, kv_rate: KvRateResult | None) -> str | None:
    """Why `model show` and `kv-rate` give two S_kv for one length: the architecture's against a
    measured profile's; None where they agree (or nothing is measured)."""
    if kv_rate is None:
        return None
    arch = dict(model.s_kv)
    pairs = [(r.length_tokens, arch[r.length_tokens], r.kv_bytes) for r in kv_rate.rows
             if r.kv_source == "measured" and r.length_tokens in arch]
    off = [(n, a, m) for n, a, m in pairs if abs(a - m) > 1e-3 * m]
    if not off:
        return None
    n, a, m = max(off, key=lambda x: abs(x[1] / x[2] - 1))
    return (f"Two S_kv for one length: `model show` computes S_kv from the architecture ({a / 2**20:,.1f} MiB at "
            f"{n:,} tokens), `kv-rate` and the plan use the measured profile's ({m / 2**20:,.1f} MiB, "
            f"{(a / m - 1) * 100:+.1f}%). The architecture is the catalog's reading of the model; where a profile "
            "measured the bytes, the planner takes the measurement.")


def _plan(d: ReportData, fig: Numbered) -> Section:
    from prfaas_plan.report import plots

    multi = d.scenario.multi_site
    s = Section("plan", "The plan")
    s.intro.append("`prfaas-plan optimize`: the best threshold t and split, what binds, and the systems side by side.")
    s.add(collect(views_plan.emit_plan, d.plan))
    if d.figure5 is not None:
        fig(s, "The paper's Figure 5: (a) Lambda against N_p at the best t, (b) the two prefill bounds against t "
               "with their crossing.", "figure5", plots.figure5, d.figure5)
    if not multi:
        for sw in d.sweeps:
            s.h3("Link sweep")
            s.note(f"`sweep --set {sw.setting}`: the link bandwidth from 1/100 to 4x the scenario's, "
                   f"{len(sw.result.points)} log-spaced points, every other input held.")
            s.add(collect(views_sweep.emit_sweep, sw.result))
            _sweep_figure(fig, s, sw)
    return s


def _latency(d: ReportData, fig: Numbered) -> Section:
    from prfaas_plan.report import plots_report, plots_sim

    s = Section("latency", "Latency")
    if d.latency is not None:
        s.intro.append(f"`prfaas-plan latency --load {d.latency_load:g}`: analytic TTFT at {d.latency_load:.0%} of "
                       "the smallest capacity among the systems (the rate `simulate` runs at by default).")
        s.add(collect(views_latency.emit_latency, d.latency))
    if d.cdf is not None and d.cdf.curves:
        fig(s, "Analytic TTFT CDF of each system at the latency table's rate; the dotted lines are P50, P90 and P99.",
            "cdf", plots_report.ttft_cdf_figure, d.cdf)
    if d.simulation is not None:
        n = "the whole trace" if d.simulation_requests is None else f"{d.simulation_requests:,} requests a system"
        s.h3("Simulated")
        s.note(f"`prfaas-plan simulate` at its defaults: load 0.8, {n}, seed 0.")
        s.add(collect(views_sim.emit_sim, d.simulation))
        if len(d.simulation.sites) == 1:  # the figure draws one PD site's link
            fig(s, "Simulated TTFT CDF of each system and the link's utilisation over time.",
                "simulation", plots_sim.sim_figure, d.simulation)
    elif d.latency is not None:
        s.note("The simulated TTFT (`prfaas-plan simulate`) is left out: add --simulate.")
    return s


def _trace(d: ReportData, fig: Numbered) -> Section:
    from prfaas_plan.report import plots_trace, views_trace

    s = Section("trace", "The trace")
    r = d.trace_stats
    if r is None:
        return s
    s.intro.append(f"`prfaas-plan trace stats {shlex.quote(r.source)}`: its span, its rate over time and how bursty "
                   "it is, its lengths and its prefix reuse.")
    s.add(collect(views_trace.emit_trace_stats, r))
    fig(s, "The trace: (a) arrivals per bin against the mean rate, (b) the input and output length CDFs, (c) the "
           "prefix hit rate against the cache size.", "trace", plots_trace.trace_figure, r)
    wl = d.scenario.workload
    rp = wl.rate_profile
    taken = ["the uncached lengths after the prefix-cache replay are the workload"]
    if rp is not None:
        taken.append(f"the latency model evaluates each of its {rp.windows} windows of {rp.bin_s:g} s at its own rate "
                     f"(peak-to-mean {rp.peak_to_mean:.2f}: the binned rate with its Poisson counting noise shrunk "
                     "away) with the gaps' SCV measured inside them "
                     f"({rp.arrival_scv:.2f}; 1 is Poisson)")
    if d.sizing is not None and d.sizing.demand_source:
        taken.append(f"sizing takes its demand from it ({d.sizing.demand_source})")
    s.note("What the planner takes from the trace: " + "; ".join(taken) + ".")
    return s


def _topology(d: ReportData, fig: Numbered) -> Section:
    sc = d.scenario
    s = Section("topology", "Topology")
    s.intro.append(f"One prefill service ({sc.topology.prefill.name}) for {len(sc.topology.sites)} PD sites. "
                   "Per link, how the joint plan moves as that link's bandwidth varies (the others held).")
    for sw in d.sweeps:
        s.h3(f"Link {sw.link}")
        s.note(f"`sweep --set {sw.setting}`: 1/100 to 4x the link's bandwidth, {len(sw.result.points)} log-spaced "
               "points.")
        s.add(collect(views_sweep.emit_sweep, sw.result))
        _sweep_figure(fig, s, sw)
    return s


def _sizing(d: ReportData, fig: Numbered) -> Section:
    from prfaas_plan.report import plots_size

    s = Section("sizing", "Sizing")
    if d.sizing is not None:
        s.intro.append("`prfaas-plan size`: the cheapest fleet and link tiers for the scenario's sizing: section "
                       "(the first screen says why the cheapest plan routes as it does).")
        s.add(collect(views_size.emit_size, d.sizing, timed=False))
        fig(s, "Cost against demand, and the link-versus-GPU trade (or cost against the TTFT bound).",
            "sizing", plots_size.size_figure, d.sizing)
    elif d.scenario.sizing is None:
        s.note("The cheapest fleet (`prfaas-plan size`) is left out: the scenario has no sizing: section (the demand, "
               "headroom, candidate instances and link tiers it weighs; see scenarios/paper-case-study.yaml).")
    return s


def _robustness(d: ReportData) -> Section:
    s = Section("robustness", "Link robustness")
    if d.degrade is not None:
        s.intro.append("`prfaas-plan degrade`: each link at 50%, 10% and down, the plan held and re-planned.")
        s.add(collect(views_degrade.emit_degrade, d.degrade))
    bundled = d.scenario_file == "-" or d.scenario_file.endswith(")")  # "(bundled with prfaas-plan)": by name
    ref = shlex.quote(d.scenario.name if bundled else d.scenario_file)
    s.note(f"The router's threshold table (`prfaas-plan thresholds {ref}`) is not run here: it takes tens of "
           "seconds.")
    return s


def _glossary() -> Section:
    s = Section("glossary", "Glossary")
    s.intro.append("The symbols of the tables, in words (docs/model.md#symbols holds them with their equations).")
    s.add([table(None, ["symbol", "meaning", "unit"], [list(row) for row in GLOSSARY])])
    return s


def _provenance(d: ReportData) -> Section:
    s = Section("provenance", "Provenance")
    s.intro.append("Where every input comes from (the file it was read from and the public source it names), and "
                   "the command that reproduces this report.")
    s.add(provenance(d))
    return s


def _sweep_figure(fig: Numbered, s: Section, sw: Any) -> None:
    from prfaas_plan.report import plots

    if sw.result.feasible:
        fig(s, f"Lambda_max and the best threshold t against the bandwidth of {sw.link} (circled: the link binds).",
            f"sweep:{sw.setting}", plots.sweep_figure, sw.result)
