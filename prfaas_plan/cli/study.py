"""`study`: a command at every point of a study file, on all local cores or a Dask cluster."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import app, one_line
from prfaas_plan.cli.options import Format, FormatOpt, html_output, write_text
from prfaas_plan.cli.progress import Bar


class Terminated(BaseException):
    """SIGTERM, raised where the study is (a BaseException, as KeyboardInterrupt: no point records it
    as its own error), so that its engine stops its workers on the way out."""


@contextmanager
def _terminated_on_sigterm() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Terminated

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding caller): its own handling stands
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@app.command("study")
def study(
    file: Annotated[Path, typer.Argument(help="The study (YAML): scenario, command, axes", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Results: .parquet or .csv, one row per point")
                      ] = Path("results.parquet"),
    workers: Annotated[str | None, typer.Option("--workers", metavar="N",
                                                help="Local worker processes (default: every core)")] = None,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", metavar="ADDRESS", help="Run on Dask: tcp://host:8786, or `local` for a local cluster of "
        "--workers processes")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip the points an interrupted run already wrote")
                      ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Run a study estimated at more than a day at the measured "
                                                    "rate (refused without it)")] = False,
) -> None:
    """Run optimize, size, latency or simulate at every point of a study: the cross product of
    its axes (scenario fields, catalog names, ranges, zipped groups) or a seeded sample of it.

    A point that fails records its error in its row; the study goes on and exits 1 if any did.
    A few points run first to measure the rate: a study of more than a day needs --yes, and one of
    more than a few seconds says how long it will take. SIGTERM or Ctrl-C stops every worker and
    keeps the finished points for --resume.

    Example: prfaas-plan study scenarios/studies/fleet.yaml -o fleet.parquet
    """
    from prfaas_plan.api.study import run
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io.study import load_study
    from prfaas_plan.io.study_results import check_output

    n = None
    if workers is not None:
        try:
            n = int(workers)
        except ValueError:
            raise SpecError(f"expected a whole number of processes, got {workers!r}", field="--workers") from None
        if n < 1:
            raise SpecError(f"must be >= 1, got {n}", field="--workers")
    check_output(output)
    spec, _ = load_study(file)
    from prfaas_plan.api.study import StudyStopped
    from prfaas_plan.io.study_results import parts_dir

    def kept() -> str:
        if not parts_dir(output).is_dir():
            return "no point had finished"
        return f"the finished points are in {parts_dir(output)}; run again with --resume to finish the rest"

    try:
        with Bar(rate="points") as tick, _terminated_on_sigterm():
            r = run(spec, output, workers=n, scheduler=scheduler, resume=resume, confirm=yes, progress=tick,
                    notice=lambda line: typer.echo(line, err=True))
    except KeyboardInterrupt:
        typer.echo(f"interrupted: {kept()}", err=True)
        raise typer.Exit(130) from None
    except Terminated:
        typer.echo(f"terminated (SIGTERM): {kept()}", err=True)
        raise typer.Exit(128 + signal.SIGTERM) from None
    except StudyStopped as exc:
        typer.echo(f"error: {one_line(str(exc))}; {kept()}", err=True)
        raise typer.Exit(exc.exit_code) from None
    rate = r.computed / r.elapsed_s if r.elapsed_s > 0 else 0.0
    resumed = f", {r.resumed:,} finished before" if r.resumed else ""
    typer.echo(f"{spec.source}: {r.points:,} points of {spec.command} ({r.engine}, {r.workers} "
               f"worker{'s' if r.workers != 1 else ''}): {r.computed:,} run in {r.elapsed_s:.1f} s "
               f"({rate:,.1f} points/s){resumed}; {r.infeasible:,} infeasible, {r.failed:,} failed; wrote {output}")
    if r.failed:  # exit 1, as an infeasible plan: the inputs were read, some points did not run
        typer.echo(f"error: {r.failed:,} of {r.points:,} points failed; their rows in {output} say why", err=True)
        raise typer.Exit(1)


@app.command("study-report")
def study_report(
    results: Annotated[Path, typer.Argument(help="A study's results (.parquet or .csv)", show_default=False)],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the HTML page here (.html)",
                                                callback=html_output)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The frontiers of a finished study: gain over homogeneous PD against bandwidth per model,
    where PrfaaS-PD stops paying, cost against throughput; in the terminal, or one HTML page.

    Example: prfaas-plan study-report fleet.parquet -o fleet.html
    """
    import shlex

    from prfaas_plan.api.study_report import study_report as build
    from prfaas_plan.report.views_study import emit_study_report

    r = build(results)
    if output is None:
        emit_study_report(fmt.value, r)
        return
    from prfaas_plan import __version__
    from prfaas_plan.report.html_study import render

    command = shlex.join(["prfaas-plan", "study-report", str(results), "-o", str(output)])
    write_text(output, render(r, command, __version__), "--output")
    typer.echo(f"wrote {output}", err=True)
