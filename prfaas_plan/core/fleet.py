"""Several models, one prefill service: the integer assignment that maximises the common scale Lambda.

Model m takes w_m x Lambda of the traffic (its demand share) at one PD site i (a model served at
several sites is one entry per site). Every instance holds one model's weights, so the service's
N_prfaas instances are split between the entries (a_e), and so are site i's N_i instances (n_e =
N_p,e + N_d,e). Link i carries the KV of every entry at site i. At a target Lambda, entry e with
rate r = w_e Lambda and threshold t needs (Eqs. 3-5 per model, ceilings for whole instances)

    N_d,e >= r / (BS_max / (T_decode L_out))         N_p,e >= r (1 - p) T_local(l_short)
    a_e   >= r p T_prfaas(l_long)                    its bytes on link i:  r p S_kv(l_long)

and Lambda is feasible iff, at every site, the entries' instances fit N_i and their bytes fit B_i
with a total of a_e that fits N_prfaas. Per entry, a table over (n, a) holds the fewest link bytes
of any threshold needing at most n site and a service instances; a site's entries combine by a
min-plus convolution of their tables (exact over every integer split), and the sites by the fewest
service instances each needs. Feasibility only grows as Lambda falls, so Lambda_max is found by
bisection to 1e-12 relative; the configuration found is then evaluated exactly (``point``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.stages import UNBOUNDED
from prfaas_plan.core.throughput import TIGHT, Routing

_ROUND = 1e-9  # a need within this relative distance above a whole number is that number (round-off)
_REL = 1e-12  # the bisection's relative width


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One model at one PD site: its share of the total rate and its routing over the thresholds."""

    model: str
    site: int
    weight: float  # w_e: of the total Lambda
    routing: Routing  # p, T_prfaas, S_kv, T_local per candidate threshold (the ``method``'s means)
    decode_rps_per_instance: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Fleet:
    """The shared hardware: each PD site's instances and link, the service's instances."""

    sites: tuple[str, ...]
    links: tuple[str, ...]
    site_instances: tuple[int, ...]
    link_bytes_per_s: tuple[float, ...]
    n_prfaas: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Caps:
    """Separate services: an entry's own service instances and link bytes per second."""

    prfaas: int
    link_bytes_per_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One entry's configuration: threshold index into its routing, split and service instances."""

    k: int
    n_p: int
    n_d: int
    a: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryBounds:
    """An entry's bounds on the total Lambda (req/s) at a configuration."""

    pd_prefill: float
    decode: float
    compute: float  # its service instances: a_e / (w_e p T_prfaas)
    link_bytes_per_lambda: float  # w_e p S_kv: its bytes per second per req/s of Lambda


def _ceil(x: NDArray[np.float64]) -> NDArray[np.int64]:
    return np.ceil(x * (1 - _ROUND)).astype(np.int64).clip(min=0)


def needs(e: Entry, lam: float) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Per candidate threshold at total rate ``lam``: (site instances, service instances, link bytes/s)."""
    r = e.weight * lam
    ro = e.routing
    nd = int(_ceil(np.array([r / e.decode_rps_per_instance]))[0]) if r > 0 else 0
    local = np.where(ro.p < 1, r * (1 - ro.p) * ro.t_short_s, 0.0)
    n = nd + _ceil(local)
    a = _ceil(np.where(ro.p > 0, r * ro.p * ro.t_long_s, 0.0))
    link = np.where(ro.p > 0, r * ro.p * ro.s_long_bytes, 0.0)
    return n, a, link


def table(e: Entry, lam: float, n_max: int, a_max: int, caps: Caps | None = None,
          local_only: bool = False) -> NDArray[np.float64]:
    """T[n, a]: the fewest link bytes/s of any threshold needing <= n site and <= a service
    instances (inf: none). With ``caps`` the entry has its own service and link slice: what fits
    them counts as needing none of the shared ones. ``local_only``: thresholds offloading nothing."""
    n, a, link = needs(e, lam)
    ok = (n <= n_max) & (a <= a_max)
    if local_only:
        ok &= e.routing.p <= 0
    if caps is not None:
        ok &= (a <= caps.prfaas) & (link <= caps.link_bytes_per_s * (1 + _REL))
        a, link = np.zeros_like(a), np.zeros_like(link)
    t = np.full((n_max + 1, a_max + 1), np.inf)
    np.minimum.at(t, (n[ok], a[ok]), link[ok])
    return np.minimum.accumulate(np.minimum.accumulate(t, axis=0), axis=1)


def _corners(t: NDArray[np.float64]) -> list[tuple[int, int, float]]:
    """The cells of a cumulative-min table that improve on both neighbours below: the only
    choices a min-plus convolution needs."""
    up = np.vstack([np.full((1, t.shape[1]), np.inf), t[:-1]])
    left = np.hstack([np.full((t.shape[0], 1), np.inf), t[:, :-1]])
    idx = np.argwhere(np.isfinite(t) & (t < up) & (t < left))
    return [(int(i), int(j), float(t[i, j])) for i, j in idx]


def convolve(tables: Sequence[NDArray[np.float64]]) -> tuple[NDArray[np.float64], list[NDArray[np.int64]]]:
    """The min-plus convolution of entries' tables (the best split of a site's n and a between
    them) and, per entry after the first, the corner it takes at each cell (for ``split``)."""
    best = tables[0]
    taken = []
    for t in tables[1:]:
        corners = _corners(t)
        new = np.full_like(best, np.inf)
        which = np.full(best.shape, -1, dtype=np.int64)
        for c, (i, j, v) in enumerate(corners):
            cand = best[: best.shape[0] - i, : best.shape[1] - j] + v
            view = new[i:, j:]
            better = cand < view
            view[better] = cand[better]
            which[i:, j:][better] = c
        best = new
        taken.append((which, corners))
    return best, taken


def split(taken: list, n: int, a: int) -> list[tuple[int, int]]:
    """Each entry's (n, a) of the convolution's cell (n, a), last entry first undone."""
    out = []
    for which, corners in reversed(taken):
        i, j, _ = corners[int(which[n, a])]
        out.append((i, j))
        n, a = n - i, a - j
    out.append((n, a))
    return out[::-1]


def _site_need(best: NDArray[np.float64], n_site: int, link: float) -> int | None:
    """The fewest service instances with which the site's entries fit its instances and link."""
    row = best[n_site]
    ok = np.flatnonzero(row <= link * (1 + _REL))
    return int(ok[0]) if len(ok) else None


