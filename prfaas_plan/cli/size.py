"""`size`: the cheapest fleet and link tiers for a demand under the SLOs."""

from __future__ import annotations

from pathlib import Path
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
    output_check,
    trace_arg,
    write_text,
)

DemandOpt = Annotated[str | None, typer.Option("--demand", help="Total demand, e.g. 40rps (replaces sizing.demand)")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Write the chosen plan as a scenario YAML "
                                                "that optimize and simulate load; the folder must exist",
                                                callback=output_check("--output"))]


@app.command("size")
def size(
    scenario: ScenarioArg = None,
    demand: DemandOpt = None,
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    plan_at: PlanAtOpt = None,
    output: OutputOpt = None,
    plot: PlotOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """What to buy: the cheapest prefill service, PD fleets and link tiers serving a demand under the SLOs,
    against homogeneous PD on each candidate GPU, with the link-versus-GPU trade and the cost curves.

    The scenario's sizing: section lists the candidates (see scenarios/paper-case-study.yaml). With
    --trace the demand is the trace's mean rate, and with --plan-at rate=p90 its busy hour's.

    Example: prfaas-plan size --demand 30rps -o plan.yaml && prfaas-plan optimize plan.yaml
    """
    from prfaas_plan.api import plan_at as plan_at_
    from prfaas_plan.api.size import size as size_
    from prfaas_plan.cli.options import method_choice
    from prfaas_plan.io.fleet import load_plan_input
    from prfaas_plan.report.views_size import emit_size
    from prfaas_plan.specs.fleet import FleetSpec

    cat = catalog_from(catalog)
    sc = load_plan_input(scenario, cat, overrides=set_, method=method_choice(method), demand=demand,
                         trace=trace_arg(trace, trace_format, model_filter))
    if isinstance(sc, FleetSpec):
        _size_fleet(sc, fmt.value, plan_at=plan_at, output=output, plot=plot)
        return
    result = size_(plan_at_.sized_at(sc, plan_at))
    emit_size(fmt.value, result)
    if plot is not None:
        from prfaas_plan.report.plots_size import size_figure

        size_figure(result, plot)
        typer.echo(f"wrote {plot}", err=True)
    if output is not None:
        _write_plan(scenario, set_, method, demand, cat, sc, result, output)


def _size_fleet(fs, fmt: str, *, plan_at: object, output: object, plot: object) -> None:
    from prfaas_plan.api.fleet_size import size as size_fleet
    from prfaas_plan.errors import SpecError
    from prfaas_plan.report.views_fleet_size import emit_fleet_size

    for value, option in ((plan_at, "--plan-at"), (output, "--output"), (plot, "--plot")):
        if value is not None:
            raise SpecError(f"{option} is for a scenario of one model; this one lists several (models:)",
                            field=option)
    emit_fleet_size(fmt, size_fleet(fs))


def _write_plan(scenario, set_, method, demand, cat, sc, result, output: Path) -> None:
    """The plan as a scenario, then `optimize` on it to confirm Lambda_max >= demand / headroom."""
    import yaml

    from prfaas_plan.api.optimize import optimize
    from prfaas_plan.api.size_plan import plan_file
    from prfaas_plan.cli.options import method_choice
    from prfaas_plan.errors import InfeasibleError
    from prfaas_plan.io.scenario import load_scenario, scenario_mapping
    from prfaas_plan.report.plan_yaml import plan_mapping

    f = plan_file(sc, result)
    if f.plan is not result.best:
        typer.echo(f"the cheapest plan offloads nothing; {output} holds the cheapest PrfaaS-PD plan, "
                   f"${f.extra_per_hour:,.2f}/h more", err=True)
    path, placed = scenario_mapping(scenario, cat, overrides=set_, method=method_choice(method), demand=demand)
    mapping = plan_mapping(placed.data, str(path), result, f.plan, derived_decode=f.derived_decode,
                           narrowest_bytes_per_s=f.narrowest_bytes_per_s, homogeneous=f.homogeneous)
    header = (f"# written by `prfaas-plan size` from {path}: the cheapest plan for {result.demand_rps:g} req/s\n"
              "# at headroom {:g}; `prfaas-plan optimize` and `simulate` load it as it is.\n").format(result.headroom)
    write_text(output, header + yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True), "--output")
    check = optimize(load_scenario(str(output), cat), ttft_slo=False).result
    lam = next(iter(check.methods.values())).best.lambda_max_rps
    target = result.demand_rps / result.headroom
    verdict = ">=" if lam >= target * (1 - 1e-9) else "<"
    typer.echo(f"wrote {output}; optimize on it: Lambda_max {lam:.4f} req/s {verdict} demand / headroom "
               f"{target:.4f} req/s", err=True)
    if verdict == "<":
        raise InfeasibleError(f"--output: the written plan serves {lam:.4f} req/s, below demand / headroom "
                              f"{target:.4f}", binding="size")
