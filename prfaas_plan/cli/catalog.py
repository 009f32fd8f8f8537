"""`models`, `hardware`, `stacks`, `model show`, `model import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import WarningsGroup, app
from prfaas_plan.cli.options import CatalogOpt, Format, FormatOpt, catalog_from, naming, output_check, write_text

model_app = typer.Typer(cls=WarningsGroup, help="Inspect or import one model.", no_args_is_help=True)
app.add_typer(model_app, name="model")


@app.command("models")
def models(fmt: FormatOpt = Format.table, catalog: CatalogOpt = None) -> None:
    """List the model catalog: layers by kind, KV bytes per token, constant state.

    Example: prfaas-plan models --format json
    """
    from prfaas_plan import api
    from prfaas_plan.report import views

    result = api.list_models(catalog_from(catalog))
    views.emit_models(fmt, result)


@app.command("hardware")
def hardware(fmt: FormatOpt = Format.table, catalog: CatalogOpt = None) -> None:
    """List the GPU catalog: dense FLOPS, HBM, bandwidths, efficiency provenance.

    Example: prfaas-plan hardware
    """
    from prfaas_plan import api
    from prfaas_plan.report import views

    views.emit_hardware(fmt, api.list_hardware(catalog_from(catalog)))


@app.command("stacks")
def stacks(fmt: FormatOpt = Format.table, catalog: CatalogOpt = None) -> None:
    """List the serving-stack profiles of the time model: engine, GPUs, fixed costs, the P10-P90 band.

    Example: prfaas-plan stacks
    """
    from prfaas_plan import api
    from prfaas_plan.report import views

    views.emit_stacks(fmt, api.list_stacks(catalog_from(catalog)))


@model_app.command("show")
def model_show(
    model: Annotated[str, typer.Argument(help="Catalog name, model YAML, or HuggingFace config.json")],
    kv_dtype: Annotated[str | None, typer.Option(help="KV dtype: bf16 or fp8 (default: the model's)")] = None,
    state_dtype: Annotated[str | None, typer.Option(help="Recurrent state dtype: fp32 or bf16")] = None,
    ref_kv_heads: Annotated[int, typer.Option(help="KV heads of the GQA reference for the saving")] = 8,
    ref_head_dim: Annotated[int, typer.Option(help="Head dim of the GQA reference for the saving")] = 128,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Per-layer-kind KV breakdown and the hybrid saving against a dense GQA reference.

    Example: prfaas-plan model show Ring-2.5-1T
    """
    from prfaas_plan import api
    from prfaas_plan.report import views

    with naming(models="MODEL"):
        result = api.model_show(model, catalog_from(catalog), kv_dtype=kv_dtype, state_dtype=state_dtype,
                                reference_kv_heads=ref_kv_heads, reference_head_dim=ref_head_dim)
    views.emit_model(fmt, result)


@model_app.command("import")
def model_import(
    config: Annotated[Path, typer.Argument(help="HuggingFace config.json")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the YAML here (default stdout); "
                                                "the folder must exist", callback=output_check("--output"))] = None,
) -> None:
    """Read a HuggingFace config.json into a model YAML; refuse what it cannot read.

    Example: prfaas-plan model import config.json -o models/my-model.yaml
    """
    from prfaas_plan import api
    from prfaas_plan.io.hf_import import dump_yaml

    text = dump_yaml(api.import_model(str(config)))
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text, "--output")
        typer.echo(f"wrote {output}", err=True)
