"""The efficiency overlay's mapping, as ``calibrate`` writes it to YAML (``io.measurements``) and
shows it in its JSON (``report.perf_json``); apart so the report layer reaches it without the
schema (which imports the model)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.specs.hardware import Efficiency


def overlay_mapping(hardware: str, efficiency: Efficiency) -> dict[str, Any]:
    """The ``EfficiencyOverlay`` YAML mapping (units in the keys, as hardware YAML spells them)."""
    return {
        "overlay": hardware,
        "efficiency": {
            "compute": round(efficiency.compute, 4),
            "low_precision": round(efficiency.low_precision, 4),
            "memory": round(efficiency.memory, 4),
            "comm": round(efficiency.comm, 4),
            "prefill_overhead_ms": round(float(units.s_to_ms(efficiency.prefill_overhead_s)), 2),
            "decode_overhead_ms": round(float(units.s_to_ms(efficiency.decode_overhead_s)), 3),
            "source": efficiency.source,
        },
    }
