"""Decode staging in the plan (issue 11 item 2): the decode rate per instance at the plan's own threshold.

The decode side reserves an offloaded request's KV slot before the transfer lands, so requests in
flight on the link occupy decode memory: at rate lambda_i offloaded with tau per request (its
unloaded transfer E[S_kv | L > t] / B_out + RTT + handoff, no queueing on the link), lambda_i tau
requests are staged over the site's N_d decode instances (Little's law). With derived decode
the rate per instance is r_d(t) = min(bs_slo / (T_step L_out), bs_memory / (T_step L_out + p tau))
(``core.decode.DecodeStaging``); pinned decode keeps its rate and the staged requests are only
reported, beside what the decode model's memory would allow.

The searches take one decode rate per instance (per site), while r_d depends on t. So a fixed
point: plan with the unstaged rate, take r_d at the plan's own t_i (every site), plan again with
it, until the rates are unchanged (at most ``ROUNDS`` searches: one where staging does not bind,
as with pinned decode or a BS_max the TPOT SLO sets with memory to spare; typically two where it
binds). The rate a plan reports is the staged rate at its own threshold. If the rates still move
after ``ROUNDS``, each round's best configuration is evaluated at its own staged rate and the
highest kept, so that holds there too. Every rate is at most the unstaged one, so staging never
raises Lambda_max.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from prfaas_plan.core import kv
from prfaas_plan.core.decode import DecodeStaging, decode_staging, memory_batch_limit, staging_time
from prfaas_plan.core.throughput import Curves, Method, routing
from prfaas_plan.specs.decode import DecodeDetail, DecodeShape
from prfaas_plan.specs.scenario import ScenarioSpec

ROUNDS = 4
_RTOL = 1e-12
_FINITE = 1e300

T = TypeVar("T")


class Timing(Protocol):
    """What staging reads of an ``api.laws.Timing`` (named here so the import runs one way)."""

    @property
    def curves(self) -> Curves: ...
    @property
    def decode_rps_per_instance(self) -> float: ...
    @property
    def decode_shape(self) -> DecodeShape: ...


def same(a: Sequence[float], b: Sequence[float]) -> bool:
    return all(math.isclose(x, y, rel_tol=_RTOL, abs_tol=0.0) for x, y in zip(a, b, strict=True))


def fixed_point(solve: Callable[[tuple[float, ...]], T], own: Callable[[T], tuple[float, ...]],
                start: tuple[float, ...]) -> list[tuple[T, tuple[float, ...], tuple[float, ...]]]:
    """The rounds, each (solution, the rates it was solved with, the rates at its own thresholds);
    the last converged (its two rates the same) unless ``ROUNDS`` were not enough."""
    rounds, rates = [], start
    for _ in range(ROUNDS):
        sol = solve(rates)
        mine = own(sol)
        rounds.append((sol, rates, mine))
        if same(mine, rates):
            break
        rates = mine
    return rounds


def converged(rounds: Sequence[tuple[Any, tuple[float, ...], tuple[float, ...]]]) -> bool:
    return same(rounds[-1][1], rounds[-1][2])


def site_staging(timing: Timing, sc: ScenarioSpec, threshold: float | None, method: Method) -> DecodeStaging | float:
    """tau and p at ``threshold`` (None: nothing offloaded) on the site ``sc`` describes (its
    workload and link) and, for derived decode, r_d there: the ``DecodeStaging`` (derived) or tau
    alone (pinned: the rate is not changed)."""
    p, s_long, l_long = 0.0, 0.0, 0.0
    if threshold is not None:
        r = routing(sc.workload.lengths, timing.curves, [threshold], method)
        p, s_long, l_long = float(r.p[0]), float(r.s_long_bytes[0]), float(r.l_long[0])
    tau = staging_time(s_long, sc.link.usable_bytes_per_s, rtt_s=sc.link.rtt_s, handoff_s=sc.link.handoff_s) \
        if p > 0 else 0.0
    d = timing.decode_shape
    if not d.derived:
        return tau
    assert d.bs_memory is not None
    return decode_staging(requests_per_s=timing.decode_rps_per_instance, bs_max=d.bs_max, bs_memory=d.bs_memory,
                          step_s=d.t_decode_s, output_tokens=sc.workload.output_tokens, p_offload=p,
                          staging_s=tau, slot_weight=slot_weight(sc, l_long) if p > 0 else 1.0)


def slot_weight(sc: ScenarioSpec, l_long: float) -> float:
    """A staged request's KV in decode slots: S_kv at its whole input (the offloaded mean uncached
    length plus the mean cached prefix) over S_kv at a slot's context (the mean input plus the
    output, what ``decode_capacity`` sizes a slot for)."""
    w = sc.workload
    s_kv = kv.footprint(sc.model).s_kv
    cached = max(w.input_total_mean - float(w.lengths.mean), 0.0)
    slot = float(s_kv(w.input_total_mean + w.output_tokens))
    return float(s_kv(l_long + cached)) / slot if slot > 0 else 1.0


def rate(timing: Timing, st: DecodeStaging | float) -> float:
    """The decode rate per instance with staging: r_d (derived), the pinned rate (pinned)."""
    return st.requests_per_s if isinstance(st, DecodeStaging) else timing.decode_rps_per_instance


def detail(timing: Timing, sc: ScenarioSpec, st: DecodeStaging | float, *, lambda_rps: float, p_offload: float,
           n_d: int, rounds: int) -> DecodeDetail:
    """The decode of a plan: the unstaged shape, the rate with staging and the staged requests
    per instance at the plan, lambda p tau / N_d; derived: BS_max staged (the mean decoding batch
    r_d T_step L_out) and lost; pinned: what the decode model's memory would allow beside BS_max,
    and whether the staged requests pass that headroom."""
    d = timing.decode_shape
    tau = st.staging_s if isinstance(st, DecodeStaging) else st
    staged = min(lambda_rps * p_offload * tau / n_d, _FINITE) if n_d > 0 and p_offload > 0 else 0.0
    common = {"shape": d, "rps_per_instance": rate(timing, st), "staging_s": tau,
              "staged_requests_per_instance": staged, "staging_rounds": rounds}
    if isinstance(st, DecodeStaging):
        binds = st.factor < 1.0
        return DecodeDetail(**common, staged_slot_weight=st.slot_weight,
                            rps_per_instance_unstaged=timing.decode_rps_per_instance,
                            bs_max_staged=st.bs_staged if binds else d.bs_max,
                            bs_max_lost=st.bs_lost if binds else 0.0, staging_binds=binds)
    context = sc.workload.input_total_mean + sc.workload.output_tokens
    memory = memory_batch_limit(sc.model, sc.local.instance, context, memory_fraction=sc.decode.memory_fraction)
    headroom = memory - d.bs_max if memory >= d.bs_max else None  # below a pinned BS_max: not this engine
    return DecodeDetail(**common, bs_memory=memory, memory_headroom=headroom,
                        staging_exceeds_headroom=None if headroom is None else staged > headroom)
