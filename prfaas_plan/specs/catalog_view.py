"""The typed results of the catalog commands (`models`, `hardware`, `stacks`, `model show`): the specs as
loaded with the figures the KV engine derives from them, in bytes and tokens."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.model import LayerGroup, ModelSpec
from prfaas_plan.specs.stack import StackSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class KvFigures:
    """A model's per-request KV at the dtypes asked: the growing bytes per token, the SWA part
    (bounded by its window) and the constant recurrent state (``core.kv.KvFootprint``)."""

    kv_dtype: str
    state_dtype: str
    kv_bytes_per_token: float
    swa_bytes_per_token: float
    swa_window_tokens: int | None
    swa_max_bytes: float
    state_bytes: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRow:
    """One model of `models`."""

    model: ModelSpec
    layers: str  # "48 kda + 12 mla"
    kv: KvFigures
    file: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuRow:
    """One GPU of `hardware`."""

    gpu: GpuSpec
    file: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StackRow:
    """One serving-stack profile of `stacks`."""

    stack: StackSpec
    default: bool  # the profile used when none is named
    file: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerRow:
    group: LayerGroup
    kv_bytes_per_token: float
    state_bytes: float


@dataclass(frozen=True, slots=True, kw_only=True)
class KvSaving:
    """The KV saving against a dense GQA reference (hybrid factor x attention factor)."""

    reference: str  # "GQA, 8 KV heads x 128, every layer"
    total_layers: int
    growing_layers: int
    hybrid_factor: float
    attention_factor: float
    total_factor: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelShow:
    """`model show`: the architecture, its KV per layer group and S_kv(l) at a few lengths."""

    model: ModelSpec
    kv: KvFigures
    layers: tuple[LayerRow, ...]
    s_kv: tuple[tuple[int, float], ...]  # (length, S_kv bytes)
    saving: KvSaving | None
