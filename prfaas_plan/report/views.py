"""Per-command views: which rows go to CSV and how the tables read. Units for people here only."""

from __future__ import annotations

import textwrap
from typing import Any

from prfaas_plan import units
from prfaas_plan.report.kv_rate_json import kv_rate_json
from prfaas_plan.report.render import WIDTH, count, emit, num, table
from prfaas_plan.specs.kv_rate import KvRateResult
from prfaas_plan.specs.stack import StackSpec


def _mib(b: float | None) -> str:
    return "-" if b is None else num(units.bytes_to_mib(b), 1)


def emit_models(fmt: str, result: dict[str, Any]) -> None:
    rows = result["models"]
    emit(fmt, result, rows=[{k: v for k, v in r.items() if k != "profiles"} | {"profiles": " ".join(r["profiles"])}
                            for r in rows],
         tables=lambda: [table("Models (bf16 KV, fp32 recurrent state unless the model says otherwise)",
                               ["model", "layers", "params", "active", "KV B/token", "SWA max MiB",
                                "state MiB", "profiles"],
                               [[r["name"], r["layers"], count(r["params_total"]), count(r["params_active"]),
                                 num(r["kv_bytes_per_token"], 0), _mib(r["swa_max_bytes"]) if r["swa_max_bytes"]
                                 else "-", _mib(r["state_bytes"]) if r["state_bytes"] else "-",
                                 ", ".join(r["profiles"]) or "-"] for r in rows])])


def emit_hardware(fmt: str, result: dict[str, Any]) -> None:
    rows = result["hardware"]

    def tf(x: float | None) -> str:
        return "-" if x is None else num(x / units.TFLOPS, 0)

    def tables():
        # provenance as numbered notes under the table: one long line per GPU would not fit 120 columns
        notes = list(dict.fromkeys(r["efficiency_source"] for r in rows if r["efficiency_source"] != "default"))
        caption = "\n".join(textwrap.fill(f"[{i}] {n}", width=WIDTH, subsequent_indent="    ")
                            for i, n in enumerate(notes, 1))
        return [table("GPUs (dense TFLOPS; scale-up per direction)",
                      ["gpu", "BF16 TF", "FP8 TF", "HBM GB", "HBM TB/s", "scale-up GB/s", "NIC Gbps", "$/h",
                       "efficiency"],
                      [[r["name"], tf(r["bf16_flops"]), tf(r["fp8_flops"]), num(r["hbm_bytes"] / units.GB, 0),
                        num(r["hbm_bytes_per_s"] / units.TB, 2), num(r["scaleup_bytes_per_s"] / units.GB, 0),
                        "-" if r["nic_bytes_per_s"] is None
                        else num(units.bytes_per_s_to_gbps(r["nic_bytes_per_s"]), 0),
                        num(r["price_per_hour"]),
                        "default" if r["efficiency_source"] == "default"
                        else f"[{notes.index(r['efficiency_source']) + 1}]"] for r in rows],
                      caption=caption or None)]

    emit(fmt, result, rows=rows, tables=tables)


def emit_model(fmt: str, r: dict[str, Any]) -> None:
    def tables():
        state = f", state {r['state_dtype']}" if r["state_bytes"] else ""
        out = [table(f"{r['name']}: {count(r['params_total'])} params, {count(r['params_active'])} active; "
                     f"KV {r['kv_dtype']}{state}",
                     ["layers", "kind", "KV B/token", "window tokens", "state MiB"],
                     [[g["count"], g["kind"] + (f" ({g['variant']})" if g.get("variant") else ""),
                       num(g["kv_bytes_per_token"], 0), g.get("sliding_window") or "-",
                       _mib(g["state_bytes"]) if g["state_bytes"] else "-"] for g in r["layers"]],
                     caption=r["source"])]
        out.append(table("S_kv(l) per request (MiB = 2^20 B; 1K = 1024 tokens)",
                         ["length tokens", "S_kv MiB"],
                         [[units.format_length(s["length_tokens"]), _mib(s["kv_bytes"])] for s in r["s_kv"]]))
        wf, ctx = r.get("weight_format"), r.get("max_position_embeddings")
        out.append(textwrap.fill(f"Weights: {units.bytes_to_gib(r['weights_bytes']):,.1f} GiB, "
                   + (f"{wf['name']} ({wf['expert_bytes']:.6g} B per expert weight, {wf['other_bytes']:.6g} B "
                      "per other weight, scales included)" if wf else f"{r['weight_dtype']}")
                   + (f"; context {ctx:,} tokens (max_position_embeddings)." if ctx else "; context not given."),
                   width=WIDTH))
        s = r["saving"]
        if s is not None:
            out.append(
                f"KV saving vs {s['reference']}: hybrid {s['hybrid_factor']:.2f}x "
                f"({s['total_layers']} layers / {s['growing_layers']} with growing KV) x attention "
                f"{s['attention_factor']:.2f}x per layer = {s['total_factor']:.1f}x less KV per token.")
        return out

    emit(fmt, r, rows=[{k: v for k, v in g.items()} for g in r["layers"]], tables=tables)


