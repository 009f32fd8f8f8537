"""The stage-bounds kernel of a topology: one prefill service shared by several PD sites.

Lambda is the total arrival rate; PD site i receives s_i x Lambda (its demand share), offloads
p_i = P(L_i > t_i) of it over its own link and prefills the rest on N_p,i local instances. Every
stage bounds Lambda (Eqs. 3-6 generalised; T and S are per-request means under the method):

    site i local prefill   Lambda <= N_p,i / (T_local,i (1 - p_i) s_i)             (Eq. 4)
    site i link            Lambda <= B_out,i / (S_kv,i p_i s_i)                     (Eq. 3, link)
    site i decode          Lambda <= N_d,i BS_max,i / (T_decode,i L_out,i s_i)      (Eq. 5)
    shared PrfaaS compute  Lambda <= N_prfaas / sum_i s_i p_i T_prfaas,i            (Eq. 3, compute)

With one site of share 1 these are Eqs. 3-6 (``core.throughput.bounds`` is that case). ``stage_bounds``
evaluates a site's own three bounds
and its load on the shared compute, c_i = s_i p_i T_prfaas,i (instance-seconds per request of
total Lambda), for every candidate (t_i, N_p,i) of the site at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.lengths import LengthDistribution

Curve = Callable[[NDArray[np.float64]], NDArray[np.float64] | float]


@dataclass(frozen=True, slots=True, kw_only=True)
class Curves:
    """Timing and size functions of the length, vectorised: the stage service laws."""

    t_prfaas: Curve  # T_prefill on one PrfaaS instance, seconds
    t_local: Curve  # T_prefill on one local PD instance, seconds
    s_kv: Curve  # bytes crossing the link for an offloaded request, bytes

# a stage that receives no requests does not constrain Lambda; kept finite so that min() and
# argmax stay well defined, and never reported
UNBOUNDED = 1e300


def _share(theta: NDArray[np.float64], share: NDArray[np.float64]) -> NDArray[np.float64]:
    """theta / share, unconstrained where the stage gets no requests (or so few that the bound
    passes ``UNBOUNDED``: a share of 1e-310 would overflow to inf)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.minimum(np.where(share > 0, theta / np.where(share > 0, share, 1.0), UNBOUNDED), UNBOUNDED)


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteModel:
    """A PD site's service laws and size: what the kernel needs of it."""

    name: str
    link: str  # the link's name, FROM->TO
    lengths: LengthDistribution
    curves: Curves  # t_prfaas: the shared service's instances; t_local: the site's own
    demand_share: float  # s_i, of the total arrival rate
    link_bytes_per_s: float  # B_out,i usable
    decode_rps_per_instance: float  # BS_max / (T_decode L_out) on the site's instances
    n_local: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidates:
    """A site's candidates (flat): threshold t, N_p (N_d = N_local - N_p) and the routing at t."""

    t: NDArray[np.float64]
    n_p: NDArray[np.int64]
    p: NDArray[np.float64]
    t_long_s: NDArray[np.float64]
    s_long_bytes: NDArray[np.float64]
    t_short_s: NDArray[np.float64]

    @property
    def size(self) -> int:
        return len(self.t)


def offload_all_threshold(lengths: LengthDistribution) -> float:
    """A threshold t below the shortest length, so p = P(L > t) = 1 (naive heterogeneous PD)."""
    return max(float(lengths.lo) - 1.0, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteStages:
    """A site's bounds on the total Lambda per candidate (req/s), and its shared-compute load."""

    pd_prefill: NDArray[np.float64]
    link: NDArray[np.float64]
    decode: NDArray[np.float64]
    compute_load: NDArray[np.float64]  # c_i = s_i p_i T_prfaas,i, s per request of total Lambda

    @property
    def local(self) -> NDArray[np.float64]:
        """The tightest of the site's own bounds."""
        return np.minimum(np.minimum(self.pd_prefill, self.link), self.decode)


def stage_bounds(*, p: ArrayLike, t_long_s: ArrayLike, s_long_bytes: ArrayLike, t_short_s: ArrayLike,
                 n_p: ArrayLike, n_d: ArrayLike, demand_share: float, link_bytes_per_s: float,
                 decode_rps_per_instance: float) -> SiteStages:
    """The kernel: every stage bound of one site for whatever candidates the arguments broadcast
    to (flat candidate arrays, or a grid: t on one axis, splits on another)."""
    p, t_long, s_long, t_short = (np.asarray(a, dtype=np.float64) for a in (p, t_long_s, s_long_bytes, t_short_s))
    n_p, n_d = np.asarray(n_p, dtype=np.float64), np.asarray(n_d, dtype=np.float64)
    shape = np.broadcast_shapes(p.shape, t_long.shape, s_long.shape, t_short.shape, n_p.shape, n_d.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pd_p = _share(np.broadcast_to(n_p / t_short / demand_share, shape), np.broadcast_to(1.0 - p, shape))
        link = _share(np.broadcast_to(link_bytes_per_s / s_long / demand_share, shape), np.broadcast_to(p, shape))
        load = np.broadcast_to(np.where(p > 0, demand_share * p * t_long, 0.0), shape)  # no mean above the top: p = 0
    decode = np.broadcast_to(n_d * decode_rps_per_instance / demand_share, shape)
    return SiteStages(pd_prefill=pd_p, link=link, decode=np.minimum(decode, UNBOUNDED), compute_load=load)


def site_stages(site: SiteModel, c: Candidates) -> SiteStages:
    """``stage_bounds`` at a site's flat candidates."""
    return stage_bounds(p=c.p, t_long_s=c.t_long_s, s_long_bytes=c.s_long_bytes, t_short_s=c.t_short_s, n_p=c.n_p,
                        n_d=site.n_local - c.n_p, demand_share=site.demand_share,
                        link_bytes_per_s=site.link_bytes_per_s, decode_rps_per_instance=site.decode_rps_per_instance)


def compute_bounds(n_prfaas: ArrayLike, load: ArrayLike) -> NDArray[np.float64]:
    """N_prfaas / sum_i c_i, vectorised (unbounded with no load)."""
    return _share(np.asarray(n_prfaas, dtype=np.float64), np.asarray(load, dtype=np.float64))


def compute_bound(n_prfaas: float, load: float) -> float:
    """N_prfaas / sum_i c_i: the shared compute's bound on Lambda (unbounded with no load)."""
    return min(n_prfaas / load, UNBOUNDED) if load > 0 else UNBOUNDED
