"""`size` under a TTFT SLO: the cheapest plan whose TTFT statistic at the demand D meets the bound.

Exact over a lattice fixed before any bound is read, so a tighter bound never costs less. Roots: the
throughput-minimal fleets (``core.sizing.site_sizes``) per prefill kind and per site (local kind,
column), the columns ``COARSE_COLUMNS`` log-spaced thresholds, all offloaded, none and the throughput
plan's (equal p routes alike: once). Several PD sites combine each site's ``TOP_STARTS`` cheapest by
own cost plus its share of the prefill service (the throughput plan's kept; fewer past ``MAX_ROOTS``).
A node adds prefill-service, local prefill and up to ``DECODE_EXTRA`` decode instances (within the
maxima) and steps up the (price, width) frontier of wider tiers: never cheaper, so best-first in cost
meets the cheapest passing node first. A node passes when the worst site's statistic at D meets the
bound at ``SEARCH_NODES`` quantile nodes and again from ``system_latency`` itself. A root is skipped
once its corner (every maximum, the widest tier) misses every open bound: its nodes' TTFT laws are
stochastically larger on the same nodes, so the corner's quantile ``TIE`` below the level (float
ties) bounds them. One pass answers the SLO and the frontier; at most ``MAX_EVALUATIONS`` evaluations.
"""

from __future__ import annotations

import heapq
import itertools
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from prfaas_plan.api.latency import site_paths, system_latency
from prfaas_plan.api.laws import decode_rate
from prfaas_plan.api.perf import gpu_lookup
from prfaas_plan.api.size_grid import Laws, SiteLaws
from prfaas_plan.api.size_solve import ALL, NONE, OFFLOAD_ALL, PRFAAS, Pick, Variant, plan_of, site_grid, usable_at_tier
from prfaas_plan.api.systems import topology_system
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import joint, kv
from prfaas_plan.core import latency as lat
from prfaas_plan.core import sizing as ks
from prfaas_plan.core.stages import SiteModel
from prfaas_plan.core.throughput import Curves, Method
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import DecodeSpec, ScenarioSpec
from prfaas_plan.specs.sizing import SizedPlan, TtftPoint
from prfaas_plan.specs.system import SystemConfig
from prfaas_plan.specs.topology import TopologySystem

SEARCH_NODES, FINAL_NODES = 400, 2000  # FINAL_NODES: system_latency's default
COARSE_COLUMNS, TOP_STARTS, MAX_ROOTS, DECODE_EXTRA, MAX_EVALUATIONS, TIE = 12, 8, 4096, 1, 4000, 1e-9
FACTORS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0)  # the frontier's bounds x the SLO, without sizing.ttft_bounds
_LEVEL = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


# a site's throughput-minimal fleet at (local kind j, column): tiers the root's then wider ones; load c_i
_Start = namedtuple("_Start", "j col p n_p n_d tiers egress load cost")


def _columns(law: SiteLaws, best_col: int) -> list[int]:
    """The throughput plan's column first, then the coarse grid, every request offloaded and none."""
    grid = law.t[:len(law.t) - 2]
    near = np.searchsorted(grid, np.geomspace(max(float(grid[0]), 1.0), float(grid[-1]), COARSE_COLUMNS))
    return [best_col, *np.unique(np.concatenate([np.clip(near, 0, len(grid) - 1), [law.all_column, law.none_column]]))]


