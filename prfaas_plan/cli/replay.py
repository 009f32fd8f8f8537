"""`replay`: the PrfaaS-PD plan on a replayed bandwidth series, under each router policy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import CatalogOpt, Format, FormatOpt, PlotOpt, ScenarioArg, SetOpt, catalog_from
from prfaas_plan.cli.sim import DurationOpt, LoadOpt, RateOpt, SeedOpt

SeriesOpt = Annotated[Path | None, typer.Option("--series", help="CSV time_s,bandwidth to replay (default: the "
                                                "scenario's link.bandwidth when it is {kind: series, file: ...})")]
PoliciesOpt = Annotated[str, typer.Option("--policies", help="Router policies to compare: static, rule, table")]
WindowOpt = Annotated[str, typer.Option("--window", help="Timeline window, e.g. 300s or 5min")]


@app.command("replay")
def replay(
    scenario: ScenarioArg = None,
    series: SeriesOpt = None,
    policies: PoliciesOpt = "static,rule,table",
    set_: SetOpt = None,
    load: LoadOpt = None,
    rate: RateOpt = None,
    duration: DurationOpt = None,
    seed: SeedOpt = None,
    window: WindowOpt = "300s",
    plot: PlotOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Replay a link bandwidth series in the simulator: static t, the paper's link-utilisation rule and the
    threshold table (`prfaas-plan thresholds`) on the same series and arrivals; TTFT and SLO attainment over time.

    Example: prfaas-plan replay --series tests/fixtures/bandwidth/diurnal.csv --set slo.ttft=8s --plot replay.png
    """
    from prfaas_plan.api import replay as api_replay
    from prfaas_plan.io.bandwidth import read_series
    from prfaas_plan.io.scenario import load_scenario
    from prfaas_plan.report.views_replay import emit_replay, replay_figure
    from prfaas_plan.specs.run import check, parse, read_duration

    args = check(parse(rate=rate, load=load, requests=None, duration=duration, seed=seed))
    window_s = read_duration(window, "--window")
    names = tuple(p.strip() for p in policies.split(",") if p.strip())
    cat = catalog_from(catalog)
    sc = load_scenario(scenario, cat, overrides=set_)
    law = read_series(series) if series is not None else sc.link.bandwidth_law
    s = api_replay.series_from_law(sc, law)
    api_replay.check(sc, names)
    api_replay.run_size(sc, s, rate_rps=args.rate_rps, load=args.load, duration_s=args.duration_s,
                        source=str(series) if series is not None else law.source or None)
    table = None
    if "table" in names:
        table = api_replay.lookup(api_replay.table_for(scenario, cat, list(set_ or []), sc, s))
    r = api_replay.replay(sc, s, rate_rps=args.rate_rps, load=args.load, duration_s=args.duration_s,
                          seed=args.seed or 0, policies=names, table=table, window_s=window_s)
    emit_replay(fmt.value, r)
    if plot is not None:
        replay_figure(r, plot)
        typer.echo(f"wrote {plot}", err=True)

