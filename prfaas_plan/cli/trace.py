"""`trace stats`: what a request trace holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import WarningsGroup, app
from prfaas_plan.cli.options import CatalogOpt, Format, FormatOpt, ModelFilterOpt, PlotOpt, TraceFormatOpt, catalog_from

trace_app = typer.Typer(cls=WarningsGroup, help="Inspect a request trace.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")


@trace_app.command("stats")
def stats(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Trace file: Mooncake JSONL, Azure CSV, BurstGPT CSV, "
                                         "Bailian JSONL")],
    trace_format: TraceFormatOpt = None,
    model_filter: ModelFilterOpt = None,
    cache_tokens: Annotated[list[str] | None, typer.Option(
        "--cache-tokens", help="Prefix cache size in tokens (64K, 1M; K = 1024); repeatable. "
        "Default: 1/2, 1/4 and 1/10 of the trace's distinct blocks")] = None,
    cache_gib: Annotated[list[str] | None, typer.Option(
        "--cache-gib", help="Prefix cache size in GiB of --model's KV (100, 100GiB or 107GB); repeatable")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Catalog model (or YAML) whose KV fills --cache-gib")]
    = None,
    bin_: Annotated[str | None, typer.Option("--bin", help="Arrival bin, e.g. 60s or 5min (default: ~60 bins "
                                             "over the span)")] = None,
    plot: PlotOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Count, span and arrival rate over time, input/output length quantiles and, where the trace hashes its
    prefixes, the prefix-cache hit rate by cache size (unknown for traces without hashes).

    \b
    Example: prfaas-plan trace stats tests/fixtures/traces/mooncake_synthetic_trace.jsonl
    """
    from prfaas_plan.api.trace_stats import trace_stats
    from prfaas_plan.report.views_trace import emit_trace_stats

    r = trace_stats(file, trace_format=trace_format, model_filter=model_filter, bin=bin_,
                    cache_tokens=cache_tokens or (), cache_gib=cache_gib or (), model=model,
                    catalog=catalog_from(catalog), curve=plot is not None)
    emit_trace_stats(fmt.value, r)
    if plot is not None:
        from prfaas_plan.report.plots_trace import trace_figure

        trace_figure(r, plot)
        typer.echo(f"wrote {plot}", err=True)