class _Search:
    def __init__(self, sc: ScenarioSpec, laws: Laws, best: SizedPlan, v: Variant | None = None,
                 demand: float | None = None):
        self.sc, self.laws, spec = sc, laws, laws.spec
        self.stat = sc.ttft_statistic
        self.demand = spec.demand_rps if demand is None else demand
        self.lam = lam = self.demand / spec.headroom
        self.v = v or Variant(kind=PRFAAS, prefill=spec.prfaas.options, local=spec.local.options, columns=ALL,
                              tiers=tuple(range(len(spec.tiers))), max_prfaas=spec.prfaas.max_instances,
                              max_local=spec.local.max_instances)
        known = [o.instance.gpu for o in (*laws.kinds.values(), sc.prfaas, sc.local)]
        gpu_of = gpu_lookup(known=[*known, *sc.profile_gpus])
        self.timer = {n: prefill_timer(sc.model, o.instance, gpu_of=gpu_of) for n, o in laws.kinds.items()}
        engine = kv.footprint(sc.model).s_kv
        self.s_kv = {n: t.kv_bytes if t.kv_bytes is not None else engine for n, t in self.timer.items()}
        self.site_sc = [site_scenario(sc, i) for i in range(len(laws.sites))]
        self.shape = {(i, o.name): self._decode(i, o.instance) for i, law in enumerate(laws.sites)
                      for o in self.v.local if law.decode_rps[o.name] > 0}
        # band: roots with a node passing at the search's nodes, not the final ones
        self.cands, self.ttft, self.corners, self.band, self.evaluations = {}, {}, {}, set(), 0
        mine = [(next(j for j, o in enumerate(self.v.local) if o.instance.gpu.name == s.hardware
                      and o.instance.gpus == s.gpus_per_instance), s.p_offload) for s in best.sites]
        cols = [np.array(self._variant_columns(law, s)) for law, s in zip(laws.sites, best.sites, strict=True)]
        self.starts: dict[int, list[list[_Start]]] = {}
        for pi, pre in (*enumerate(self.v.prefill), (-1, None)):
            self.starts[pi] = []
            for law, c in zip(laws.sites, cols, strict=True):
                sz, got = ks.site_sizes(site_grid(laws, law, self.v, pre, c), lam, self.demand), {}
                for j, k in itertools.product(range(len(self.v.local)), range(len(c))):
                    if np.isfinite(sz.cost[j, k]) and (pre is not None or law.p[c[k]] == 0):
                        # columns of the same p route alike: the first kept; no prefill service: p = 0 only
                        got.setdefault((j, float(law.p[c[k]])), self._start(law, sz, j, k, int(c[k])))
                self.starts[pi].append(list(got.values()))
        top = max([1, *(t for t in range(1, TOP_STARTS + 1) if t ** len(laws.sites) <= MAX_ROOTS)])
        roots: dict[tuple, None] = {}
        for pi in (*range(len(self.v.prefill)), -1):
            price = self.v.prefill[pi].price_per_instance_hour if pi >= 0 else 0.0
            keep = []
            for ss, own in zip(self.starts[pi], mine, strict=True):
                order = sorted(range(len(ss)), key=lambda n, ss=ss: (ss[n].cost + price * lam * ss[n].load, n))
                if len(laws.sites) > 1:
                    order = sorted({*order[:top], *(n for n in order if (ss[n].j, ss[n].p) == own)}, key=order.index)
                keep.append(order)
            for combo in itertools.product(*keep):
                if (pi >= 0) == (sum(self.starts[pi][i][n].load for i, n in enumerate(combo)) > 0):
                    roots[(pi, combo)] = None
        self.roots = list(roots)

    def _variant_columns(self, law: SiteLaws, s) -> list[int]:
        """The variant's columns: none or every request offloaded alone, else the coarse lattice
        around the throughput plan's own column."""
        if self.v.columns == NONE:
            return [law.none_column]
        if self.v.columns == OFFLOAD_ALL:
            return [law.all_column]
        return _columns(law, int(np.flatnonzero((law.t == s.threshold_tokens) & (law.p == s.p_offload))[0]))

    def _decode(self, i: int, inst: InstanceSpec) -> tuple[int, float]:
        """BS_max and T_decode on ``inst`` at site i: pinned only for the site's own kind (as size_grid)."""
        si, own = self.site_sc[i], self.site_sc[i].local.instance
        if si.decode.pinned and not (inst.gpu.name.lower() == own.gpu.name.lower() and inst.gpus == own.gpus):
            si = replace(si, decode=DecodeSpec(memory_fraction=si.decode.memory_fraction))
        d = decode_rate(si, inst)[1]
        return int(d.bs_max), float(d.t_decode_s)

    def _start(self, law: SiteLaws, sz: ks.SiteSizes, j: int, k: int, col: int) -> _Start:
        m, tier = int(sz.tier[j, k]), self.laws.spec.tiers
        tiers = [self.v.tiers[m]] if m >= 0 else [None]  # the kernel's tier indexes the variant's
        for n in sorted(self.v.tiers, key=lambda n: (tier[n].price_per_hour, n)) if m >= 0 else ():
            if usable_at_tier(law, tier[n]) > usable_at_tier(law, tier[tiers[-1]]):  # type: ignore[index]
                tiers.append(n)
        return _Start(j=j, col=col, p=float(law.p[col]), n_p=int(sz.n_p[j, k]), n_d=int(sz.n_d[j, k]),
                      tiers=tuple(tiers), egress=float(sz.egress_price[j, k]), load=float(sz.load[j, k]),
                      cost=float(sz.cost[j, k]))

    # a node: (prefill kind or -1, start per site, +prefill service, +local prefill, +decode, tier step per site)
    def sites(self, key: tuple) -> list[tuple[_Start, int, int, int | None]]:
        pi, combo, _, b, d, u = key
        starts = [self.starts[pi][i][n] for i, n in enumerate(combo)]
        return [(s, s.n_p + b[i], s.n_d + d[i], s.tiers[u[i]]) for i, s in enumerate(starts)]

    def n_prfaas(self, key: tuple) -> int:
        load = sum((self.starts[key[0]][i][n].load for i, n in enumerate(key[1])), 0.0)
        return int(ks.need(self.lam * load)) + key[2] if key[0] >= 0 else 0

    def cost(self, key: tuple) -> float:  # summed as size_solve.plan_of sums it
        gpu = self.n_prfaas(key) * (self.v.prefill[key[0]].price_per_instance_hour if key[0] >= 0 else 0.0)
        links = egress = 0.0
        for s, n_p, n_d, m in self.sites(key):
            gpu += (n_p + n_d) * self.v.local[s.j].price_per_instance_hour
            links += self.laws.spec.tiers[m].price_per_hour if m is not None else 0.0
            egress += s.egress
        return gpu + links + egress

    def children(self, key: tuple) -> list[tuple]:
        pi, combo, a, b, d, u = key
        out = [(pi, combo, a + 1, b, d, u)] if pi >= 0 and self.n_prfaas(key) < self.v.max_prfaas else []
        for i, (s, n_p, n_d, _) in enumerate(self.sites(key)):
            room = n_p + n_d < self.v.max_local
            for at, ok in ((3, room and s.p < 1), (4, room and d[i] < DECODE_EXTRA), (5, u[i] + 1 < len(s.tiers))):
                if ok:  # one more of site i's local prefill, decode or tier step
                    out.append(tuple((*x[:i], x[i] + 1, *x[i + 1:]) if n == at else x for n, x in enumerate(key)))
        return out

    def corner(self, root: tuple) -> tuple:
        """The root with every maximum bought, the widest tier and the extra decode instances."""
        pi, combo = root
        starts = [self.starts[pi][i][n] for i, n in enumerate(combo)]
        zeros = (0,) * len(combo)
        a = max(self.v.max_prfaas - self.n_prfaas((pi, combo, 0, zeros, zeros, zeros)), 0) if pi >= 0 else 0
        b = tuple(max(self.v.max_local - s.n_p - s.n_d, 0) if s.p < 1 else 0 for s in starts)
        return pi, combo, a, b, (DECODE_EXTRA,) * len(combo), tuple(len(s.tiers) - 1 for s in starts)

    def system(self, key: tuple) -> TopologySystem:
        """The node as the latency model takes it, with Lambda_max of the exact method (as api.systems)."""
        pi, n, sites = key[0], self.n_prfaas(key), self.sites(key)
        models, cands, configs = [], [], []
        for i, (s, n_p, n_d, m) in enumerate(sites):
            law, si, o = self.laws.sites[i], self.site_sc[i], self.v.local[s.j]
            pre = self.v.prefill[pi].name if pi >= 0 else o.name
            usable = usable_at_tier(law, self.laws.spec.tiers[m]) if m is not None else si.link.usable_bytes_per_s
            curves = Curves(t_prfaas=self.timer[pre], t_local=self.timer[o.name], s_kv=self.s_kv[pre])  # type: ignore
            models.append(SiteModel(name=law.name, link=law.link, lengths=si.workload.lengths,
                                    demand_share=law.demand_share, curves=curves, link_bytes_per_s=usable,
                                    n_local=n_p + n_d, decode_rps_per_instance=law.decode_rps[o.name]))
            if (i, pre, o.name, s.col) not in self.cands:
                self.cands[(i, pre, o.name, s.col)] = joint.at(models[-1], float(law.t[s.col]), 0, Method.EXACT)
            cands.append(replace(self.cands[(i, pre, o.name, s.col)], n_p=np.array([n_p], dtype=np.int64)))
            bs, step = self.shape[(i, o.name)]
            configs.append(SystemConfig(
                name=PRFAAS, threshold_tokens=float(law.t[s.col]) if s.p > 0 else None, n_prfaas=n, n_p=n_p, n_d=n_d,
                t_prfaas=self.timer[pre] if n > 0 else None, t_local=self.timer[o.name], kv_bytes=self.s_kv[pre],
                link_bytes_per_s=usable, rtt_s=si.link.rtt_s, handoff_s=si.link.handoff_s,
                n_layers=self.sc.model.num_hidden_layers,
                pipelining=self.sc.layerwise_pipelining, bs_max=bs, t_decode_s=step, output_tokens=law.output_tokens,
                capacity_rps=0.0, capacity_binding=""))
        cap = joint.point(models, cands, [0] * len(models), n)
        bind = cap.stage
        configs = [replace(c, capacity_rps=cap.lambda_max_rps * law.demand_share, capacity_binding=bind)
                   for c, law in zip(configs, self.laws.sites, strict=True)]
        return topology_system(self.sc, PRFAAS, n, configs, cap.lambda_max_rps, bind)

    def _stat(self, system: TopologySystem, nodes: int, below: float = 0.0) -> float:
        """The worst site's statistic at D from ``system_latency``'s per-site laws (``site_paths``),
        the quantile taken ``below`` its level; inf if a stage is unstable."""
        _, paths = site_paths(self.sc, system, self.demand, nodes=nodes)
        worst = 0.0
        for sp in paths.values():
            if not all(st.stable for st in sp.stages):
                return np.inf
            laws = [(pt.share, pt.p_wait, pt.tail_mean_s, pt.fixed_s, pt.fixed_weights) for pt in sp.paths
                    if pt.share > 0]
            worst = max(worst, lat.mixture_quantile(_LEVEL[self.stat] - below, laws) if self.stat != "mean" else
                        sum(w * (pw * tau + float((f @ c).mean())) for w, pw, tau, f, c in laws))
        return worst

    def value(self, key: tuple, nodes: int = SEARCH_NODES) -> float:
        """The worst site's statistic at D; with FINAL_NODES from ``system_latency`` itself."""
        if (key, nodes) not in self.ttft and nodes == SEARCH_NODES:
            self.ttft[(key, nodes)] = self._stat(self.system(key), nodes)
        elif (key, nodes) not in self.ttft:
            r = system_latency(self.sc, self.system(key), self.demand, nodes=nodes)
            vals = [t.statistic(self.stat) for t in r.sites.values()]
            self.ttft[(key, nodes)] = max(vals) if r.stable and None not in vals else np.inf  # type: ignore
        return self.ttft[(key, nodes)]

    def dead(self, root: tuple, bound: float) -> bool:
        """No node of ``root`` passes ``bound``: its corner's lower bound misses it at either nodes."""
        for nodes in (SEARCH_NODES, FINAL_NODES) if root in self.band else (SEARCH_NODES,):
            if (root, nodes) not in self.corners:
                system = self.system(self.corner(root))
                self.corners[(root, nodes)] = (self._stat(system, nodes, TIE) * (1 - 1e-6), self._stat(system, nodes))
            if self.corners[(root, nodes)][0] > bound:
                return True
        return False

    def plan(self, key: tuple) -> SizedPlan:
        pre = self.v.prefill[key[0]] if key[0] >= 0 else None
        picks = [Pick(local=self.v.local[s.j], column=s.col, n_p=n_p, n_d=n_d, tier=m, egress_price=s.egress,
                      link_price=self.laws.spec.tiers[m].price_per_hour if m is not None else 0.0)
                 for s, n_p, n_d, m in self.sites(key)]
        load = sum((s.load for s, _, _, _ in self.sites(key)), 0.0)
        return plan_of(self.laws, self.v.kind, self.demand, pre, self.n_prfaas(key), load, picks)

    def run(self, bounds: Sequence[float]) -> tuple[dict[float, tuple[tuple, float]], bool, float]:
        """Each bound's cheapest passing node and statistic; whether evaluations ran out; the lowest seen."""
        pending, found, tie, seen, lowest = sorted(set(bounds), reverse=True), {}, itertools.count(), set(), np.inf
        zeros = (0,) * len(self.laws.sites)
        heap = [(self.cost(k), next(tie), k) for k in ((*r, 0, zeros, zeros, zeros) for r in self.roots)]
        heapq.heapify(heap)
        while heap and pending:
            key = heapq.heappop(heap)[2]
            if key in seen or self.dead(key[:2], pending[0]):
                continue  # a dead root: none of its nodes passes a bound still open
            seen.add(key)
            if self.evaluations >= MAX_EVALUATIONS:
                return found, True, lowest
            self.evaluations += 1
            v = self.value(key)
            lowest = min(lowest, v)
            for bound in [b for b in pending if v <= b]:
                if (full := self.value(key, FINAL_NODES)) <= bound:
                    found[bound] = (key, full)
                else:  # passes with the search's nodes, not the final ones: bound the root at both
                    self.band.add(key[:2])
            pending = [b for b in pending if b not in found]
            for child in self.children(key):
                if child not in seen:
                    heapq.heappush(heap, (self.cost(child), next(tie), child))
        return found, False, lowest

    def why(self, bound: float, stopped: bool, lowest: float) -> str:
        what = f"{self.stat} TTFT <= {bound:g} s"
        if stopped:
            return (f"ttft: the search stopped after {self.evaluations} evaluations, the cheapest plans still "
                    f"missing {what}; the lowest found is {lowest:.3g} s")
        if all(self.dead(r, bound) for r in self.roots):
            r = min(self.roots, key=lambda r: self.corners[(r, SEARCH_NODES)][1])
            floor = self._stat(self.system(self.corner(r)), FINAL_NODES)
            low = f"the lowest found is {floor:.3g} s (every maximum bought, the widest tier)"
        else:
            low = f"the lowest found is {lowest:.3g} s" if np.isfinite(lowest) else "no plan weighed is stable at D"
        return f"ttft: no plan within the maxima meets {what}; {low}"


