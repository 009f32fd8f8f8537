"""The report of a scenario of several models: the decision first, then each fleet command's own
tables (``render.collect``, as the one-model report does), on the same self-contained page."""

from __future__ import annotations

from prfaas_plan.report.glossary import GLOSSARY
from prfaas_plan.report.html import page
from prfaas_plan.report.html_blocks import Section
from prfaas_plan.report.render import collect, table
from prfaas_plan.report.views_plan import fixed
from prfaas_plan.specs.fleet import FleetDegradeResult, FleetPlanResult, FleetSimulateRun, FleetSizingResult
from prfaas_plan.specs.fleet_latency import FleetLatencyResult


def _decision(r: FleetPlanResult, z: FleetSizingResult | None, g: FleetDegradeResult, sim: FleetSimulateRun | None,
              lat: FleetLatencyResult) -> Section:
    m = r.methods[r.method]
    b = m.best
    s = Section("decision", "The decision")
    assign = ", ".join(f"{e.label} {e.n_prfaas}" for e in b.entries)
    rows = [["serves", f"{fixed(b.lambda_max_rps, 3)} req/s in total, each model at its demand share "
                       f"(method {r.method}); bound by {b.binding}"],
            ["the prefill service", f"{r.prefill.instances} x {r.prefill.gpus_per_instance}x{r.prefill.hardware}, "
                                    f"instances per model: {assign}"],
            ["against separate services", "-" if m.ratios.shared_vs_separate is None
             else f"{m.ratios.shared_vs_separate:.2f}x the requests of the same service cut by demand share"],
            ["against homogeneous PD", "-" if m.ratios.shared_vs_homogeneous is None
             else f"{m.ratios.shared_vs_homogeneous:.2f}x"]]
    if z is not None:
        alone = "" if z.separate_per_hour is None else f" (each model alone: ${z.separate_per_hour:,.2f}/h)"
        rows.append(["what to buy", f"${z.per_hour:,.2f}/h for {fixed(z.demand_rps, 3)} req/s at headroom "
                                    f"{z.headroom:g}{alone}"])
    for link, levels in g.links:
        half = next((lv for lv in levels if lv.level == 0.5), None)
        down = next((lv for lv in levels if lv.level == 0.0), None)
        if half is not None and down is not None:
            rows.append([f"if {link} degrades", f"at half its bandwidth the plan held serves "
                                                f"{fixed(half.static_rps, 3)} req/s, re-planned {_replan(half)}; "
                                                f"down, {_replan(down)}"])
    t = lat.systems["prfaas"]
    if t.ttft_p90_s is not None:
        rows.append(["TTFT", f"P90 {t.ttft_p90_s:.2f} s at {fixed(lat.rate_rps, 3)} req/s ({t.load * 100:.0f}% of "
                             "its capacity; analytic)"])
    if sim is not None:
        run = sim.systems["prfaas"]
        p90 = run.result.ttft.quantile(0.9)
        rows.append(["simulated TTFT", f"P90 {p90:.2f} s at {fixed(sim.rate_rps, 3)} req/s "
                                       f"({run.load * 100:.0f}% of its capacity)"])
    s.add([table(None, ["", ""], rows)])
    return s


def _replan(lv) -> str:
    return fixed(lv.replan.lambda_max_rps if lv.replan else 0.0, 3)


def _section(sid: str, title: str, intro: str, items: list) -> Section:
    s = Section(sid, title)
    s.intro.append(intro)
    s.add(items)
    return s


def render_fleet(r: FleetPlanResult, z: FleetSizingResult | None, g: FleetDegradeResult,
                 sim: FleetSimulateRun | None, lat: FleetLatencyResult, *, version: str, command: str,
                 sizing_note: str = "") -> str:
    """The page; ``sizing_note``: why the sizing section holds no fleet (``z`` None)."""
    from prfaas_plan.report.views_fleet import emit_fleet, emit_fleet_sim
    from prfaas_plan.report.views_fleet_degrade import emit_fleet_degrade
    from prfaas_plan.report.views_fleet_latency import emit_fleet_latency
    from prfaas_plan.report.views_fleet_size import emit_fleet_size

    sections = [_decision(r, z, g, sim, lat),
                _section("plan", "The plan (optimize)", "The assignment of the prefill service and each site's "
                         "instances to the models, each model's threshold, and the shared link.",
                         collect(emit_fleet, r))]
    sections.append(_section("latency", "TTFT (latency)", "The analytic TTFT of the plan and of separate services "
                             f"at {lat.load * 100:.0f}% of the smaller capacity.",
                             collect(emit_fleet_latency, lat)))
    if sim is not None:
        sections.append(_section("simulated", "Simulated TTFT (simulate)", "The plan and separate services at the "
                                 "same rate.", collect(emit_fleet_sim, sim)))
    if z is not None:
        sections.append(_section("sizing", "What to buy (size)", "The cheapest fleet for the scenario's demand.",
                                 collect(emit_fleet_size, z)))
    else:
        sections.append(Section("sizing", "What to buy (size)"))
        sections[-1].note(sizing_note)
    sections.append(_section("robustness", "When the link misbehaves (degrade)", "Each link at half, a tenth and "
                             "none of its bandwidth.", collect(emit_fleet_degrade, g)))
    gl = Section("glossary", "Glossary")
    gl.add([table(None, ["symbol", "meaning", "unit"], [list(row) for row in GLOSSARY])])
    src = Section("provenance", "Provenance")
    src.intro.append("Where every service law comes from, per model, and the command that writes this report again.")
    src.add([table(None, ["input", "source"], [[k, v] for k, v in r.sources.items()]), f"command: {command}"])
    models = ", ".join(m.name for m in r.models)
    return page(title=f"prfaas-plan report: {r.scenario}", scenario=r.scenario, model=models, version=version,
                command=command, sections=[*sections, gl, src])
