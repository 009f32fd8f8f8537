"""`kv-rate`: S_kv, T_prefill and Phi_kv per length (Eq. 1), egress for N instances (Eq. 2)."""

from __future__ import annotations

from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import CatalogOpt, Format, FormatOpt, StackOpt, catalog_from, naming
from prfaas_plan.errors import SpecError


@app.command("kv-rate")
def kv_rate(
    model: Annotated[str, typer.Argument(help="Catalog name, model YAML, or HuggingFace config.json")],
    hardware: Annotated[str, typer.Option("--hardware", help="GPU of one instance")] = "H200",
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs per instance")] = 8,
    lengths: Annotated[str | None, typer.Option(
        "--lengths", help="Comma-separated; 1K = 1024 tokens [default: 1K,8K,32K,128K within the model's context]",
        show_default=False)] = None,
    instances: Annotated[
        int | None, typer.Option("--instances", help="Instances in the prefill cluster (Eq. 2)")
    ] = None,
    kv_dtype: Annotated[str | None, typer.Option("--kv-dtype", help="bf16 or fp8")] = None,
    state_dtype: Annotated[str | None, typer.Option("--state-dtype", help="fp32 or bf16")] = None,
    source: Annotated[str, typer.Option("--source", help="auto, measured, scaled (another instance's profile x "
                                                     "the analytic ratio), analytic or both")] = "auto",
    allow_beyond_context: Annotated[bool, typer.Option(
        "--allow-beyond-context", help="Extrapolate past the model's max_position_embeddings")] = False,
    stack: StackOpt = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """KV throughput of one prefill instance per length, and the egress a cluster needs.

    Example: prfaas-plan kv-rate internal-1t --hardware H200 --gpus 8 --instances 64
    """
    from prfaas_plan import api, units
    from prfaas_plan.report import views

    try:
        parsed = None if lengths is None else units.parse_lengths(lengths)
    except ValueError as exc:
        raise SpecError(str(exc), field="--lengths") from None
    with naming(models="MODEL", hardware="--hardware"):
        result = api.kv_rate(model, hardware=hardware, gpus=gpus, lengths=parsed, catalog=catalog_from(catalog),
                             instances=instances, kv_dtype=kv_dtype, state_dtype=state_dtype, source=source,
                             allow_beyond_context=allow_beyond_context, stack=stack)
    views.emit_kv_rate(fmt, result)
