"""`thresholds`: the router's threshold table over link bandwidth x load (``api.thresholds``)."""

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

BandwidthsOpt = Annotated[str | None, typer.Option(
    "--bandwidths", metavar="GRID",
    help="Link bandwidths: a range a..b:n[:log] or a list. One link: absolute (1Gbps..100Gbps:8:log, the default; "
         "10,25,100Gbps), shares of its nominal bandwidth or both (10%,100Gbps); several PD sites: shares of every "
         "link's nominal "
         "bandwidth (10%..100%:4:log, the default)")]
LoadsOpt = Annotated[str, typer.Option(
    "--loads", metavar="LIST", help="Loads as fractions of Lambda_max at each bandwidth, each in (0, 1.5]: a list "
    "or a range a..b:n")]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Also write the table as JSON (CSV with --format csv); the folder must exist",
    callback=output_check("--output"))]


@app.command("thresholds")
def thresholds(
    scenario: ScenarioArg = None,
    bandwidths: BandwidthsOpt = None,
    loads: LoadsOpt = "0.2,0.4,0.6,0.8,1.0",
    set_: SetOpt = None,
    method: MethodOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """The router's threshold table: per PD site, on a grid of link bandwidth x load, the threshold t
    to route by and whether to offload at all, for the scenario's fleet as given.

    At each bandwidth, optimize re-plans the split (N_p / N_d per site) and N_prfaas and gives the
    throughput-optimal t*. At load >= 1 (a fraction of the exact capacity of that configuration)
    the entry is t*. Below 1, the split held, the t minimising the scenario's TTFT statistic
    (slo.ttft_statistic, default p90) in the analytic model, among 48 log-spaced thresholds,
    offload nothing, offload everything and t*, whose capacity exceeds the rate. Several PD sites:
    coordinate descent (each site's t in turn, the others held, from every site at t*; 2 passes)
    on the demand-weighted mean of the sites' statistics. Bad values (a bandwidth <= 0, a load <= 0 or > 1.5, an
    empty list) end with one line naming the option.

    Example: prfaas-plan thresholds --bandwidths 5Gbps,100Gbps --loads 0.5,1 -o table.json
    """
    from prfaas_plan.api.thresholds import parse_bandwidths, parse_loads
    from prfaas_plan.api.thresholds import thresholds as thresholds_
    from prfaas_plan.cli.progress import Bar
    from prfaas_plan.report.render import to_csv, to_json
    from prfaas_plan.report.views_thresholds import emit_thresholds, thresholds_json, thresholds_rows

    parse_loads(loads)  # bad grids are refused before the scenario loads
    if bandwidths is not None:
        parse_bandwidths(bandwidths)
    with Bar() as tick:
        table = thresholds_(scenario, catalog_from(catalog), overrides=set_ or [], bandwidths=bandwidths,
                            loads=loads, method=method_choice(method),
                            trace=trace_arg(trace, trace_format, model_filter),
                            progress=tick)
    payload = thresholds_json(table)
    if output is not None:
        text = to_csv(thresholds_rows(table)) if fmt == Format.csv else to_json(payload) + "\n"
        write_text(output, text, "--output")
        typer.echo(f"wrote {output}", err=True)
    emit_thresholds(fmt.value, table, payload)
