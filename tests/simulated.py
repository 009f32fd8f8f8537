"""`simulate`'s JSON as the command writes it, from the library call (``api.sim.simulate`` then
``report.sim_json.simulate_json``): what the simulator tests read."""

from __future__ import annotations

from typing import Any

from prfaas_plan.api.sim import simulate
from prfaas_plan.report.sim_json import simulate_json


def simulate_systems(sc: Any, **kw: Any) -> dict[str, Any]:
    """Every system at the same total rate (``api.sim.simulate``'s arguments), as `simulate --format json`."""
    return simulate_json(simulate(sc, **kw))