def constrained(sc: ScenarioSpec, laws: Laws, best: SizedPlan, v: Variant | None = None,
                demand: float | None = None, frontier: bool = True
                ) -> tuple[SizedPlan, float, tuple[TtftPoint, ...]]:
    """The cheapest plan of variant ``v`` (default PrfaaS-PD over every candidate) meeting
    ``sc.ttft_slo_s`` at ``demand`` (default the sizing's), its statistic and, with ``frontier``, the
    cost-versus-TTFT frontier (``sizing.ttft_bounds``, else the SLO x ``FACTORS``). ``best`` is the
    variant's throughput plan. InfeasibleError if no plan of the lattice meets the SLO."""
    bound = sc.ttft_slo_s
    assert bound is not None
    bounds = (laws.spec.ttft_bounds or tuple(bound * f for f in FACTORS)) if frontier else ()
    search = _Search(sc, laws, best, v, demand)
    found, stopped, lowest = search.run((bound, *bounds))
    if bound not in found:
        raise InfeasibleError(search.why(bound, stopped, lowest), binding="ttft")
    plans = {b: (search.plan(k), v) for b, (k, v) in found.items()}
    return plans[bound][0], plans[bound][1], tuple(
        TtftPoint(bound_s=b, plan=plans[b][0], ttft_s=plans[b][1], why=None) if b in plans else
        TtftPoint(bound_s=b, plan=None, ttft_s=None, why=search.why(b, stopped, lowest)) for b in bounds)
