"""Lambda_max with its P10-P90 interval: the plan searched again at the serving stack's band ends.

Every modelled time (an analytic or scaled T_prefill, a derived decode step) carries its profile's
P10-P90 band of measured / predicted time on sources the fit never saw (``specs.stack``). The
interval's low end plans with every modelled time at its P90 factor (slower), the high end at its
P10 factor; measured profiles and a pinned decode are what they are, so a scenario that rests on
them alone has a point interval and costs nothing more. Two searches of the headline method only.
"""

from __future__ import annotations

from dataclasses import replace

from prfaas_plan.specs.results import LambdaInterval
from prfaas_plan.specs.scenario import ScenarioSpec


def bands(sc: ScenarioSpec, sources: dict[str, str] | None,
           extra: tuple = ()) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """(prefill band or None when every prefill time is measured, decode band or None when pinned);
    ``sources`` None: any may be modelled, and a decode derived (size's candidates of other kinds:
    a pinned decode holds only for its own, and a scaled time never moves a pinned one)."""
    clusters = [sc.prfaas, sc.local, *(s.cluster for s in sc.topology.sites)]
    effs = [c.instance.gpu.efficiency for c in clusters] + [i.gpu.efficiency for i in extra]
    modelled = sources is None or any(v.startswith(("analytic", "scaled")) for k, v in sources.items()
                                      if "prefill" in k)
    pre = (min(e.prefill_band[0] for e in effs), max(e.prefill_band[1] for e in effs)) if modelled else None
    dec = None if sc.decode.pinned and sources is not None else (min(e.decode_band[0] for e in effs),
                                                                 max(e.decode_band[1] for e in effs))
    return pre, dec


def _dominant(binding: str, pre: tuple[float, float] | None, dec: tuple[float, float] | None) -> str:
    """The modelled input the binding stage at the low end rests on."""
    wants = "decode step" if binding.startswith("decode") else "prefill time"
    have = [name for name, band in (("prefill time", pre), ("decode step", dec)) if band is not None]
    if not have:
        return "none"
    return wants if wants in have else have[0]


def lambda_interval(sc: ScenarioSpec, head_lambda: float, head_binding: str, head_cost: float | None,
                    sources: dict[str, str]) -> LambdaInterval:
    """Lambda_max at the P10-P90 ends of the modelled times (see the module docstring)."""
    from prfaas_plan.api.headline import headline

    pre, dec = bands(sc, sources)
    if pre is None and dec is None:
        return LambdaInterval(lambda_p10_rps=head_lambda, lambda_p90_rps=head_lambda,
                              cost_per_million_p10=head_cost, cost_per_million_p90=head_cost, prefill_band=None,
                              decode_band=None, dominant="none", binding_p10=head_binding, binding_p90=head_binding)
    ends = []
    for k in (1, 0):  # slow end (P90 factors) -> Lambda's P10; fast end -> its P90
        scale = (pre[k] if pre else 1.0, dec[k] if dec else 1.0)
        at = replace(sc, time_scale=scale)
        h = headline(at)
        ends.append((h.point.lambda_max_rps, h.point.binding, h.cost.cost_per_million_requests))
    (lo, b_lo, c_lo), (hi, b_hi, c_hi) = ends
    return LambdaInterval(lambda_p10_rps=lo, lambda_p90_rps=hi, cost_per_million_p10=c_hi, cost_per_million_p90=c_lo,
                          prefill_band=pre, decode_band=dec, dominant=_dominant(b_lo, pre, dec),
                          binding_p10=b_lo, binding_p90=b_hi)

