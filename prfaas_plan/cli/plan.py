"""`optimize` and `sweep`: the best threshold and split for a scenario, and how they move."""

from __future__ import annotations

from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import (
    CatalogOpt,
    Format,
    FormatOpt,
    MethodOpt,
    ModelFilterOpt,
    PlanAtOpt,
    PlotOpt,
    ScenarioArg,
    SetOpt,
    TraceFormatOpt,
    TraceOpt,
    catalog_from,
    method_choice,
    trace_arg,
)


@app.command("optimize")
def optimize(
    scenario: ScenarioArg = None,
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    plot: PlotOpt = None,
    plan_at: PlanAtOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Best threshold t and prefill/decode split, against homogeneous and naive heterogeneous PD.

    With a link's bandwidth given as a law ({kind: empirical|quantiles|series, ...}), also how the
    plan at the median and the plan at P10 hold up across it.

    Example: prfaas-plan optimize --set link.bandwidth=10Gbps --plot fig5.png
    """
    from prfaas_plan.api.optimize import optimize as optimize_
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io.fleet import load_plan_input
    from prfaas_plan.report import views_plan
    from prfaas_plan.specs.fleet import FleetSpec

    sc = load_plan_input(scenario, catalog_from(catalog), overrides=set_, method=method_choice(method),
                         trace=trace_arg(trace, trace_format, model_filter))
    if isinstance(sc, FleetSpec):
        _optimize_fleet(sc, fmt, plot=plot, plan_at=plan_at)
        return
    if len(sc.topology.sites) > 1 and plot is not None:
        raise SpecError("--plot draws Figure 5 of one PD site; this scenario has several", field="--plot")
    result = optimize_(sc, plan_at=plan_at)
    if plot is not None:
        from prfaas_plan.api.figures import figure5_data
        from prfaas_plan.report.plots import figure5

        figure5(figure5_data(result), plot)
        typer.echo(f"wrote {plot}", err=True)
    views_plan.emit_plan(fmt, result.result)


def _optimize_fleet(fs, fmt: str, *, plot: object, plan_at: object) -> None:
    from prfaas_plan.api.fleet import plan
    from prfaas_plan.errors import SpecError
    from prfaas_plan.report.views_fleet import emit_fleet

    for value, option in ((plot, "--plot"), (plan_at, "--plan-at")):
        if value is not None:
            raise SpecError(f"{option} is for a scenario of one model; this one lists several (models:)",
                            field=option)
    result = plan(fs)
    emit_fleet(fmt, result)


@app.command("sweep")
def sweep(
    scenario: ScenarioArg = None,
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    log: Annotated[bool, typer.Option("--log", help="Logarithmic steps (also `a..b:n:log`)")] = False,
    plot: PlotOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """How the optimum moves as one input varies: give one --set as a range `key=a..b:n`.

    Example: prfaas-plan sweep --set link.bandwidth=1Gbps..100Gbps:20 --log
    """
    from prfaas_plan.api import sweep as api_sweep
    from prfaas_plan.cli.progress import Bar
    from prfaas_plan.report import views_sweep

    with Bar() as tick:
        result = api_sweep.sweep(scenario, catalog_from(catalog), overrides=set_ or [], method=method_choice(method),
                                trace=trace_arg(trace, trace_format, model_filter), log=log, progress=tick)
    if plot is not None:
        from prfaas_plan.report.plots import sweep_figure

        sweep_figure(result, plot)
        typer.echo(f"wrote {plot}", err=True)
    views_sweep.emit_sweep(fmt, result)
