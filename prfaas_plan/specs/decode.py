"""The decode side of a plan, typed: the instance's batch and step (``DecodeShape``, pinned by the
scenario or derived by the decode model) and, at a plan's threshold, its rate with decode staging
(``DecodeDetail``, ``api.staging``). Rates in req/s per instance (Eq. 5: BS_max / (T_decode L_out))."""

from __future__ import annotations

from dataclasses import dataclass

PINNED, DERIVED = "pinned", "derived"


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeShape:
    """BS_max and T_decode of one decode instance; derived: what bounds BS_max and its parts."""

    mode: str  # pinned or derived
    bs_max: int
    t_decode_s: float
    context_tokens: float | None = None  # derived: the context a slot is sized at
    bound_by: str | None = None  # derived: tpot, memory or weights
    bs_slo: int | None = None  # derived: the largest batch meeting the TPOT SLO
    bs_memory: int | None = None  # derived: the largest batch the memory holds

    @property
    def derived(self) -> bool:
        return self.mode == DERIVED


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeDetail:
    """A plan's decode: the shape, the rate with staging at the plan's t, tau and the requests
    staged per instance (lambda p tau / N_d). Derived: the slots staging takes from BS_max; pinned:
    the batch the memory would hold beside BS_max and whether the staged requests pass it."""

    shape: DecodeShape
    rps_per_instance: float
    staging_s: float
    staged_requests_per_instance: float
    staging_rounds: int
    staged_slot_weight: float | None = None  # derived
    rps_per_instance_unstaged: float | None = None  # derived
    bs_max_staged: float | None = None  # derived: BS_max less the staged slots where staging binds
    bs_max_lost: float | None = None  # derived
    staging_binds: bool | None = None  # derived
    bs_memory: int | None = None  # pinned
    memory_headroom: int | None = None  # pinned: None when the memory holds less than BS_max
    staging_exceeds_headroom: bool | None = None  # pinned

    @property
    def bs_max(self) -> float:
        """BS_max at the plan: the staged one where staging binds (derived), else the shape's."""
        return self.bs_max_staged if self.bs_max_staged is not None else self.shape.bs_max