def band(lo: float, hi: float, digits: int) -> str:
    """A P10-P90 cell; "-" where the value is measured (no model band)."""
    return "-" if lo == hi else f"{num(lo, digits)}-{num(hi, digits)}"


def stack_text(prof: StackSpec) -> str:
    """Which profile an output used and where its P10-P90 comes from (``stack_line`` of the typed profile)."""
    lo, hi = prof.band("prefill")
    return (f"stack {prof.name} ({prof.engine} {prof.versions}): P10-P90 = x{lo:.2f}..x{hi:.2f} of a modelled time "
            f"({prof.band_from}); measured rows are their own")


def stack_line(st: dict[str, Any]) -> str:
    """Which profile an output used and where its P10-P90 comes from."""
    return (f"stack {st['name']} ({st['engine']} {st['versions']}): P10-P90 = x{st['prefill_band_p10']:.2f}.."
            f"x{st['prefill_band_p90']:.2f} of a modelled time ({st['band_from']}); measured rows are their own")


def emit_stacks(fmt: str, r: dict[str, Any]) -> None:
    def tables():
        rows = [[s["name"] + (" (default)" if s["default"] else ""),
                 s["engine"] if len(s["versions"]) > 16 else f"{s['engine']} {s['versions']}",
                 ", ".join(s["gpus"]), num(s["points"], 0), num(s["sources"], 0),
                 num(units.s_to_ms(s["prefill_overhead_s"]), 0),
                 f"x{s['prefill_band_p10']:.2f}..x{s['prefill_band_p90']:.2f}"]
                for s in r["stacks"]]
        return [table("Serving-stack profiles (stacks/)", ["stack", "engine", "GPUs measured", "points", "sources",
                                                           "prefill overhead ms", "P10-P90"], rows)]

    emit(fmt, r, rows=r["stacks"], tables=tables)


def emit_kv_rate(fmt: str, r: KvRateResult) -> None:
    """`kv-rate`: S_kv, T_prefill and Phi_kv per length (Eq. 1), each with its P10-P90, and the egress."""
    gbps = units.bytes_per_s_to_gbps

    def tables():
        cols = ["length tokens", "S_kv MiB", "T_prefill s", "P10-P90 s", "Phi_kv Gbps", "P10-P90 Gbps", "time from"]
        if r.instances is not None:
            cols.append(f"egress x{r.instances} Gbps")
        rows = []
        for row in r.rows:
            line = [units.format_length(row.length_tokens), _mib(row.kv_bytes), num(row.prefill_s, 3),
                    band(row.prefill_s_p10, row.prefill_s_p90, 3), num(gbps(row.kv_bytes_per_s), 2),
                    band(gbps(row.kv_bytes_per_s_p10), gbps(row.kv_bytes_per_s_p90), 2), row.source]
            if row.egress_bytes_per_s is not None:
                line.append(num(gbps(row.egress_bytes_per_s), 1))
            rows.append(line)
        caption = "\n".join([*(f"{s.source}: {s.detail}" for s in r.sources), stack_text(r.stack)])
        return [table(f"{r.model} on {r.instance}: KV throughput (Eq. 1"
                      + (", egress Eq. 2)" if r.instances is not None else ")"), cols, rows, caption=caption)]

    payload = kv_rate_json(r)
    emit(fmt, payload, rows=payload["rows"], tables=tables)
