"""What the figures draw, computed here from a plan so that ``report.plots`` only draws.

The types are declared in ``report.figures`` (report sits below api in the layers, so that is
where both can name them) and re-exported here.

``figure5_data``: the paper's Figure 5 for one PD site, (a) the arrival-rate bounds over the
split N_p / N_d at the best threshold t, (b) the two prefill bounds over t at the best split.
"""

from __future__ import annotations

import numpy as np

from prfaas_plan.api.plan import Plan
from prfaas_plan.core.throughput import Method, bounds, routing
from prfaas_plan.report.figures import Figure5, SplitPanel, ThresholdPanel

__all__ = ["Figure5", "SplitPanel", "ThresholdPanel", "figure5_data"]


def figure5_data(plan: Plan) -> Figure5:
    """The arrays of Figure 5 from ``plan``'s headline method, its best point and its search grid."""
    sc, timing, m = plan.scenario, plan.staged(), plan.scenario.search.method
    grid = plan.result.head.grid
    assert grid is not None, "Figure 5 draws one PD site's grid"
    best = grid.best
    kw = {"link_bytes_per_s": sc.link.usable_bytes_per_s, "decode_rps_per_instance": timing.decode_rps_per_instance}
    total = sc.local.instances
    at_best_t = routing(sc.workload.lengths, timing.curves, [best.threshold_tokens], Method(m))
    n_p = np.arange(1, total)
    b = bounds(at_best_t, n_prfaas=best.n_prfaas, n_p=n_p.reshape(1, -1), n_d=(total - n_p).reshape(1, -1), **kw)
    prefill = np.minimum(np.minimum(b.prfaas_compute, b.link), b.pd_prefill)[0]
    decode = b.decode[0]
    split = SplitPanel(n_p=n_p, prefill_rps=prefill, decode_rps=decode, lambda_max_rps=np.minimum(prefill, decode))

    r = plan.searches[m].routing
    bt = bounds(r, n_prfaas=best.n_prfaas, n_p=best.n_p, n_d=best.n_d, **kw)
    ok = (r.p > 0) & (r.p < 1)  # at p = 0 or 1 one bound is unconstrained: nothing to draw
    thresholds = ThresholdPanel(thresholds_tokens=r.t[ok], prfaas_rps=np.minimum(bt.prfaas_compute, bt.link)[ok],
                                pd_prefill_rps=bt.pd_prefill[ok], decode_rps=float(np.atleast_1d(bt.decode)[0]))
    return Figure5(title=f"{sc.name}: {sc.model.name} (method {m})", local_instances=total,
                   threshold_tokens=best.threshold_tokens, n_prfaas=best.n_prfaas, n_p=best.n_p,
                   n_d=best.n_d, lambda_max_rps=best.lambda_max_rps, split=split, thresholds=thresholds)
