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
    measurements: Annotated[list[Path], typer.Argument(
        help="A measurement CSV (model,length,prefill_s / model,batch,context,step_s), the public set's CSV, or "
             "benchmark outputs (SGLang bench_one_batch / bench_serving, vLLM bench serve / latency, genai-perf, "
             "AIPerf, PrfaaS JSONL); several files fit one profile", dir_okay=False)],
    hardware: Annotated[str | None, typer.Option(
        "--hardware", help="GPU the measurements were taken on [default: H200 for a measurement CSV]",
        show_default=False)] = None,
    gpus: Annotated[int | None, typer.Option(
        "--gpus", help="GPUs per instance in the measurements [default: 8 for a measurement CSV]",
        show_default=False)] = None,
    hold: Annotated[list[str] | None, typer.Option(
        "--hold", help="Keep a factor fixed, e.g. prefill_overhead_ms=400 (repeatable; keys as in the "
                       "hardware YAML efficiency block)")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Fit a serving-stack profile of this name (stacks/NAME.yaml) instead of one GPU's overlay; "
                       "implied by a benchmark output or the public set's CSV", show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Catalog model or YAML of a benchmark output that names none (or not a catalog one)",
        show_default=False)] = None,
    input_tokens: Annotated[int | None, typer.Option(
        "--input-tokens", help="Prompt tokens of a `vllm bench latency` run (its file records none)",
        show_default=False)] = None,
    batch: Annotated[int | None, typer.Option("--batch", help="Batch of a `vllm bench latency` run [default: 1]",
                                              show_default=False)] = None,
    stack: StackOpt = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the efficiency overlay YAML (e.g. "
                                                "CATALOG_DIR/hardware/H200-calibrated.yaml) or the profile (e.g. "
                                                "CATALOG_DIR/stacks/mine.yaml) here; the folder must exist",
                                                callback=output_check("--output"))] = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Fit the time model to measured prefill and decode times by least squares on log time: one
    GPU's efficiency overlay from a measurement CSV, or a serving-stack profile from benchmark
    outputs as the engines write them; print the fit per row and the YAML.

    Example: prfaas-plan calibrate benchmarks/data/paper_table3_h200.csv --hardware H200 --gpus 8
    --hold prefill_overhead_ms=400 --output mycat/hardware/H200-calibrated.yaml
    """
    from prfaas_plan.api import perf as api_perf
    from prfaas_plan.api.calibrate import calibrate_stack, is_measurement_set
    from prfaas_plan.io.measurements import write_overlay
    from prfaas_plan.report import views_perf

    cat = catalog_from(catalog)
    legacy = (len(measurements) == 1 and name is None and measurements[0].suffix.lower() == ".csv"
              and not is_measurement_set(measurements[0]))
    if not legacy:
        if hold:
            raise SpecError("holds a GPU overlay's factor: a profile fits from its base (--stack) instead",
                            field="--hold")
        result = calibrate_stack(measurements, name=name or "calibrated", catalog=cat, hardware=hardware, gpus=gpus,
                                 model=model, base=stack, input_tokens=input_tokens, batch=batch)
        written = None if output is None else str(write_overlay(output, result.stack_yaml))
        views_perf.emit_calibrate_stack(fmt, result, written=written)
        return
    for option, value in (("--model", model), ("--input-tokens", input_tokens), ("--batch", batch),
                          ("--stack", stack)):
        if value is not None:
            raise SpecError("applies to a profile fit (a benchmark output, the public set, or --name)", field=option)
    result = api_perf.calibrate(str(measurements[0]), hardware=hardware or "H200", gpus=8 if gpus is None else gpus,
                                catalog=cat, hold=api_perf.parse_hold(hold or []))
    written = None if output is None else str(write_overlay(output, result.overlay_yaml))
    views_perf.emit_calibrate(fmt, result, written=written)
