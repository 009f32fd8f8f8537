"""Frozen configurations of one served system: what latency analysis and simulation run.

``SystemConfig``: one system (PrfaaS-PD or a baseline) at a configuration (t, N_prfaas, N_p,
N_d) with its service laws T_prefill(l), S_kv(l), the link B_out and the decode shape (BS_max,
T_decode), and its capacity Lambda_max. ``ControlConfig``: the knobs of the dual-timescale
scheduler (docs/model.md#the-prfaas-architecture). Built by the api layer (``api.systems``) and the scenario loader
(``io.scenario``), consumed by ``core.latency`` callers and ``sim``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prfaas_plan.errors import SpecError

__all__ = ["ControlConfig", "SystemConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemConfig:
    """One system to time: routing threshold, instance counts, service laws, decode shape.

    ``threshold_tokens``: requests with uncached length > t go to the PrfaaS pool; None sends
    everything to the local PD-P pool; 0 sends everything to PrfaaS.
    """

    name: str
    threshold_tokens: float | None
    n_prfaas: int
    n_p: int
    n_d: int
    t_prfaas: Callable[[Any], Any] | None  # T_prefill on one PrfaaS instance, s
    t_local: Callable[[Any], Any] | None  # T_prefill on one local PD-P instance, s
    kv_bytes: Callable[[Any], Any]  # S_kv: bytes of KV for an uncached length, B
    link_bytes_per_s: float  # B_out usable: bandwidth x usable fraction
    rtt_s: float
    n_layers: int  # for layer-wise pipelining of the transfer
    pipelining: bool
    bs_max: int
    t_decode_s: float  # decode step time at BS_max
    output_tokens: float
    capacity_rps: float  # Lambda_max of the exact method at this configuration
    capacity_binding: str
    handoff_s: float = 0.0  # fixed cost per transfer after the KV lands (decode-side handover)

    @property
    def landing_s(self) -> float:
        """What an offloaded request waits after its last byte is sent: RTT and handoff."""
        return self.rtt_s + self.handoff_s

    @property
    def decode_rps(self) -> float:
        return self.n_d * self.bs_max / (self.t_decode_s * self.output_tokens)


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlConfig:
    """Scheduler knobs. ``max_link_utilization`` None turns the short-term rule off, ``period_s``
    None (the default) the long-term one. ``queue_per_instance``: a queue counts as long when it
    holds at least this many requests per instance of its pool (PD-P instances for the prefill
    queue, decode instances for the admission queue).
    """

    max_link_utilization: float | None = 0.9
    window_s: float = 5.0
    margin: float = 0.25
    period_s: float | None = None
    queue_per_instance: float = 2.0

    def __post_init__(self) -> None:
        u = self.max_link_utilization
        if u is not None and not 0 < u <= 1:
            raise SpecError(f"must be in (0, 1], got {u!r}", field="control.max_link_utilization")
        if not self.window_s > 0:
            raise SpecError(f"must be > 0 s, got {self.window_s!r}", field="control.window_s")
        if not self.margin >= 0:
            raise SpecError(f"must be >= 0, got {self.margin!r}", field="control.margin")
        if self.period_s is not None and not self.period_s > 0:
            raise SpecError(f"must be > 0 s, got {self.period_s!r}", field="control.period_s")
        if not self.queue_per_instance > 0:
            raise SpecError(f"must be > 0, got {self.queue_per_instance!r}", field="control.queue_per_instance")
