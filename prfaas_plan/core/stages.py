"""The stage-bounds kernel of a topology: one prefill service shared by several PD sites.

Lambda is the total arrival rate; PD site i receives s_i x Lambda (its demand share), offloads
p_i = P(L_i > t_i) of it over its own link and prefills the rest on N_p,i local instances. Every
stage bounds Lambda (Eqs. 3-6 generalised; T and S are per-request means under the method):

    site i local prefill   Lambda <= N_p,i / (T_local,i (1 - p_i) s_i)             (Eq. 4)
    site i link            Lambda <= B_out,i / (S_kv,i p_i s_i)                     (Eq. 3, link)
    site i decode          Lambda <= N_d,i BS_max,i / (T_decode,i L_out,i s_i)      (Eq. 5)
    shared PrfaaS compute  Lambda <= N_prfaas / sum_i s_i p_i T_prfaas,i            (Eq. 3, compute)

With one site of share 1 these are Eqs. 3-6. ``site_stages`` evaluates a site's own three bounds
and its load on the shared compute, c_i = s_i p_i T_prfaas,i (instance-seconds per request of
total Lambda), for every candidate (t_i, N_p,i) of the site at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.lengths import LengthDistribution
from prfaas_plan.core.throughput import _UNBOUNDED, Curves, Method, Routing, _share, routing


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteModel:
    """A PD site's service laws and size: what the kernel needs of it."""

    name: str
    link: str  # the link's name, FROM->TO
    lengths: LengthDistribution
    curves: Curves  # t_prfaas: the shared service's instances; t_local: the site's own
    share: float  # s_i, of the total arrival rate
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


def _flat(r: Routing, ti: NDArray[np.int64], n_p: NDArray[np.int64]) -> Candidates:
    return Candidates(t=r.t[ti], n_p=n_p, p=r.p[ti], t_long_s=r.t_long_s[ti], s_long_bytes=r.s_long_bytes[ti],
                      t_short_s=r.t_short_s[ti])


def candidates(site: SiteModel, thresholds: NDArray[np.float64], method: Method) -> Candidates:
    """Every (t, N_p) of the grid with 1 <= N_p < N_local, plus the two special cases: every
    request offloaded (t below the shortest length, N_p = 0) and, for a finite longest length,
    none offloaded (t = the longest, every split)."""
    ts = [np.asarray(thresholds, dtype=np.float64), [offload_all_threshold(site.lengths)]]
    hi = float(site.lengths.hi)
    if np.isfinite(hi):
        ts.append([hi])
    r = routing(site.lengths, site.curves, np.concatenate(ts), method)
    splits = np.arange(1, site.n_local, dtype=np.int64)
    n_grid = len(ts[0])
    grid_t = np.repeat(np.arange(n_grid), len(splits))
    parts_t = [grid_t, [n_grid]]
    parts_n = [np.tile(splits, n_grid), [0]]
    if np.isfinite(hi):
        parts_t.append(np.full(len(splits), n_grid + 1))
        parts_n.append(splits)
    return _flat(r, np.concatenate(parts_t).astype(np.int64), np.concatenate(parts_n).astype(np.int64))


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


def site_stages(site: SiteModel, c: Candidates) -> SiteStages:
    """The kernel: every stage bound of one site at each of its candidates (vectorised)."""
    s = site.share
    n_p = c.n_p.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pd_p = _share(n_p / c.t_short_s / s, 1.0 - c.p)
        link = _share(np.full_like(c.p, site.link_bytes_per_s) / c.s_long_bytes / s, c.p)
    decode = (site.n_local - n_p) * site.decode_rps_per_instance / s
    load = np.where(c.p > 0, s * c.p * c.t_long_s, 0.0)
    return SiteStages(pd_prefill=pd_p, link=link, decode=np.minimum(decode, _UNBOUNDED), compute_load=load)


def compute_bound(n_prfaas: float, load: float) -> float:
    """N_prfaas / sum_i c_i: the shared compute's bound on Lambda (unbounded with no load)."""
    return min(n_prfaas / load, _UNBOUNDED) if load > 0 else _UNBOUNDED
