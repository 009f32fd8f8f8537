"""The JSON and CSV rows of `kv-rate`, written from the typed ``specs.kv_rate.KvRateResult``: the
one place its keys are spelled (Gbps decimal, as the paper's)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.stack_json import stack_json
from prfaas_plan.specs.kv_rate import KvRateResult, KvRateRow


def _row(r: KvRateRow) -> dict[str, Any]:
    out = {"length_tokens": r.length_tokens, "kv_bytes": r.kv_bytes, "prefill_s": r.prefill_s,
           "prefill_s_p10": r.prefill_s_p10, "prefill_s_p90": r.prefill_s_p90, "kv_bytes_per_s": r.kv_bytes_per_s,
           "kv_gbps": units.bytes_per_s_to_gbps(r.kv_bytes_per_s),
           "kv_gbps_p10": units.bytes_per_s_to_gbps(r.kv_bytes_per_s_p10),
           "kv_gbps_p90": units.bytes_per_s_to_gbps(r.kv_bytes_per_s_p90),
           "source": r.source, "basis": r.basis, "beyond_context": r.beyond_context, "kv_source": r.kv_source}
    if r.egress_bytes_per_s is not None:
        out["egress_gbps"] = units.bytes_per_s_to_gbps(r.egress_bytes_per_s)
    return out


def kv_rate_json(r: KvRateResult) -> dict[str, Any]:
    return {"model": r.model, "instance": r.instance, "instances": r.instances, "kv_dtype": r.kv_dtype,
            "state_dtype": r.state_dtype, "sources": [{"source": s.source, "detail": s.detail} for s in r.sources],
            "stack": stack_json(r.stack), "rows": kv_rate_rows(r)}


def kv_rate_rows(r: KvRateResult) -> list[dict[str, Any]]:
    """One row per input length (the JSON's ``rows`` and the CSV)."""
    return [_row(x) for x in r.rows]
