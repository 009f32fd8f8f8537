"""The PrfaaS throughput model, the paper's Eqs. 3-6 (docs/model.md#throughput-model), vectorised over the threshold t.

    Theta_prfaas = min( N_prfaas / T_prfaas(l_long), B_out / S_kv(l_long) )      (Eq. 3)
    Theta_pd-p   = N_p / T_local(l_short)                                         (Eq. 4)
    Theta_pd-d   = N_d * BS_max / (T_decode * L_out)                              (Eq. 5)
    Lambda_max   = min( Theta_prfaas / p, Theta_pd-p / (1 - p), Theta_pd-d )      (Eq. 6)

Two methods. ``paper``: each stage at its mean length, as published (T(E[L | L > t])).
``exact``: expectations over the routed lengths (E[T(L) | L > t], E[S_kv(L) | L > t]), which is
what a pool of servers actually sustains: its rate is servers / mean service time.
p = 0 (nothing offloaded) or p = 1 (nothing local) leave the idle stage unconstrained.
The bounds themselves come from the topology's stage-bounds kernel (``core.stages``) with one
site of share 1: one kernel for one site and for many.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.lengths import LengthDistribution
from prfaas_plan.core.stages import Curve, Curves, compute_bounds, stage_bounds  # noqa: F401  (Curve, Curves: re-exported)
from prfaas_plan.specs.results import Binding, OperatingPoint


class Method(StrEnum):
    PAPER = "paper"
    EXACT = "exact"


@dataclass(frozen=True, slots=True, kw_only=True)
class Routing:
    """Per threshold: p = P(L > t), l_long = E[L | L > t], l_short = E[L | L <= t], and the
    per-request mean service times and link bytes of each path under the chosen method."""

    t: NDArray[np.float64]
    p: NDArray[np.float64]
    l_long: NDArray[np.float64]
    l_short: NDArray[np.float64]
    t_long_s: NDArray[np.float64]  # mean T_prefill of an offloaded request on a PrfaaS instance
    s_long_bytes: NDArray[np.float64]  # mean bytes an offloaded request sends over the link
    t_short_s: NDArray[np.float64]  # mean T_prefill of a local request on a local instance


def _arr(x: Any) -> NDArray[np.float64]:
    return np.atleast_1d(np.asarray(x, dtype=np.float64))


def routing(lengths: LengthDistribution, curves: Curves, t: ArrayLike, method: Method) -> Routing:
    """The routed-length statistics at each threshold t (tokens)."""
    tt = _arr(t)
    p = _arr(lengths.tail_prob(tt))
    l_long = _arr(lengths.mean_above(tt))
    l_short = _arr(lengths.mean_below(tt))
    if method == Method.PAPER:
        t_long = _arr(curves.t_prfaas(l_long))
        s_long = _arr(curves.s_kv(l_long))
        t_short = _arr(curves.t_local(l_short))
    else:
        t_long = _arr(lengths.expect_above(curves.t_prfaas, tt))
        s_long = _arr(lengths.expect_above(curves.s_kv, tt))
        t_short = _arr(lengths.expect_below(curves.t_local, tt))
    return Routing(t=tt, p=p, l_long=l_long, l_short=l_short, t_long_s=t_long, s_long_bytes=s_long,
                   t_short_s=t_short)


def theta_prfaas(n_prfaas: ArrayLike, t_long_s: ArrayLike, s_long_bytes: ArrayLike,
                 link_bytes_per_s: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eq. 3: (compute bound N_prfaas / T, link bound B_out / S), req/s; Theta_prfaas is their min."""
    compute = np.asarray(n_prfaas, dtype=np.float64) / np.asarray(t_long_s)
    link = link_bytes_per_s / np.asarray(s_long_bytes)
    return compute, link


def theta_pd_d(n_d: ArrayLike, decode_rps_per_instance: float) -> NDArray[np.float64]:
    """Eq. 5: N_d * BS_max / (T_decode * L_out), with the per-instance rate precomputed."""
    return np.asarray(n_d, dtype=np.float64) * decode_rps_per_instance


@dataclass(frozen=True, slots=True, kw_only=True)
class Bounds:
    """The four arrival-rate bounds of Eq. 6 (req/s), broadcast over a candidate grid."""

    prfaas_compute: NDArray[np.float64]  # N_prfaas / T_long / p
    link: NDArray[np.float64]  # B_out / S_long / p
    pd_prefill: NDArray[np.float64]  # Theta_pd-p / (1 - p)
    decode: NDArray[np.float64]  # Theta_pd-d

    @property
    def lambda_max(self) -> NDArray[np.float64]:
        return np.minimum(np.minimum(self.prfaas_compute, self.link), np.minimum(self.pd_prefill, self.decode))

    @property
    def binding_index(self) -> NDArray[np.int64]:
        stack = np.stack(np.broadcast_arrays(self.prfaas_compute, self.link, self.pd_prefill, self.decode))
        return np.argmin(stack, axis=0)