def _by_site(fleet: Fleet, entries: Sequence[Entry]) -> list[list[int]]:
    return [[k for k, e in enumerate(entries) if e.site == i] for i in range(len(fleet.sites))]


def _plan_at(fleet: Fleet, entries: Sequence[Entry], lam: float, caps: Sequence[Caps] | None,
             local_only: bool, site_instances: Sequence[int]) -> list[tuple[int, int]] | None:
    """Each entry's (n, a) at ``lam``, or None when the fleet cannot serve it."""
    out: list[tuple[int, int]] = [(0, 0)] * len(entries)
    total = 0
    for i, ks in enumerate(_by_site(fleet, entries)):
        if not ks:
            continue
        a_max = 0 if local_only else fleet.n_prfaas
        tabs = [table(entries[k], lam, site_instances[i], a_max, caps[k] if caps else None, local_only) for k in ks]
        best, taken = convolve(tabs)
        need = _site_need(best, site_instances[i], 0.0 if local_only else fleet.link_bytes_per_s[i])
        if need is None:
            return None
        total += need
        for k, na in zip(ks, split(taken, site_instances[i], need), strict=True):
            out[k] = na
    return out if total <= fleet.n_prfaas else None


def choose(e: Entry, lam: float, n: int, a: int, caps: Caps | None = None, local_only: bool = False) -> Choice:
    """The entry's threshold with the fewest link bytes among those fitting (n, a) at ``lam``
    (ties: the highest t), and its split: decode first, the rest to local prefill."""
    need_n, need_a, link = needs(e, lam)
    ok = (need_n <= n) & (need_a <= a)
    if local_only:
        ok &= e.routing.p <= 0
    if caps is not None:
        ok &= (need_a <= caps.prfaas) & (link <= caps.link_bytes_per_s * (1 + _REL))
    ks = np.flatnonzero(ok)
    k = int(ks[np.lexsort((-e.routing.t[ks], link[ks]))[0]])
    nd = max(int(_ceil(np.array([e.weight * lam / e.decode_rps_per_instance]))[0]), 1)
    np_min = int(need_n[k]) - nd
    # the surplus of the site's instances between local prefill and decode, to raise the lower bound
    def own(d: int) -> float:
        b = bounds(e, Choice(k=k, n_p=n - d, n_d=d, a=a))
        return min(b.pd_prefill, b.decode)

    best = max(range(nd, n - np_min + 1), key=own)
    return Choice(k=k, n_p=n - best, n_d=best, a=a)


def _spare(fleet: Fleet, entries: Sequence[Entry], choices: list[Choice]) -> list[Choice]:
    """The service's instances no entry needs, each to the entry whose compute bound is lowest."""
    for _ in range(fleet.n_prfaas - sum(c.a for c in choices)):
        offl = [k for k, (e, c) in enumerate(zip(entries, choices, strict=True)) if bounds(e, c).compute < UNBOUNDED]
        if not offl:
            break
        k = min(offl, key=lambda k: bounds(entries[k], choices[k]).compute)
        c = choices[k]
        choices[k] = Choice(k=c.k, n_p=c.n_p, n_d=c.n_d, a=c.a + 1)
    return choices


