"""Views of `perf` and `calibrate`: the tables read the typed results; JSON and CSV are ``perf_json``'s."""

from __future__ import annotations

from prfaas_plan import units
from prfaas_plan.report.perf_json import (
    calibrate_json,
    calibrate_rows,
    calibrate_stack_json,
    calibrate_stack_rows,
    perf_csv_rows,
    perf_json,
)
from prfaas_plan.report.render import emit, num, table
from prfaas_plan.report.views import band, stack_text
from prfaas_plan.specs.hardware import Efficiency
from prfaas_plan.specs.perf import BsMax, CalibrationResult, PerfResult, StackCalibration

# the overlay's factors as the table names them; None: a time, shown in ms
_FACTORS = (("compute", "compute", 3), ("low_precision", "low precision", 3), ("memory", "memory", 3),
            ("comm", "comm", 3), ("prefill_overhead_s", "prefill overhead ms", None),
            ("decode_overhead_s", "decode overhead ms", None))


def _ms(s: float) -> str:
    return num(units.s_to_ms(s), 1)


def _efficiency_line(e: Efficiency) -> str:
    return (f"efficiency: compute {e.compute:.3f} (low-precision GEMMs x {e.low_precision:.3f}), "
            f"memory {e.memory:.3f}, comm {e.comm:.3f}, "
            f"prefill overhead {_ms(e.prefill_overhead_s)} ms, decode overhead {_ms(e.decode_overhead_s)} ms "
            f"({e.source})")


def _bs_max_line(c: BsMax, instance: str) -> str:
    if c.bs_max:
        return (f"BS_max = {c.bs_max} at TPOT {_ms(c.tpot_s)} ms, context "
                f"{units.format_length(c.context_tokens)} (binding: {c.binding}; TPOT allows "
                f"{c.bs_tpot}, HBM x {c.memory_fraction:g} holds {c.bs_memory}): step "
                f"{_ms(c.step_s)} ms, {num(c.tokens_per_s, 0)} tokens/s, "
                f"{num(c.requests_per_s, 3)} req/s at {c.output_tokens} output tokens (Eq. 5).")
    if c.binding == "weights":
        return (f"BS_max = 0: the weights do not fit in HBM x {c.memory_fraction:g} of {instance} "
                f"(the TPOT alone would allow {c.bs_tpot}).")
    return f"BS_max = 0: even one request misses the TPOT of {_ms(c.tpot_s)} ms."


def emit_perf(fmt: str, r: PerfResult) -> None:
    def tables():
        pre = table(f"{r.model} on {r.instance}: analytic prefill (1K = 1024 tokens)",
                    ["length", "T_prefill s", "P10-P90 s", "compute s", "memory s", "activations s", "comm s",
                     "overhead s", "bound"],
                    [[units.format_length(p.length_tokens), num(p.prefill_s, 3),
                      band(p.prefill_s_p10, p.prefill_s_p90, 3), num(p.compute_s, 3),
                      num(p.memory_s, 3), num(p.activation_s, 3), num(p.comm_s, 3),
                      num(p.overhead_s, 3), p.bound] for p in r.prefill],
                    caption="T = overhead + max(compute, memory) + activations + comm")
        dec = table(f"{r.model} on {r.instance}: decode step",
                    ["batch", "context", "step ms", "P10-P90 ms", "tokens/s", "compute ms", "memory ms", "comm ms",
                     "bound"],
                    [[d.batch, units.format_length(d.context_tokens), _ms(d.step_s),
                      band(units.s_to_ms(d.step_s_p10), units.s_to_ms(d.step_s_p90), 1),
                      num(d.tokens_per_s, 0), _ms(d.compute_s), _ms(d.memory_s), _ms(d.comm_s),
                      d.bound] for d in r.decode],
                    caption="T_step = overhead + max(compute, memory) + comm")
        return [pre, dec, _bs_max_line(r.capacity, r.instance), _efficiency_line(r.efficiency), stack_text(r.stack)]

    emit(fmt, perf_json(r), rows=perf_csv_rows(r), tables=tables)


def emit_calibrate(fmt: str, r: CalibrationResult, *, written: str | None = None) -> None:
    def tables():
        e, prev = r.efficiency, r.previous_efficiency
        factors = table(f"{r.hardware} efficiency ({r.instance})", ["factor", "value", "was", "how"],
                        [[label, num(getattr(e, k), d) if d else _ms(getattr(e, k)),
                          num(getattr(prev, k), d) if d else _ms(getattr(prev, k)), r.how(k)]
                         for k, label, d in _FACTORS],
                        caption=e.source)
        rows = table("Measured vs predicted", ["row", "kind", "model", "length / batch@context", "measured s",
                                               "predicted s", "error"],
                     [[x.row, x.kind, x.model,
                       units.format_length(x.length_tokens) if x.kind == "prefill"
                       else f"{x.batch}@{units.format_length(x.context_tokens)}",
                       num(x.measured_s, 4), num(x.predicted_s, 4), f"{x.rel_error:+.1%}"] for x in r.rows],
                     caption=f"RMS error {r.rms_rel_error:.1%}, max {r.max_abs_rel_error:.1%} "
                             "(error = predicted / measured - 1)")
        if written:
            where = f"Wrote the overlay to {written}; it applies wherever that folder's parent is a catalog."
        else:
            where = (f"Not written. Save it with --output {r.suggested_path} and pass --catalog CATALOG_DIR "
                     "(or set $PRFAAS_PLAN_CATALOG) to use it:\n" + r.overlay_yaml.rstrip())
        return [factors, rows, where]

    emit(fmt, calibrate_json(r, written=written), rows=calibrate_rows(r), tables=tables)


def emit_calibrate_stack(fmt: str, r: StackCalibration, *, written: str | None = None) -> None:
    def tables():
        lo, hi = r.profile.prefill_band
        params = table(f"Profile {r.profile.name} (from {r.base}): fitted parameters", ["parameter", "value"],
                       [[n, f"{v:.4g}"] for n, v in r.parameters])
        rows = table("Per point (measured vs the fit)", ["file", "line", "model", "instance", "kind", "tokens",
                                                          "batch", "measured s", "fit s", "error", "held out"],
                     [[p.file.rsplit("/", 1)[-1], p.line, p.model, p.instance, p.kind, p.tokens, p.batch,
                       num(p.measured_s, 4), num(p.predicted_s, 4), f"{p.rel_error:+.1%}",
                       f"x{p.held_out_ratio:.2f}"] for p in r.rows],
                     caption=(f"median |error| {r.median_abs_rel_error:.1%}; P10-P90 band "
                              f"x{lo:.2f}..x{hi:.2f} ({r.profile.band_from})"))
        tail = f"wrote {written}" if written else "profile YAML (write it with -o CATALOG_DIR/stacks/NAME.yaml):\n" + \
            r.stack_yaml.rstrip()
        return [params, rows, tail]

    emit(fmt, calibrate_stack_json(r, written=written), rows=calibrate_stack_rows(r), tables=tables)
