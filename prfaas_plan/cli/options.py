"""Options shared by every command, declared once.

Output paths (``--output``, ``--plot``, ``--records``) are checked when the command line is read,
before any work: the folder must exist (it is not created), the path must not be a folder and must
be writable, a figure needs an image suffix matplotlib writes. Otherwise one line, exit code 2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.errors import SpecError


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[
    Format,
    typer.Option("--format", "-f", case_sensitive=False, help="table (people), json (complete, stable), csv"),
]
CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option("--catalog", help="Extra catalog folder (models/, hardware/, scenarios/); repeatable. "
                 "Also read from $PRFAAS_PLAN_CATALOG."),
]
PlanAtOpt = Annotated[
    str | None,
    typer.Option("--plan-at", help="Plan at a percentile instead of the typical case: of every link's bandwidth "
                 "law (bandwidth=p10; a law: link.bandwidth {kind: series, file: bw.csv}), of a trace's windowed "
                 "rate (rate=p90, the busy hour; needs a trace), or both, comma-separated; a bare pNN names the "
                 "one law the scenario has", show_default=False),
]

StackOpt = Annotated[
    str | None,
    typer.Option("--stack", help="Serving-stack profile of the time model (`prfaas-plan stacks`; a name or "
                 "YAML file) [default: the catalog's default]", show_default=False),
]


def output_check(option: str, *, image: bool = False) -> Callable[[Path | None], Path | None]:
    """A typer callback refusing an unusable output path up front (see ``io.files.check_output``)."""

    def check(value: Path | None) -> Path | None:
        if value is not None:
            from prfaas_plan.io.files import check_output

            check_output(value, option, image=image)
        return value

    return check


def html_output(value: Path | None) -> Path | None:
    """A typer callback for an HTML page's ``--output``: a usable path ending in .html (or .htm)."""
    if value is not None and value.suffix.lower() not in (".html", ".htm"):
        from prfaas_plan.errors import SpecError

        raise SpecError(f"the page is HTML: give a path ending in .html, got {str(value)!r}", field="--output")
    return output_check("--output")(value)


PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write a figure (PNG/SVG/PDF); the folder must exist",
                                              callback=output_check("--plot", image=True))]


def write_text(path: Path, text: str, option: str) -> None:
    """Write an output file; a failure after the up-front check (disk full) is one line, exit code 2."""
    from prfaas_plan.io.files import write_failed

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise write_failed(option, path, exc) from None


@contextmanager
def naming(**fields: str) -> Iterator[None]:
    """Place an unknown catalog name at the argument or option it came from, by catalog kind:
    ``with naming(models="MODEL", hardware="--hardware"): ...``."""
    try:
        yield
    except SpecError as exc:
        if exc.unknown in fields and exc.source is None and exc.field is None:
            raise exc.at(field=fields[exc.unknown]) from None
        raise


def catalog_from(paths: list[Path] | None):
    from prfaas_plan.io.load import Catalog

    return Catalog.default(paths or ())


# --- the scenario options every scenario command takes

ScenarioArg = Annotated[
    str | None,
    typer.Argument(help="Scenario YAML or catalog name (default: the paper's case study)", show_default=False),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a scenario field by dotted path, e.g. link.bandwidth=10Gbps, "
                 "model=MiniMax-M2.5; repeatable"),
]
MethodOpt = Annotated[str | None, typer.Option("--method", help="paper (stage at its mean length) or exact")]
TraceOpt = Annotated[Path | None, typer.Option(
    "--trace", help="Request trace as the workload: Mooncake or Bailian JSONL, Azure or BurstGPT CSV")]
TraceFormatOpt = Annotated[str | None, typer.Option(
    "--trace-format", help="auto (default: from the file's header or first line), mooncake, azure, burstgpt or "
    "bailian", show_default=False)]
ModelFilterOpt = Annotated[str | None, typer.Option(
    "--model-filter", metavar="NAME", help="BurstGPT: keep only the rows whose Model is NAME (exact, "
    "case-sensitive), e.g. GPT-4")]


def trace_arg(trace: Path | None, trace_format: str | None, model_filter: str | None):
    """What the three trace options give, for ``load_scenario(trace=...)``: None, the file, or a
    ``TraceChoice``; an unknown format is refused here, naming the option."""
    if trace_format is None and model_filter is None:  # the usual case: no reader imported here
        return str(trace) if trace else None
    from prfaas_plan.io.scenario import TraceChoice
    from prfaas_plan.io.trace import FORMAT_CHOICES

    if trace_format is not None and trace_format not in FORMAT_CHOICES:
        raise SpecError(f"unknown trace format {trace_format!r} (use one of {', '.join(FORMAT_CHOICES)})",
                        field="--trace-format")
    return TraceChoice(file=str(trace) if trace else None, format=trace_format, model_filter=model_filter)


def method_choice(method: str | None) -> str | None:
    if method is not None and method not in ("paper", "exact"):
        raise SpecError(f"unknown method {method!r} (use paper or exact)", field="--method")
    return method
