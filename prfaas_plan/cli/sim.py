"""`simulate`: discrete-event simulation of PrfaaS-PD and the baselines at one arrival rate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import (
    CatalogOpt,
    Format,
    FormatOpt,
    MethodOpt,
    ModelFilterOpt,
    PlotOpt,
    ScenarioArg,
    SetOpt,
    TraceFormatOpt,
    TraceOpt,
    catalog_from,
    method_choice,
    output_check,
    trace_arg,
    write_text,
)
from prfaas_plan.cli.progress import Bar
from prfaas_plan.errors import SpecError

# numbers are read as text and parsed by specs.run.parse, so a bad value is one line and exit code 2
RequestsOpt = Annotated[str | None, typer.Option("--requests", metavar="N",
                                                 help="Requests per system (default 20,000; a trace: all of it)")]
DurationOpt = Annotated[str | None, typer.Option("--duration", metavar="S",
                                                 help="Seconds of arrivals per system instead, e.g. 3600 or 2h")]
RateOpt = Annotated[str | None, typer.Option("--rate", metavar="R", help="Arrival rate, req/s (same for all)")]
LoadOpt = Annotated[str | None, typer.Option("--load", metavar="F", help="Fraction of the smallest Lambda_max "
                                             "among the systems (default 0.8)")]
SeedOpt = Annotated[str | None, typer.Option("--seed", metavar="N", help="Random seed, default 0 (one stream per "
                                             "system; not with --trace, which draws nothing at random)")]
RecordsOpt = Annotated[Path | None, typer.Option("--records", help="Write per-request records to this CSV",
                                                 callback=output_check("--records"))]


@app.command("simulate")
def simulate(
    scenario: ScenarioArg = None,
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    requests: RequestsOpt = None,
    duration: DurationOpt = None,
    rate: RateOpt = None,
    load: LoadOpt = None,
    seed: SeedOpt = None,
    plot: PlotOpt = None,
    records: RecordsOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Simulate PrfaaS-PD, homogeneous PD and naive heterogeneous PD at the same arrival rate.

    Measures TTFT (mean, P50, P90, P99; overall and per path), throughput, pool and link
    utilisation, and the prefix hit rate of a trace, beside the analytic TTFT.

    Example: prfaas-plan simulate --load 0.8 --requests 50000 --plot sim.png
    """
    from prfaas_plan.api import sim as api_sim
    from prfaas_plan.io.fleet import load_plan_input
    from prfaas_plan.report import views_sim
    from prfaas_plan.specs.fleet import FleetSpec
    from prfaas_plan.specs.run import parse

    args = parse(rate=rate, load=load, requests=requests, duration=duration, seed=seed)  # before the scenario loads
    sc = load_plan_input(scenario, catalog_from(catalog), overrides=set_, method=method_choice(method),
                         trace=trace_arg(trace, trace_format, model_filter))
    if isinstance(sc, FleetSpec):
        for given, option in ((plot, "--plot"), (records, "--records")):
            if given is not None:
                raise SpecError(f"{option} covers one model; this scenario lists several (models:)", field=option)
        from prfaas_plan.api.fleet_sim import simulate as simulate_fleet
        from prfaas_plan.report.views_fleet import emit_fleet_sim

        emit_fleet_sim(fmt, simulate_fleet(sc, **args.keywords()))
        return
    if len(sc.topology.sites) > 1:
        for given, option in ((plot, "--plot"), (records, "--records")):
            if given is not None:
                raise SpecError(f"{option} covers one PD site; this scenario has several", field=option)
    with Bar() as tick:
        run = api_sim.simulate(sc, **args.keywords(), records=records is not None, progress=tick)
    if plot is not None:
        from prfaas_plan.report.plots_sim import sim_figure

        sim_figure(run, plot)
        typer.echo(f"wrote {plot}", err=True)
    if records is not None:
        _write_records(run, records)
        typer.echo(f"wrote {records}", err=True)
    views_sim.emit_sim(fmt, run)


def _write_records(run: Any, path: Path) -> None:
    from prfaas_plan.report.render import to_csv

    # every time column in seconds says so in its name (arrived_at_s ... completed_at_s, ttft_s)
    rows = [{"system": name} | {(k + "_s" if k.endswith("_at") else k): v for k, v in rec.items()}
            for name, res in run.at_site(run.sites[0]).items() for rec in (res.records or [])]
    write_text(path, to_csv(rows), "--records")
