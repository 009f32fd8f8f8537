"""`degrade`: each link at fractions of its bandwidth and down, the plan held and re-planned."""

from __future__ import annotations

from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import (
    CatalogOpt,
    Format,
    FormatOpt,
    MethodOpt,
    ScenarioArg,
    SetOpt,
    catalog_from,
    method_choice,
)


@app.command("degrade")
def degrade(
    scenario: ScenarioArg = None,
    rate: Annotated[str | None, typer.Option("--rate", metavar="R", help="Total arrival rate for the TTFT, req/s "
                                             "(2, 2rps, 120rpm)")] = None,
    load: Annotated[str | None, typer.Option("--load", metavar="F", help="Rate as a fraction of the nominal "
                                             "Lambda_max (0.7 or 70%) [default: 0.7]")] = None,
    levels: Annotated[str, typer.Option("--levels", help="Fractions of each link's nominal bandwidth, 0 = down "
                                        "(100% is always the reference)")] = "50%,10%,0",
    set_: SetOpt = None,
    method: MethodOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """What a misbehaving link costs: for each link, at each level of its bandwidth, the nominal
    plan held (static) and re-planned, TTFT per site at one rate (with slo.ttft, the share of
    requests meeting it), and with the link down what the site needs to serve its load alone.

    Example: prfaas-plan degrade two-regions --load 0.7 --levels 50%,10%,0
    """
    from prfaas_plan.api import degrade as api_degrade
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io.fleet import load_plan_input
    from prfaas_plan.report.views_degrade import emit_degrade
    from prfaas_plan.specs.fleet import FleetSpec
    from prfaas_plan.specs.run import check, parse

    # before the scenario loads: a bad option is told first
    args = check(parse(rate=rate, load=load, requests=None, duration=None, seed=None))
    parsed = api_degrade.parse_levels(levels)
    fs = load_plan_input(scenario, catalog_from(catalog), overrides=set_ or [], method=method_choice(method))
    if isinstance(fs, FleetSpec):
        from prfaas_plan.api.fleet_degrade import degrade as fleet_degrade
        from prfaas_plan.report.views_fleet_degrade import emit_fleet_degrade

        for value, option in ((rate, "--rate"), (load, "--load")):
            if value is not None:
                raise SpecError(f"{option} sets the rate of the TTFT table, which a scenario of several models "
                                "does not have: drop it", field=option)
        emit_fleet_degrade(fmt, fleet_degrade(fs, parsed))
        return
    r = api_degrade.degrade(scenario, catalog_from(catalog), overrides=set_ or [], method=method_choice(method),
                            levels=parsed, rate_rps=args.rate_rps, load=args.load)
    emit_degrade(fmt, r)
