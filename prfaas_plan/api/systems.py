"""The three systems a scenario compares, as concrete configurations for latency and simulation.

PrfaaS-PD runs at the optimizer's best (t, N_prfaas, N_p, N_d); homogeneous PD at its best split;
naive heterogeneous with all prefill on the PrfaaS cluster. Each carries its capacity: Lambda_max
of the ``exact`` method at that configuration (the rate servers / mean service time sustain),
which is what a simulation saturates at.
"""

from __future__ import annotations

from prfaas_plan.api.plan import Timing, homogeneous_splits, plan, timing
from prfaas_plan.core.optimize import offload_all_threshold
from prfaas_plan.core.throughput import Method, operating_point, routing
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import SystemConfig

PRFAAS, HOMOGENEOUS, NAIVE = "prfaas", "homogeneous", "naive_heterogeneous"


def _decode_shape(sc: ScenarioSpec, t: Timing) -> tuple[int, float]:
    d = t.decode_detail
    return int(d["bs_max"]), float(d["t_decode_s"])


def systems(sc: ScenarioSpec, *, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)) -> dict[str, SystemConfig]:
    """The configurations of the systems the scenario compares (those it defines)."""
    t = timing(sc)
    lengths = sc.workload.lengths
    n_layers = sc.model.num_hidden_layers
    common = {"kv_bytes": t.curves.s_kv, "rtt_s": sc.link.rtt_s, "n_layers": n_layers,
              "pipelining": sc.layerwise_pipelining, "output_tokens": sc.workload.output_tokens}
    out: dict[str, SystemConfig] = {}
    bs, step = _decode_shape(sc, t)
    if PRFAAS in which:
        best = plan(sc, methods=(sc.search.method,)).searches[sc.search.method].best
        r = routing(lengths, t.curves, [best.threshold_tokens], Method.EXACT)
        cap = operating_point(r, 0, n_prfaas=best.n_prfaas, n_p=best.n_p, n_d=best.n_d,
                              link_bytes_per_s=sc.link.usable_bytes_per_s,
                              decode_rps_per_instance=t.decode_rps_per_instance)
        out[PRFAAS] = SystemConfig(name=PRFAAS, threshold_tokens=best.threshold_tokens, n_prfaas=best.n_prfaas,
                                   n_p=best.n_p, n_d=best.n_d, t_prfaas=t.curves.t_prfaas, t_local=t.curves.t_local,
                                   link_bytes_per_s=sc.link.usable_bytes_per_s, bs_max=bs, t_decode_s=step,
                                   capacity_rps=cap.lambda_max_rps, capacity_binding=str(cap.binding), **common)
    if HOMOGENEOUS in which and sc.homogeneous is not None:
        th, splits = homogeneous_splits(sc, sc.homogeneous, Method.EXACT)
        hbs, hstep = _decode_shape(sc, th)
        cap = max(splits, key=lambda op: op.lambda_max_rps)
        out[HOMOGENEOUS] = SystemConfig(name=HOMOGENEOUS, threshold_tokens=None, n_prfaas=0, n_p=cap.n_p,
                                        n_d=cap.n_d, t_prfaas=None, t_local=th.curves.t_local,
                                        link_bytes_per_s=sc.link.usable_bytes_per_s, bs_max=hbs, t_decode_s=hstep,
                                        capacity_rps=cap.lambda_max_rps, capacity_binding=str(cap.binding), **common)
    if NAIVE in which and sc.naive_heterogeneous:
        r = routing(lengths, t.curves, [offload_all_threshold(lengths)], Method.EXACT)
        cap = operating_point(r, 0, n_prfaas=sc.prfaas.instances, n_p=0, n_d=sc.local.instances,
                              link_bytes_per_s=sc.link.usable_bytes_per_s,
                              decode_rps_per_instance=t.decode_rps_per_instance)
        out[NAIVE] = SystemConfig(name=NAIVE, threshold_tokens=0.0, n_prfaas=sc.prfaas.instances, n_p=0,
                                  n_d=sc.local.instances, t_prfaas=t.curves.t_prfaas, t_local=None,
                                  link_bytes_per_s=sc.link.usable_bytes_per_s, bs_max=bs, t_decode_s=step,
                                  capacity_rps=cap.lambda_max_rps, capacity_binding=str(cap.binding), **common)
    return out
