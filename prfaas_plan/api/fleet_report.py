"""`report` of a scenario of several models: the plan, the analytic TTFT, sizing (with a ``sizing:``
section), link robustness and (with ``simulate``) the simulated TTFT, from the fleet's api calls."""

from __future__ import annotations

from prfaas_plan import __version__
from prfaas_plan.api.fleet import plan
from prfaas_plan.api.fleet_degrade import degrade
from prfaas_plan.specs.fleet import FleetSpec

LATENCY_LOAD = 0.8  # `latency --load 0.8`: the rate `simulate` runs at by default, so the two compare


def report(fs: FleetSpec, *, simulate: bool, command: str) -> str:
    from prfaas_plan.report.html_fleet import render_fleet

    r = plan(fs)
    z = None
    if fs.models[0].scenario.sizing is not None:
        from prfaas_plan.api.fleet_size import size

        z = size(fs)
    g = degrade(fs, (0.5, 0.1, 0.0))
    from prfaas_plan.api.fleet_latency import latency

    lat = latency(fs, load=LATENCY_LOAD)
    sim = None
    if simulate:
        from prfaas_plan.api.fleet_sim import simulate as run

        sim = run(fs)
    return render_fleet(r, z, g, sim, lat, version=__version__, command=command)
