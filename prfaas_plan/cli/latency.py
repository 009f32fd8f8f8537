"""`latency`: analytic TTFT (mean, P50, P90, P99) per path and TPOT at one arrival rate."""

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
    ScenarioArg,
    SetOpt,
    TraceFormatOpt,
    TraceOpt,
    catalog_from,
    method_choice,
    trace_arg,
)


@app.command("latency")
def latency(
    scenario: ScenarioArg = None,
    rate: Annotated[str | None, typer.Option("--rate", metavar="R",
                                             help="Arrival rate, req/s (2, 2rps, 120rpm)")] = None,
    load: Annotated[str | None, typer.Option("--load", metavar="F", help="Fraction of the smallest Lambda_max "
                                             "among the systems (same rate for all; 0.8 or 80%)")] = None,
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """TTFT per path and overall, TPOT, for PrfaaS-PD and the baselines at one arrival rate.

    A scenario of several models (models:): the plan against separate services, per model.

    Above capacity it names the unstable stage instead of printing huge numbers.

    Example: prfaas-plan latency --load 0.8
    """
    from prfaas_plan.api import latency as api_latency
    from prfaas_plan.io.fleet import load_plan_input
    from prfaas_plan.report import views_latency
    from prfaas_plan.specs.fleet import FleetSpec
    from prfaas_plan.specs.run import check, parse

    args = check(parse(rate=rate, load=load, requests=None, duration=None, seed=None))  # before any work
    rate, load = args.rate_rps, args.load  # type: ignore[assignment]  # the options read: req/s, a fraction
    sc = load_plan_input(scenario, catalog_from(catalog), overrides=set_, method=method_choice(method),
                         trace=trace_arg(trace, trace_format, model_filter))
    if isinstance(sc, FleetSpec):
        from prfaas_plan.api.fleet_latency import latency as fleet_latency
        from prfaas_plan.report.views_fleet_latency import emit_fleet_latency

        emit_fleet_latency(fmt, fleet_latency(sc, rate_rps=rate, load=load))
        return
    from prfaas_plan.api.sim import trace_check

    views_latency.emit_latency(fmt, trace_check(sc, api_latency.latency(sc, rate_rps=rate, load=load)))
