"""The JSON of the serving-stack profile an output used: the one place its keys are spelled
(here, below the api layer, so the writers of ``report`` can use it too)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.specs.stack import StackSpec


def stack_json(prof: StackSpec) -> dict[str, Any]:
    """The profile an output used: its name, engine and the band its intervals come from."""
    lo, hi = prof.band("prefill")
    return {"name": prof.name, "engine": prof.engine, "versions": prof.versions, "source": prof.source,
            "points": prof.points, "sources": prof.sources, "prefill_band_p10": lo, "prefill_band_p90": hi,
            "band_from": prof.band_from}
