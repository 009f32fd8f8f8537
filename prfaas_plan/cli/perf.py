"""`perf` (analytic prefill and decode tables, BS_max) and `calibrate` (fit a GPU's efficiencies)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import CatalogOpt, Format, FormatOpt, StackOpt, catalog_from, output_check
from prfaas_plan.errors import SpecError


def _parse(parser, text: str, field: str):
    try:
        return parser(text)
    except ValueError as exc:
        raise SpecError(str(exc), field=field) from None


def _duration(text: str) -> float:
    """A duration with its unit ("25ms", "0.025s"); a bare number is refused, not read as seconds."""
    from prfaas_plan import units

    try:
        float(text)
    except ValueError:
        return units.parse_duration(text)
    raise ValueError(f"{text!r} needs a unit, e.g. 25ms or 0.025s")


def _batches(text: str) -> list[int]:
    from prfaas_plan import units

    out = []
    for part in units.split_items(text, "batch size"):
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"{part!r} is not a positive whole batch size")
        out.append(int(part))
    return out


@app.command("perf")
def perf(
    model: Annotated[str, typer.Argument(help="Catalog name, model YAML, or HuggingFace config.json")],
    hardware: Annotated[str, typer.Option("--hardware", help="GPU of one instance")] = "H200",
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs per instance (TP/EP over all of them)")] = 8,
    lengths: Annotated[str | None, typer.Option(
        "--lengths", help="Prefill lengths; 1K = 1024 tokens [default: 1K,8K,32K,128K within the model's context]",
        show_default=False)] = None,
    batches: Annotated[str, typer.Option("--batches", help="Decode batch sizes")] = "1,8,32,64",
    context: Annotated[str, typer.Option("--context", help="Decode context (tokens per request)")] = "32K",
    tpot: Annotated[str, typer.Option(
        "--tpot", help="Decode SLO per output token, with a unit (25ms or 0.025s; 25ms = 40 tokens/s)")] = "25ms",
    output_len: Annotated[str, typer.Option("--output-len", help="Output tokens per request (req/s)")] = "1K",
    memory_fraction: Annotated[float, typer.Option("--memory-fraction", help="HBM share for weights + KV")] = 0.9,
    allow_beyond_context: Annotated[bool, typer.Option(
        "--allow-beyond-context", help="Extrapolate past the model's max_position_embeddings")] = False,
    stack: StackOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Analytic prefill time per length and decode step per batch, with the bound of each row and
    BS_max for a TPOT SLO (efficiencies from the hardware catalog).

    Example: prfaas-plan perf internal-1t --hardware H20 --gpus 8 --context 28K --tpot 25ms
    """
    from prfaas_plan import units
    from prfaas_plan.api import perf as api_perf
    from prfaas_plan.report import views_perf

    result = api_perf.perf(
        model, hardware=hardware, gpus=gpus, catalog=catalog_from(catalog),
        lengths=None if lengths is None else _parse(units.parse_lengths, lengths, "--lengths"),
        batches=_parse(_batches, batches, "--batches"),
        context=_parse(units.parse_length, context, "--context"), tpot_s=_parse(_duration, tpot, "--tpot"),
        output_tokens=_parse(units.parse_length, output_len, "--output-len"), memory_fraction=memory_fraction,
        allow_beyond_context=allow_beyond_context, stack=stack)
    views_perf.emit_perf(fmt, result)


@app.command("calibrate")
def calibrate(
    measurements: Annotated[Path, typer.Argument(help="CSV: model,length,prefill_s and/or model,batch,context,step_s",
                                                 dir_okay=False)],
    hardware: Annotated[str, typer.Option("--hardware", help="GPU the measurements were taken on")] = "H200",
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs per instance in the measurements")] = 8,
    hold: Annotated[list[str] | None, typer.Option(
        "--hold", help="Keep a factor fixed, e.g. prefill_overhead_ms=400 (repeatable; keys as in the "
                       "hardware YAML efficiency block)")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the efficiency overlay YAML here "
                                                "(e.g. CATALOG_DIR/hardware/H200-calibrated.yaml); the folder "
                                                "must exist", callback=output_check("--output"))] = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Fit a GPU's efficiency factors (compute, memory, overheads) to measured prefill and decode
    times by least squares on log time; print the fit per row and the overlay YAML.

    Example: prfaas-plan calibrate benchmarks/data/paper_table3_h200.csv --hardware H200 --gpus 8
    --hold prefill_overhead_ms=400 --output mycat/hardware/H200-calibrated.yaml
    """
    from prfaas_plan.api import perf as api_perf
    from prfaas_plan.io.measurements import write_overlay
    from prfaas_plan.report import views_perf

    result = api_perf.calibrate(str(measurements), hardware=hardware, gpus=gpus, catalog=catalog_from(catalog),
                                hold=api_perf.parse_hold(hold or []))
    written = None
    if output is not None:
        written = str(write_overlay(output, result["overlay_yaml"]))
        result["written"] = written
    views_perf.emit_calibrate(fmt, result, written=written)
