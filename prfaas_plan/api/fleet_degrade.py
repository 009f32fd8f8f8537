"""`degrade` for several models: each link at fractions of its bandwidth and down, the plan held
(its thresholds, splits and assignment kept) and the fleet re-planned (``core.fleet``, every model's
threshold, split and service instances searched again at the link's new budget)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from prfaas_plan.api.fleet import FleetPoint, entries, laws, plan, point_of, refine, shape
from prfaas_plan.core import fleet as core
from prfaas_plan.core.throughput import Method, routing
from prfaas_plan.specs.fleet import FleetDegradeLevel, FleetDegradeResult, FleetSpec


def _at(fl: core.Fleet, i: int, level: float) -> core.Fleet:
    bw = tuple(b * level if k == i else b for k, b in enumerate(fl.link_bytes_per_s))
    return replace(fl, link_bytes_per_s=bw)


def degrade(fs: FleetSpec, levels: tuple[float, ...]) -> FleetDegradeResult:
    r = plan(fs)
    m = Method(r.method)
    head = r.methods[r.method].best
    sh = shape(fs)
    ls = laws(fs)
    held = [core.Entry(model=name, site=sh.fleet.sites.index(sm.name), weight=w * sm.share,
                       routing=routing(sm.lengths, sm.curves, [e.threshold_tokens if e.threshold_tokens is not None
                                                               else np.inf], m),
                       decode_rps_per_instance=sm.decode_rps_per_instance)
            for (name, w, sm, _), e in zip(ls, head.entries, strict=True)]
    choices = [core.Choice(k=0, n_p=e.n_p, n_d=e.n_d, a=e.n_prfaas) for e in head.entries]
    grid = entries(sh, ls, m)
    out = []
    for i, link in enumerate(sh.fleet.links):
        per = []
        for level in (1.0, *levels):
            fl = _at(sh.fleet, i, level)
            static = core.evaluate(fl, held, choices)
            found = core.search(fl, grid)
            replan: FleetPoint | None = None
            if found is not None and found.lambda_max_rps > 0:
                at = replace(sh, fleet=fl)
                es, found = refine(at, ls, m, grid, found)
                replan = point_of(at, es, found)
            per.append(FleetDegradeLevel(level=level, usable_bytes_per_s=fl.link_bytes_per_s[i],
                                         static_rps=static.lambda_max_rps, static_binding=static.binding,
                                         replan=replan))
        out.append((link, tuple(per)))
    return FleetDegradeResult(scenario=fs.name, method=r.method, nominal=head, links=tuple(out))
