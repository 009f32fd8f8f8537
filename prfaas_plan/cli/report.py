"""`report`: one self-contained HTML file of a scenario's plan, tables and figures."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import (
    CatalogOpt,
    MethodOpt,
    ModelFilterOpt,
    PlanAtOpt,
    ScenarioArg,
    SetOpt,
    TraceFormatOpt,
    TraceOpt,
    catalog_from,
    html_output,
    method_choice,
    trace_arg,
    write_text,
)

OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="Write the report here (.html); the folder must "
                                         "exist", callback=html_output, show_default=False)]


def command_line(scenario: str | None, set_: list[str] | None, method: str | None, trace: Path | None,
                 simulate: bool, catalog: list[Path] | None, output: Path, trace_format: str | None = None,
                 model_filter: str | None = None, plan_at: str | None = None) -> str:
    """The shell command that writes this report again, with the options as given."""
    argv = ["prfaas-plan", "report", *([scenario] if scenario is not None else [])]
    for item in set_ or []:
        argv += ["--set", item]
    argv += ["--method", method] if method is not None else []
    argv += ["--trace", str(trace)] if trace is not None else []
    argv += ["--trace-format", trace_format] if trace_format is not None else []
    argv += ["--model-filter", model_filter] if model_filter is not None else []
    argv += ["--simulate"] if simulate else []
    argv += ["--plan-at", plan_at] if plan_at is not None else []
    for folder in catalog or []:
        argv += ["--catalog", str(folder)]
    return shlex.join([*argv, "-o", str(output)])


@app.command("report")
def report(
    scenario: ScenarioArg = None,
    output: OutputOpt = ...,  # type: ignore[assignment]
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    simulate: Annotated[bool, typer.Option("--simulate", help="Add the simulated TTFT (simulate at its defaults: "
                                           "load 0.8, 20,000 requests a system); off by default")] = False,
    plan_at: PlanAtOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """One self-contained HTML file for a design review: first the decision (the plan, its gains,
    cost, what binds, what to buy, the link's risk), then the evidence: the scenario, the plan with
    Figure 5 and a link sweep, TTFT, the trace (with --trace), sizing, link robustness, a glossary
    and where every input comes from.

    The tables are those of optimize, sweep, latency, trace stats, size, degrade, model show and
    kv-rate; the file fetches nothing (figures inline as SVG), so it can be mailed as it is. The
    same inputs give the same bytes (write it with a relative -o to keep local paths out).

    Example: prfaas-plan report -o report.html
    """
    from prfaas_plan.io.scenario import is_fleet_file
    from prfaas_plan.report.html_figures import Figures

    chosen = trace_arg(trace, trace_format, model_filter)
    cmd = command_line(scenario, set_, method, trace, simulate, catalog, output, trace_format, model_filter, plan_at)
    if is_fleet_file(scenario, catalog_from(catalog)):
        _fleet(scenario, set_, method, catalog, trace, plan_at, simulate, cmd, output)
        return
    with Figures() as figures:  # a second process, started first, draws the figures while the rest computes
        from prfaas_plan.api.report import report as report_
        from prfaas_plan.report.html import render

        data = report_(scenario, catalog_from(catalog), overrides=set_, method=method_choice(method),
                       trace=chosen, simulate=simulate, command=cmd, ready=figures.offer, plan_at=plan_at)
        html = render(data, figures)
    write_text(output, html, "--output")
    typer.echo(f"wrote {output}", err=True)


def _fleet(scenario, set_, method, catalog, trace, plan_at, simulate: bool, cmd: str, output: Path) -> None:
    """A scenario of several models: its plan, sizing, robustness and (--simulate) TTFT."""
    from prfaas_plan.api.fleet_report import report as fleet_report
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io.fleet import load_plan_input

    for value, option in ((trace, "--trace"), (plan_at, "--plan-at")):
        if value is not None:
            raise SpecError(f"{option} is for a scenario of one model; this one lists several (models:)",
                            field=option)
    fs = load_plan_input(scenario, catalog_from(catalog), overrides=set_, method=method_choice(method))
    write_text(output, fleet_report(fs, simulate=simulate, command=cmd), "--output")
    typer.echo(f"wrote {output}", err=True)
