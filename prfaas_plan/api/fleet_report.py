"""`report` of a scenario of several models: the plan, the analytic TTFT, sizing (with a ``sizing:``
section), link robustness and (with ``simulate``) the simulated TTFT, from the fleet's api calls."""

from __future__ import annotations

from prfaas_plan import __version__
from prfaas_plan.api.fleet import plan
from prfaas_plan.api.fleet_degrade import degrade
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.fleet import FleetSpec

NO_SIZING = ("The cheapest fleet (`prfaas-plan size`) is left out: the scenario has no sizing: section (the demand, "
             "headroom, candidate instances and link tiers it weighs; see scenarios/three-models.yaml).")
LATENCY_LOAD = 0.8  # `latency --load 0.8`: the rate `simulate` runs at by default, so the two compare


def report(fs: FleetSpec, *, simulate: bool, command: str) -> str:
    from prfaas_plan.report.html_fleet import render_fleet

    r = plan(fs)
    z, why = None, NO_SIZING
    if fs.models[0].scenario.sizing is not None:
        from prfaas_plan.api.fleet_size import size
        from prfaas_plan.api.report import left_out

        try:
            z = size(fs)
        except (SpecError, InfeasibleError) as exc:  # the page says why, as one model's report does
            why = left_out("The cheapest fleet (`prfaas-plan size`)", exc, ())
    g = degrade(fs, (0.5, 0.1, 0.0))
    from prfaas_plan.api.fleet_latency import latency

    lat = latency(fs, load=LATENCY_LOAD)
    sim = None
    if simulate:
        from prfaas_plan.api.fleet_sim import simulate as run

        sim = run(fs)
    return render_fleet(r, z, g, sim, lat, version=__version__, command=command, sizing_note=why)
