"""Whether an instance holds a model: its weights and one request's KV within its share of HBM.

    holds  <=>  weights + S_kv(l) <= HBM x G x memory_fraction

the decode model's condition for BS_max >= 1 (``core.decode.memory_batch_limit``), asked of
every instance that holds the model: a decode instance at its context, a prefill instance at the
longest length it must prefill. The one check the planner makes wherever an instance holds a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan import units
from prfaas_plan.core import kv
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.model import ModelSpec

DEFAULT_MEMORY_FRACTION = 0.9  # share of HBM an engine gives to weights + KV (SGLang mem_fraction_static ~0.9)


@dataclass(frozen=True, slots=True, kw_only=True)
class Holding:
    """An instance's usable HBM against the model's weights and one request's KV at ``tokens``."""

    model: str
    instance: str
    hbm_bytes: float  # HBM x G
    memory_fraction: float
    weights_bytes: float
    kv_bytes: float
    tokens: float
    fits: bool  # ``fits`` at ``tokens``

    @property
    def usable_bytes(self) -> float:
        return self.hbm_bytes * self.memory_fraction

    def why(self) -> str:
        """Why it does not fit, in one clause naming the instance, its memory and the weights."""
        gib = units.bytes_to_gib
        return (f"{self.instance} cannot hold {self.model}: the weights ({gib(self.weights_bytes):,.0f} GiB) and "
                f"one request's KV at {self.tokens:,.0f} tokens ({gib(self.kv_bytes):,.3g} GiB) do not fit in "
                f"{self.memory_fraction:g} of its {gib(self.hbm_bytes):,.0f} GiB of HBM "
                f"({gib(self.usable_bytes):,.0f} GiB)")


def fits(model: ModelSpec, instance: InstanceSpec, tokens: ArrayLike, *,
         memory_fraction: float = DEFAULT_MEMORY_FRACTION) -> NDArray[np.bool_]:
    """weights + S_kv(l) <= HBM x G x fraction, vectorised over l (tokens)."""
    usable = instance.gpu.hbm_bytes * instance.gpus * memory_fraction
    return np.asarray(model.weights_bytes_total + np.asarray(kv.footprint(model).s_kv(tokens)) <= usable)


def holding(model: ModelSpec, instance: InstanceSpec, tokens: float, *,
            memory_fraction: float = DEFAULT_MEMORY_FRACTION) -> Holding:
    """``instance``'s memory against ``model``'s weights and one request's KV at ``tokens``."""
    return Holding(model=model.name, instance=instance.name, hbm_bytes=instance.gpu.hbm_bytes * instance.gpus,
                   memory_fraction=memory_fraction, weights_bytes=model.weights_bytes_total,
                   kv_bytes=float(kv.footprint(model).s_kv(tokens)), tokens=float(tokens),
                   fits=bool(fits(model, instance, tokens, memory_fraction=memory_fraction)))

