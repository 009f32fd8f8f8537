"""Per-command views: which rows go to CSV and how the tables read. Units for people here only."""

from __future__ import annotations

import textwrap

from prfaas_plan import units
from prfaas_plan.report.catalog_json import (
    hardware_json,
    hardware_rows,
    layer_rows,
    model_show_json,
    models_csv_rows,
    models_json,
    stacks_json,
    stacks_rows,
)
from prfaas_plan.report.kv_rate_json import kv_rate_json, kv_rate_rows
from prfaas_plan.report.render import WIDTH, count, emit, num, table
from prfaas_plan.specs.catalog_view import GpuRow, ModelRow, ModelShow, StackRow
from prfaas_plan.specs.kv_rate import KvRateResult
from prfaas_plan.specs.stack import StackSpec


def _mib(b: float | None) -> str:
    return "-" if b is None else num(units.bytes_to_mib(b), 1)


def emit_models(fmt: str, rows: tuple[ModelRow, ...]) -> None:
    """`models`: layers by kind, parameters, KV per token, SWA and constant state per model."""
    payload = models_json(rows)
    emit(fmt, payload, rows=models_csv_rows(payload),
         tables=lambda: [table("Models (bf16 KV, fp32 recurrent state unless the model says otherwise)",
                               ["model", "layers", "params", "active", "KV B/token", "SWA max MiB",
                                "state MiB", "profiles"],
                               [[r.model.name, r.layers, count(r.model.params_total), count(r.model.params_active),
                                 num(r.kv.kv_bytes_per_token, 0), _mib(r.kv.swa_max_bytes) if r.kv.swa_max_bytes
                                 else "-", _mib(r.kv.state_bytes) if r.kv.state_bytes else "-",
                                 ", ".join(f"{p.gpus}x{p.hardware}" for p in r.model.profiles) or "-"]
                                for r in rows])])


def emit_hardware(fmt: str, rows: tuple[GpuRow, ...]) -> None:
    """`hardware`: each GPU's datasheet figures and where its efficiencies come from."""
    gpus = [r.gpu for r in rows]

    def tf(x: float | None) -> str:
        return "-" if x is None else num(x / units.TFLOPS, 0)

    def tables():
        # provenance as numbered notes under the table: one long line per GPU would not fit 120 columns
        notes = list(dict.fromkeys(g.efficiency.source for g in gpus if g.efficiency.source != "default"))
        caption = "\n".join(textwrap.fill(f"[{i}] {n}", width=WIDTH, subsequent_indent="    ")
                            for i, n in enumerate(notes, 1))
        return [table("GPUs (dense TFLOPS; scale-up per direction)",
                      ["gpu", "BF16 TF", "FP8 TF", "HBM GB", "HBM TB/s", "scale-up GB/s", "NIC Gbps", "$/h",
                       "efficiency"],
                      [[g.name, tf(g.bf16_flops), tf(g.fp8_flops), num(g.hbm_bytes / units.GB, 0),
                        num(g.hbm_bytes_per_s / units.TB, 2), num(g.scaleup_bytes_per_s / units.GB, 0),
                        "-" if g.nic_bytes_per_s is None else num(units.bytes_per_s_to_gbps(g.nic_bytes_per_s), 0),
                        num(g.price_per_hour),
                        "default" if g.efficiency.source == "default"
                        else f"[{notes.index(g.efficiency.source) + 1}]"] for g in gpus],
                      caption=caption or None)]

    emit(fmt, hardware_json(rows), rows=hardware_rows(rows), tables=tables)


def emit_model(fmt: str, r: ModelShow) -> None:
    """`model show`: KV per layer group, S_kv(l), the weights and the hybrid saving."""
    m, kv = r.model, r.kv

    def tables():
        state = f", state {kv.state_dtype}" if kv.state_bytes else ""
        out = [table(f"{m.name}: {count(m.params_total)} params, {count(m.params_active)} active; "
                     f"KV {kv.kv_dtype}{state}",
                     ["layers", "kind", "KV B/token", "window tokens", "state MiB"],
                     [[x.group.count, str(x.group.kind) + (f" ({x.group.variant})" if getattr(x.group, "variant", None)
                                                           else ""),
                       num(x.kv_bytes_per_token, 0), getattr(x.group, "sliding_window", None) or "-",
                       _mib(x.state_bytes) if x.state_bytes else "-"] for x in r.layers],
                     caption=m.source)]
        out.append(table("S_kv(l) per request (MiB = 2^20 B; 1K = 1024 tokens)",
                         ["length tokens", "S_kv MiB"],
                         [[units.format_length(n), _mib(b)] for n, b in r.s_kv]))
        wf, ctx = m.weight_format, m.max_position_embeddings
        out.append(textwrap.fill(f"Weights: {units.bytes_to_gib(m.weights_bytes_total):,.1f} GiB, "
                   + (f"{wf.name} ({wf.expert_bytes:.6g} B per expert weight, {wf.other_bytes:.6g} B "
                      "per other weight, scales included)" if wf else f"{m.weight_dtype}")
                   + (f"; context {ctx:,} tokens (max_position_embeddings)." if ctx else "; context not given."),
                   width=WIDTH))
        s = r.saving
        if s is not None:
            out.append(
                f"KV saving vs {s.reference}: hybrid {s.hybrid_factor:.2f}x "
                f"({s.total_layers} layers / {s.growing_layers} with growing KV) x attention "
                f"{s.attention_factor:.2f}x per layer = {s.total_factor:.1f}x less KV per token.")
        return out

    emit(fmt, model_show_json(r), rows=layer_rows(r), tables=tables)


def band(lo: float, hi: float, digits: int) -> str:
    """A P10-P90 cell; "-" where the value is measured (no model band)."""
    return "-" if lo == hi else f"{num(lo, digits)}-{num(hi, digits)}"


def stack_text(prof: StackSpec) -> str:
    """Which profile an output used and where its P10-P90 comes from."""
    lo, hi = prof.band("prefill")
    return (f"stack {prof.name} ({prof.engine} {prof.versions}): P10-P90 = x{lo:.2f}..x{hi:.2f} of a modelled time "
            f"({prof.band_from}); measured rows are their own")


def emit_stacks(fmt: str, rows: tuple[StackRow, ...]) -> None:
    """`stacks`: each profile's engine, the GPUs it was measured on, its fixed cost and P10-P90 band."""

    def tables():
        out = []
        for r in rows:
            st, (lo, hi) = r.stack, r.stack.band("prefill")
            out.append([st.name + (" (default)" if r.default else ""),
                        st.engine if len(st.versions) > 16 else f"{st.engine} {st.versions}",
                        ", ".join(st.gpus), num(st.points, 0), num(st.sources, 0),
                        num(units.s_to_ms(st.efficiency.prefill_overhead_s), 0), f"x{lo:.2f}..x{hi:.2f}"])
        return [table("Serving-stack profiles (stacks/)", ["stack", "engine", "GPUs measured", "points", "sources",
                                                           "prefill overhead ms", "P10-P90"], out)]

    emit(fmt, stacks_json(rows), rows=stacks_rows(rows), tables=tables)


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

    emit(fmt, kv_rate_json(r), rows=kv_rate_rows(r), tables=tables)