BINDINGS = (Binding.PRFAAS_COMPUTE, Binding.LINK, Binding.PD_PREFILL, Binding.DECODE)
TIGHT = 0.01  # relative slack under which a constraint counts as binding too
# At a balanced optimum (Eq. 7) several constraints bind at once; the headline names what limits
# the offload path first, since that is what a user would change (the link, the PrfaaS cluster).
_PRIORITY = (Binding.LINK, Binding.PRFAAS_COMPUTE, Binding.DECODE, Binding.PD_PREFILL)


def _headline(tight: tuple[Binding, ...]) -> Binding:
    return next(b for b in _PRIORITY if b in tight)


def bounds(r: Routing, *, n_prfaas: ArrayLike, n_p: ArrayLike, n_d: ArrayLike, link_bytes_per_s: float,
           decode_rps_per_instance: float) -> Bounds:
    """Eq. 6 terms for every (t, N_prfaas, N_p, N_d) the arguments broadcast to.

    ``r``'s arrays are over t (axis 0); give n_* extra axes of length 1 to build a grid.
    """
    # t is the leading axis; the n_* arrays carry the other axes (e.g. shapes (1, K, 1), (1, 1, S))
    nd = max(np.ndim(n_prfaas), np.ndim(n_p), np.ndim(n_d), 1)
    lead = (-1,) + (1,) * (nd - 1)
    p, t_long, s_long, t_short = (np.asarray(a).reshape(lead) for a in (r.p, r.t_long_s, r.s_long_bytes,
                                                                         r.t_short_s))
    # the topology kernel with one site of share 1 (core.stages)
    st = stage_bounds(p=p, t_long_s=t_long, s_long_bytes=s_long, t_short_s=t_short, n_p=n_p, n_d=n_d, demand_share=1.0,
                      link_bytes_per_s=link_bytes_per_s, decode_rps_per_instance=decode_rps_per_instance)
    compute = compute_bounds(np.asarray(n_prfaas, dtype=np.float64), st.compute_load)
    shape = np.broadcast_shapes(compute.shape, st.pd_prefill.shape)
    return Bounds(prfaas_compute=np.broadcast_to(compute, shape), link=np.broadcast_to(st.link, shape),
                  pd_prefill=np.broadcast_to(st.pd_prefill, shape), decode=np.broadcast_to(st.decode, shape))


def operating_point(r: Routing, i: int, *, n_prfaas: int, n_p: int, n_d: int, link_bytes_per_s: float,
                    decode_rps_per_instance: float) -> OperatingPoint:
    """The configuration at threshold index i of ``r``, with its throughputs and binding stage."""
    b = bounds(r, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d, link_bytes_per_s=link_bytes_per_s,
               decode_rps_per_instance=decode_rps_per_instance)
    lam = float(b.lambda_max[i])
    values = (b.prfaas_compute[i], b.link[i], b.pd_prefill[i], b.decode[i])
    tight = tuple(name for name, v in zip(BINDINGS, values, strict=True) if v <= lam * (1 + TIGHT))
    p = float(r.p[i])
    compute, link = (float(x[i]) for x in theta_prfaas(n_prfaas, r.t_long_s, r.s_long_bytes, link_bytes_per_s))
    offloads, local = p > 0 and n_prfaas > 0, p < 1 and n_p > 0
    egress = lam * p * float(r.s_long_bytes[i]) if offloads else 0.0
    return OperatingPoint(
        threshold_tokens=float(r.t[i]),
        n_prfaas=n_prfaas, n_p=n_p, n_d=n_d,
        p_offload=p,
        l_long_tokens=float(r.l_long[i]) if offloads else None,
        l_short_tokens=float(r.l_short[i]) if local else None,
        theta_prfaas_rps=min(compute, link) if offloads else None,
        theta_prfaas_compute_rps=compute if offloads else None,
        theta_prfaas_link_rps=link if offloads else None,
        theta_pd_p_rps=n_p / float(r.t_short_s[i]) if local else None,
        theta_pd_d_rps=float(theta_pd_d(n_d, decode_rps_per_instance)),
        lambda_max_rps=lam,
        binding=_headline(tight),
        tight=tight,
        egress_bytes_per_s=egress,
        link_utilization=egress / link_bytes_per_s if link_bytes_per_s > 0 else None,
    )
