"""Sizing: the cheapest fleet and link tiers that serve a demand D with every stage at utilisation <= h.

The stage bounds (``core.stages``) read the other way round. With Lambda = D / h the target
rate, PD site i (share s_i) at threshold t on local instances of kind j needs

    N_p,i   = ceil(Lambda s_i (1 - p) T_local,j(t))         local prefill (Eq. 4; 0 when p = 1)
    N_d,i   = ceil(Lambda s_i / r_d,j)                       decode (Eq. 5; r_d = BS_max / (T_decode L_out))
    B_i    >= Lambda s_i p S_kv(t)                           its link: the cheapest tier that carries it
    N_prfaas = ceil(Lambda sum_i c_i),  c_i = s_i p T_prfaas(t)   the shared prefill service (Eq. 3)

so for a fixed prefill kind the cost is sum_i cost_i(j, t, tier) + price_prfaas x ceil(Lambda sum c_i):
separable per site except through the one shared ceiling. Each site's candidates (kind x t, the
cheapest tier each) reduce to their Pareto frontier in (c_i, cost_i); the sites' frontiers are
merged (Minkowski sum, pruned again), and the cheapest total over the merged frontier is the
optimum, exactly: a dominated candidate never loads the shared service less for less money. The
work grows with the grid of one site at a time and the frontiers' sizes, never with the product
of the sites' grids, instance counts and tiers.

A stage counts as within the headroom when its load is within ``TOL`` (relative) of it, so a
count that the arithmetic puts at 3.0000000001 instances is 3. A PD site is at least
``MIN_SITE`` instances, the smallest PD cluster a scenario describes (one prefill, one decode): a
site that offloads everything (N_p = 0) keeps a second decode instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from prfaas_plan import units

TOL = 1e-9
MIN_SITE = 2  # instances of a PD site (io.topology, io.scenario refuse fewer)
_TINY = float(np.finfo(np.float64).tiny)


def need(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """Instances a stage needs for ``x`` instance-seconds per second of load: ceil, within TOL."""
    return np.ceil(np.asarray(x, dtype=np.float64) * (1 - TOL))


@dataclass(frozen=True, slots=True, kw_only=True)
class Tiers:
    """The link tiers one link may be bought at: usable bytes/s and dollars per hour."""

    usable_bytes_per_s: NDArray[np.float64]
    price_per_hour: NDArray[np.float64]

    def cheapest(self, load: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Per load (bytes/s): the cheapest tier that carries it (-1: none) and its price (0 for no
        load: no link is bought; inf where no tier carries it)."""
        cap, price = self.usable_bytes_per_s, self.price_per_hour
        order = np.argsort(cap, kind="stable")
        cap_s, price_s = cap[order], price[order]
        # suffix minimum of price over tiers at least as wide, and which tier it is
        best = np.empty(len(order), dtype=np.int64)
        run, arg = np.inf, -1
        for k in range(len(order) - 1, -1, -1):
            if price_s[k] <= run:
                run, arg = price_s[k], k
            best[k] = arg
        load = np.asarray(load, dtype=np.float64)
        k = np.searchsorted(cap_s, load * (1 - TOL), side="left")
        ok = k < len(order)
        pick = np.where(ok, order[best[np.minimum(k, len(order) - 1)]] if len(order) else -1, -1)
        cost = np.where(ok, price[np.maximum(pick, 0)] if len(order) else np.inf, np.inf)
        idle = load <= 0
        return np.where(idle, -1, pick), np.where(idle, 0.0, cost)


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteGrid:
    """One PD site's service laws over its thresholds (axis K) for each local kind (axis J), under
    one prefill kind: what the kernel sizes."""

    demand_share: float  # s_i
    p: NDArray[np.float64]  # (K,) P(L > t)
    t_long_s: NDArray[np.float64]  # (K,) per offloaded request on one prefill-service instance
    s_long_bytes: NDArray[np.float64]  # (K,) per offloaded request over the link
    t_short_s: NDArray[np.float64]  # (J, K) per local request on one local instance of kind j
    decode_rps: NDArray[np.float64]  # (J,) per decode instance; <= 0: kind j cannot decode
    instance_price: NDArray[np.float64]  # (J,) dollars per instance-hour
    max_instances: int
    tiers: Tiers
    egress_price_per_byte: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteSizes:
    """Every candidate (J, K) of a site at a target Lambda: its instances, tier, cost and load."""

    n_p: NDArray[np.float64]
    n_d: NDArray[np.float64]
    tier: NDArray[np.int64]
    link_price: NDArray[np.float64]
    egress_price: NDArray[np.float64]
    cost: NDArray[np.float64]  # dollars per hour: GPUs + link + egress; inf where infeasible
    load: NDArray[np.float64]  # c_i, instance-seconds of the prefill service per request of Lambda


