"""The "stack" key of every output that used a serving-stack profile (`kv-rate`, `perf`, `stacks`)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.specs.stack import StackSpec


def stack_json(prof: StackSpec) -> dict[str, Any]:
    """The profile an output used: its name, engine and the band its intervals come from."""
    lo, hi = prof.band("prefill")
    return {"name": prof.name, "engine": prof.engine, "versions": prof.versions, "source": prof.source,
            "points": prof.points, "sources": prof.sources, "prefill_band_p10": lo, "prefill_band_p90": hi,
            "band_from": prof.band_from}
