"""Inputs the api functions share: the default lengths, the context check, an instance by name."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog, is_path_like, load_gpu, load_stack
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.model import ModelSpec
from prfaas_plan.specs.stack import StackSpec

DEFAULT_LENGTHS = (units.K_TOKENS, 8 * units.K_TOKENS, 32 * units.K_TOKENS, 128 * units.K_TOKENS)


def default_lengths(model: ModelSpec) -> list[int]:
    """1K, 8K, 32K, 128K within the model's context, and the context itself where it cuts that list
    short (Qwen3-32B: 1K, 8K, 32K, 40,960): lengths nobody asked for are never refused."""
    limit = model.max_position_embeddings
    if limit is None or limit >= DEFAULT_LENGTHS[-1]:
        return list(DEFAULT_LENGTHS)
    return [n for n in DEFAULT_LENGTHS if n < limit] + [int(limit)]


def require_context(model: ModelSpec, lengths: Sequence[float], option: str, *, allow: bool = False,
                    ref: str | None = None) -> None:
    """Refuse lengths past the model's max_position_embeddings unless the user allows them;
    ``ref``: how the model was named, so a model file the limit comes from is named too."""
    over = model.beyond_context(lengths)
    if over and not allow:
        n, limit = over[0], model.max_position_embeddings
        where = f" in {ref}" if ref is not None and is_path_like(ref) else ""
        raise SpecError(f"{units.format_length(n)} ({n:,.0f} tokens) is beyond {model.name}'s context of "
                        f"{limit:,} tokens (max_position_embeddings{where}); pass --allow-beyond-context to "
                        "extrapolate", field=option)


def instance(hardware: str, gpus: int, catalog: Catalog, stack: StackSpec | None = None) -> InstanceSpec:
    if gpus < 1:
        raise SpecError(f"must be a positive number of GPUs, got {gpus}", field="--gpus")
    return InstanceSpec(gpu=load_gpu(hardware, catalog, stack), gpus=gpus)


def stack_of(ref: str | None, catalog: Catalog) -> StackSpec:
    """The serving-stack profile ``--stack`` names (the default when None); an unknown name or an
    unreadable file is placed at ``--stack``."""
    try:
        return load_stack(ref, catalog)
    except SpecError as exc:
        named = ref is not None and exc.source in (ref, str(Path(ref)))  # "./s.yaml" and "s/" read as "s.yaml", "s"
        if exc.field is None and ((exc.source is None and exc.unknown == "stacks") or named):
            raise exc.at(field="--stack", source=exc.source) from None
        raise