def site_sizes(g: SiteGrid, lam: float, demand_rps: float) -> SiteSizes:
    """The cheapest site fleet at each (local kind, t) for total target ``lam`` (D / h); egress is
    charged at the demand itself."""
    rate = lam * g.demand_share
    p = g.p[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n_p = np.where(p >= 1, 0.0, np.maximum(need(rate * (1 - p) * g.t_short_s), 1.0))
        ok_d = g.decode_rps > 0
        n_d = np.where(ok_d, need(rate / np.where(ok_d, g.decode_rps, 1.0)), np.inf)[:, None]
    n_d = np.maximum(n_d, MIN_SITE - n_p)
    # a site that offloads anything needs a link and the prefill service, however small its share:
    # the products are kept above 0 where p > 0 (p = 5e-324 would underflow them to "no need")
    with np.errstate(over="ignore"):  # a demand beyond a float's reach carries inf bytes/s: no tier, infeasible
        carried = np.where(g.p > 0, np.maximum(rate * g.p * g.s_long_bytes, _TINY), 0.0)  # bytes/s at Lambda
        egress = (np.where(g.p > 0, demand_rps * g.demand_share * g.p * g.s_long_bytes, 0.0) * g.egress_price_per_byte
                  * units.HOUR) if g.egress_price_per_byte else np.zeros_like(g.p)  # not inf x 0
    tier, link_price = g.tiers.cheapest(carried)
    n = n_p + n_d
    feasible = (n <= g.max_instances) & np.isfinite(link_price)[None, :] & np.isfinite(n_d)
    cost = np.where(feasible, n * g.instance_price[:, None] + link_price[None, :] + egress[None, :], np.inf)
    load = np.broadcast_to(np.where(g.p > 0, np.maximum(g.demand_share * g.p * g.t_long_s, _TINY), 0.0)[None, :],
                           cost.shape)
    shape = cost.shape
    return SiteSizes(n_p=np.broadcast_to(n_p, shape), n_d=np.broadcast_to(n_d, shape),
                     tier=np.broadcast_to(tier[None, :], shape), link_price=np.broadcast_to(link_price[None, :], shape),
                     egress_price=np.broadcast_to(egress[None, :], shape), cost=cost, load=load)


def frontier(load: NDArray[np.float64], cost: NDArray[np.float64]) -> NDArray[np.int64]:
    """Indices (flat) of the Pareto frontier in (load, cost), load ascending, cost strictly falling;
    infeasible (inf cost) candidates never on it."""
    lo, co = load.ravel(), cost.ravel()
    keep = np.flatnonzero(np.isfinite(co))
    if not len(keep):
        return keep
    order = keep[np.lexsort((co[keep], lo[keep]))]
    c = co[order]
    prev = np.concatenate(([np.inf], np.minimum.accumulate(c)[:-1]))
    return order[c < prev]


@dataclass(frozen=True, slots=True, kw_only=True)
class Merged:
    """The merged frontier of several sites: total load, total cost and each site's candidate."""

    load: NDArray[np.float64]
    cost: NDArray[np.float64]
    picks: NDArray[np.int64]  # (F, sites): flat candidate index per site


def merge(sites: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]]) -> Merged:
    """Minkowski sum of the sites' (load, cost) frontiers, pruned to its own frontier after each site."""
    load = np.zeros(1)
    cost = np.zeros(1)
    picks = np.zeros((1, 0), dtype=np.int64)
    for lo, co in sites:
        idx = frontier(lo, co)
        if not len(idx):
            return Merged(load=np.zeros(0), cost=np.zeros(0), picks=np.zeros((0, len(sites)), dtype=np.int64))
        tl = (load[:, None] + lo.ravel()[idx][None, :]).ravel()
        tc = (cost[:, None] + co.ravel()[idx][None, :]).ravel()
        keep = frontier(tl, tc)
        a, b = np.divmod(keep, len(idx))
        load, cost = tl[keep], tc[keep]
        picks = np.concatenate([picks[a], idx[b][:, None]], axis=1)
    return Merged(load=load, cost=cost, picks=picks)


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """The cheapest fleet under one prefill kind: its total, the prefill instances and each site's pick."""

    cost: float  # dollars per hour, inf: none feasible
    n_prfaas: int
    picks: tuple[int, ...]  # flat (J, K) index per site
    compute_load: float  # sum_i c_i


def cheapest(merged: Merged, lam: float, instance_price: float, max_instances: int) -> Choice:
    """The cheapest point of the merged frontier once the shared prefill service is paid for."""
    n = need(lam * merged.load)
    total = np.where(n <= max_instances, merged.cost + n * instance_price, np.inf)
    if not len(total) or not np.isfinite(total).any():
        return Choice(cost=np.inf, n_prfaas=0, picks=(), compute_load=0.0)
    k = int(np.lexsort((merged.load, total))[0])  # ties: the least load on the prefill service
    return Choice(cost=float(total[k]), n_prfaas=int(n[k]), picks=tuple(int(i) for i in merged.picks[k]),
                  compute_load=float(merged.load[k]))