def bounds(e: Entry, c: Choice) -> EntryBounds:
    ro, k, w = e.routing, c.k, e.weight
    p, t_short, t_long, s_long = (float(x[k]) for x in (ro.p, ro.t_short_s, ro.t_long_s, ro.s_long_bytes))
    local = (1 - p) * t_short * w
    offload = p * t_long * w
    return EntryBounds(pd_prefill=c.n_p / local if local > 0 else UNBOUNDED,
                       decode=min(c.n_d * e.decode_rps_per_instance / w, UNBOUNDED),
                       compute=c.a / offload if offload > 0 else UNBOUNDED,
                       link_bytes_per_lambda=w * p * s_long if p > 0 else 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    lambda_max_rps: float
    choices: tuple[Choice, ...]
    named: tuple[tuple[str, str, float], ...]  # (kind, where, bound on Lambda) of every stage
    binding: str
    tight: tuple[str, ...]


def evaluate(fleet: Fleet, entries: Sequence[Entry], choices: Sequence[Choice], caps: Sequence[Caps] | None = None
             ) -> Found:
    """Lambda of a configuration: the least of every entry's bounds and every link's."""
    named: list[tuple[str, str, float]] = []
    per_link = [0.0] * len(fleet.sites)
    for k, (e, c) in enumerate(zip(entries, choices, strict=True)):
        b = bounds(e, c)
        where = e.model if len(fleet.sites) == 1 else f"{e.model}@{fleet.sites[e.site]}"
        named += [("prfaas-compute", where, b.compute), ("pd-prefill", where, b.pd_prefill),
                  ("decode", where, b.decode)]
        if caps is not None:
            lk = caps[k].link_bytes_per_s
            named.append(("link", f"{fleet.links[e.site]} ({where})",
                          lk / b.link_bytes_per_lambda if b.link_bytes_per_lambda > 0 else UNBOUNDED))
        else:
            per_link[e.site] += b.link_bytes_per_lambda
    if caps is None:
        named += [("link", fleet.links[i], fleet.link_bytes_per_s[i] / v if v > 0 else UNBOUNDED)
                  for i, v in enumerate(per_link)]
    lam = min(v for _, _, v in named)
    tight = tuple(f"{k} {w}" for k, w, v in named if v <= lam * (1 + TIGHT))
    order = ("link", "prfaas-compute", "decode", "pd-prefill")
    binding = next(t for o in order for t in tight if t.startswith(o + " "))
    return Found(lambda_max_rps=lam, choices=tuple(choices), named=tuple(named), binding=binding, tight=tight)


def search(fleet: Fleet, entries: Sequence[Entry], *, caps: Sequence[Caps] | None = None, local_only: bool = False,
           site_instances: Sequence[int] | None = None) -> Found | None:
    """The largest Lambda every entry serves its share of, over every integer split of the service
    and of each site and every threshold of the entries' grids; None if no Lambda > 0 is served.
    ``caps``: each entry on its own slice (separate services); ``local_only``: no offload."""
    sizes = tuple(site_instances or fleet.site_instances)
    hi = min(sizes[e.site] * e.decode_rps_per_instance / e.weight for e in entries)
    lo = hi * 1e-9
    if _plan_at(fleet, entries, lo, caps, local_only, sizes) is None:
        return None
    if _plan_at(fleet, entries, hi, caps, local_only, sizes) is not None:
        lo = hi
    while hi - lo > _REL * hi:
        mid = 0.5 * (lo + hi)
        if _plan_at(fleet, entries, mid, caps, local_only, sizes) is None:
            hi = mid
        else:
            lo = mid
    parts = _plan_at(fleet, entries, lo, caps, local_only, sizes)
    assert parts is not None
    choices = [choose(e, lo, n, caps[k].prfaas if caps else a, caps[k] if caps else None, local_only)
               for k, (e, (n, a)) in enumerate(zip(entries, parts, strict=True))]
    if caps is None and not local_only:
        choices = _spare(fleet, entries, choices)
    return evaluate(_sized(fleet, sizes), entries, choices, caps)


def _sized(fleet: Fleet, sizes: Sequence[int]) -> Fleet:
    return Fleet(sites=fleet.sites, links=fleet.links, site_instances=tuple(sizes),
                 link_bytes_per_s=fleet.link_bytes_per_s, n_prfaas=fleet.n_prfaas)


def proportional(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` whole units in proportion to ``weights`` (largest remainder; ties: the first)."""
    s = float(sum(weights))
    exact = [total * w / s for w in weights]
    out = [int(np.floor(x)) for x in exact]
    for k in sorted(range(len(weights)), key=lambda k: (-(exact[k] - out[k]), k))[: total - sum(out)]:
        out[k] += 1
    return out
