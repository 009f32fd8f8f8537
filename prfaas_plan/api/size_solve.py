"""One sizing solve: the cheapest fleet of a kind (PrfaaS-PD, homogeneous PD, naive) at one demand.

``core.sizing`` does the search; this module builds its site grids from the service laws
(``api.size_grid``), restricted to the kinds, thresholds and link tiers a variant allows, and
turns the winner into a typed ``SizedPlan`` with its cost and every stage's utilisation at D.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.size_grid import Laws, SiteLaws
from prfaas_plan.core import sizing as ks
from prfaas_plan.specs.sizing import Cost, LinkTier, Option, SizedPlan, SizedSite

PRFAAS, HOMOGENEOUS, NAIVE = "prfaas", "homogeneous", "naive"
ALL, NONE, OFFLOAD_ALL, SELECTIVE = "all", "none", "offload-all", "selective"


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """What a solve may buy: the kinds of each role, the thresholds, the tiers, the maxima."""

    kind: str
    prefill: tuple[Option, ...]  # empty: no prefill service
    local: tuple[Option, ...]
    columns: str  # ALL, NONE (nothing offloaded), OFFLOAD_ALL, SELECTIVE (some offloaded, some not)
    tiers: tuple[int, ...]  # indices into the spec's tiers
    max_prfaas: int
    max_local: int


def _columns(law: SiteLaws, which: str) -> np.ndarray:
    if which == NONE:
        return np.array([law.none_column])
    if which == OFFLOAD_ALL:
        return np.array([law.all_column])
    if which == SELECTIVE:
        return np.flatnonzero((law.p > 0) & (law.p < 1))
    return np.arange(len(law.t))


def usable_at_tier(law: SiteLaws, tier: LinkTier) -> float:
    """B_out of the site's link bought at ``tier``: the tier's bandwidth, its usable fraction (else
    the link's), the link's share cap and stream limits."""
    fraction = tier.usable_fraction if tier.usable_fraction is not None else law.link_usable_fraction
    return replace(law.link_spec, bandwidth_bytes_per_s=tier.bandwidth_bytes_per_s,
                   usable_fraction=fraction).usable_bytes_per_s


def site_grid(laws: Laws, law: SiteLaws, v: Variant, pre: Option | None, cols: np.ndarray) -> ks.SiteGrid:
    tiers = [laws.spec.tiers[m] for m in v.tiers]
    zero = np.zeros(len(cols))
    return ks.SiteGrid(
        demand_share=law.demand_share, p=law.p[cols],
        t_long_s=law.t_long_s[pre.name][cols] if pre else zero,
        s_long_bytes=law.s_long_bytes[pre.name][cols] if pre else zero,
        t_short_s=np.stack([law.t_short_s[o.name][cols] for o in v.local]),
        decode_rps=np.array([law.decode_rps[o.name] for o in v.local]),
        instance_price=np.array([o.price_per_instance_hour for o in v.local]),
        max_instances=v.max_local,
        tiers=ks.Tiers(usable_bytes_per_s=np.array([usable_at_tier(law, t) for t in tiers], dtype=np.float64),
                       price_per_hour=np.array([t.price_per_hour for t in tiers], dtype=np.float64)),
        egress_price_per_byte=laws.spec.egress_price_per_byte)


def solve(laws: Laws, v: Variant, demand_rps: float) -> SizedPlan | None:
    """The cheapest fleet ``v`` allows that serves ``demand_rps`` at the headroom; None if none."""
    lam = demand_rps / laws.spec.headroom
    cols = [_columns(law, v.columns) for law in laws.sites]
    best: tuple[float, Option | None, ks.Choice, list[ks.SiteSizes]] | None = None
    for pre in [o for o in v.prefill if not laws.prefill_why[o.name]] if v.prefill else (None,):
        grids = [site_grid(laws, law, v, pre, c) for law, c in zip(laws.sites, cols, strict=True)]
        sizes = [ks.site_sizes(g, lam, demand_rps) for g in grids]
        if pre is None:  # no prefill service: a site may not offload
            sizes = [_no_offload(s, g) for s, g in zip(sizes, grids, strict=True)]
        merged = ks.merge([(s.load, s.cost) for s in sizes])
        price = pre.price_per_instance_hour if pre else 0.0
        choice = ks.cheapest(merged, lam, price, v.max_prfaas if pre else 0)
        if np.isfinite(choice.cost) and (best is None or choice.cost < best[0]):
            best = (choice.cost, pre, choice, sizes)
    if best is None:
        return None
    _, pre, choice, sizes = best
    return _plan(laws, v, demand_rps, pre, choice, cols, sizes)


def _no_offload(s: ks.SiteSizes, g: ks.SiteGrid) -> ks.SiteSizes:
    """Only the candidates that offload nothing (p = 0): without a prefill service, the load a
    candidate would put on it is not zero but unpayable."""
    cost = np.where(g.p[None, :] > 0, np.inf, s.cost)
    return ks.SiteSizes(n_p=s.n_p, n_d=s.n_d, tier=s.tier, link_price=s.link_price, egress_price=s.egress_price,
                        cost=cost, load=s.load)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pick:
    """One site's part of a plan: its local kind, threshold column, instances, link tier and prices."""

    local: Option
    column: int  # index into the site's thresholds
    n_p: int
    n_d: int
    tier: int | None  # index into the spec's tiers; None: nothing offloaded, no link bought
    link_price: float
    egress_price: float


def _plan(laws: Laws, v: Variant, demand: float, pre: Option | None, choice: ks.Choice, cols: Sequence[np.ndarray],
          sizes: Sequence[ks.SiteSizes]) -> SizedPlan:
    picks = []
    for c, sz, idx in zip(cols, sizes, choice.picks, strict=True):
        j, k = divmod(idx, len(c))
        m = int(sz.tier[j, k])
        picks.append(Pick(local=v.local[j], column=int(c[k]), n_p=int(sz.n_p[j, k]), n_d=int(sz.n_d[j, k]),
                          tier=v.tiers[m] if m >= 0 else None, link_price=float(sz.link_price[j, k]),
                          egress_price=float(sz.egress_price[j, k])))
    return plan_of(laws, v.kind, demand, pre, choice.n_prfaas, choice.compute_load, picks)


def plan_of(laws: Laws, kind: str, demand: float, pre: Option | None, n_prfaas: int, compute_load: float,
            picks: Sequence[Pick]) -> SizedPlan:
    """The typed plan of explicit choices: ``n_prfaas`` instances of ``pre`` (loaded ``compute_load``
    instance-seconds per request) and each site's pick; cost and utilisations at ``demand``."""
    spec = laws.spec
    sites = []
    gpu_cost = n_prfaas * (pre.price_per_instance_hour if pre else 0.0)
    links = egress = out_tokens = 0.0
    for law, pk in zip(laws.sites, picks, strict=True):
        o, col, n_p, n_d = pk.local, pk.column, pk.n_p, pk.n_d
        p, rate = float(law.p[col]), demand * law.demand_share
        tier = spec.tiers[pk.tier] if pk.tier is not None else None
        usable = usable_at_tier(law, tier) if tier else None
        carried = rate * p * float(law.s_long_bytes[pre.name][col]) if p > 0 and pre else 0.0
        util = {"decode": rate / (n_d * float(law.decode_rps[o.name]))}
        if n_p > 0:
            util["pd-prefill"] = rate * (1 - p) * float(law.t_short_s[o.name][col]) / n_p
        if usable:
            util["link"] = carried / usable
        gp = (n_p + n_d) * o.price_per_instance_hour
        gpu_cost += gp
        links += pk.link_price
        egress += pk.egress_price
        out_tokens += rate * law.output_tokens
        sites.append(SizedSite(
            site=law.name, link=law.link, demand_share=law.demand_share, demand_rps=rate, hardware=o.instance.gpu.name,
            gpus_per_instance=o.instance.gpus, price_per_gpu_hour=o.price_per_gpu_hour,
            threshold_tokens=float(law.t[col]), p_offload=p, n_p=n_p, n_d=n_d,
            decode_source=law.decode_source[o.name], link_tier=pk.tier,
            link_bandwidth_bytes_per_s=tier.bandwidth_bytes_per_s if tier else None, link_usable_bytes_per_s=usable,
            link_price_per_hour=pk.link_price, egress_bytes_per_s=carried,
            egress_price_per_hour=pk.egress_price, gpu_price_per_hour=gp, utilization=util))
    pre_util = demand * compute_load / n_prfaas if n_prfaas else 0.0
    total = gpu_cost + links + egress
    stages = [(u, f"{name} {s.site}" if name != "link" else f"link {s.link}") for s in sites
              for name, u in s.utilization.items()]
    if n_prfaas:
        stages.append((pre_util, "prfaas-compute"))
    tightest = max(stages)[1]
    hour = demand * units.HOUR
    return SizedPlan(
        kind=kind, demand_rps=demand, headroom=spec.headroom,
        prefill_hardware=pre.instance.gpu.name if pre and n_prfaas else None,
        prefill_gpus_per_instance=pre.instance.gpus if pre and n_prfaas else None,
        prefill_price_per_gpu_hour=pre.price_per_gpu_hour if pre and n_prfaas else None,
        n_prfaas=n_prfaas, prfaas_utilization=pre_util, sites=tuple(sites),
        cost=Cost(gpus_per_hour=gpu_cost, links_per_hour=links, egress_per_hour=egress, per_hour=total,
                  per_million_requests=total / hour * units.MILLION,
                  per_million_output_tokens=total / (out_tokens * units.HOUR) * units.MILLION),
        tightest=tightest)
