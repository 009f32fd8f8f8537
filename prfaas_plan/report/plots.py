"""Figures (matplotlib, imported lazily, Agg backend): the paper's Figure 5 and sweeps."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from prfaas_plan import units
from prfaas_plan.errors import SpecError
from prfaas_plan.report.figures import Figure5
from prfaas_plan.specs.sweep import SweepResult


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path | BinaryIO) -> None:
    """Write ``fig`` to ``path``; a binary file object (not a path) receives SVG (``to_svg``)."""
    if not isinstance(path, str | Path):
        fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
        return
    try:
        fig.savefig(path, dpi=130, bbox_inches="tight")
    except OSError as exc:
        from prfaas_plan.io.files import write_failed

        raise write_failed("--plot", path, exc) from None
    except ValueError as exc:  # a format matplotlib refuses (the suffix is checked up front)
        raise SpecError(f"cannot write the figure: {exc}", field=f"--plot {path}") from None


def to_svg(draw: Callable[..., None], *args: Any) -> str:
    """The SVG text of ``draw(*args, file)``, any of the figure functions here, for inlining in HTML.

    Text stays text (``svg.fonttype: none``: the reader's sans-serif font draws it, it can be
    searched and copied, and the SVG is half the size and drawn 40% faster than with glyph paths);
    there is no date in it, and a fixed hash salt keeps its element ids the same from run to run."""
    import matplotlib

    pyplot()
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "prfaas-plan"}):
        draw(*args, buf)
    return buf.getvalue().decode("utf-8")


_BELOW = {"fontsize": 8, "loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncol": 2, "frameon": False}


def money_text(x: float) -> str:
    """Dollars as money: "$1,234", "$12.50" under $100."""
    return f"${x:,.0f}" if abs(x) >= 100 else f"${x:,.2f}"


def money_axis(axis: Any, *, log: bool = False) -> None:
    """Tick labels of a cost axis as money ("$1,000", not 1e3); on a log axis at 1, 2 and 5 of each
    decade, with no minor labels (they crowd the major ones)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if log:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: money_text(v)))


def value_ticks(axis: Any, values: list[float]) -> None:
    """Ticks at ``values`` themselves (a log axis of a few points: demands, link tiers), plainly
    written ("1.5", "100"), with no minor labels; values closer than 1.25x on the axis are thinned."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    kept: list[float] = []
    for v in sorted({float(v) for v in values if v > 0}):
        if not kept or v / kept[-1] >= 1.25:
            kept.append(v)
    axis.set_major_locator(FixedLocator(kept))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.4g}"))
    axis.set_minor_formatter(NullFormatter())


def figure5(f: Figure5, path: Path | BinaryIO) -> None:
    """(a) Lambda vs N_p (N_d = total - N_p) at the best t; (b) the two prefill bounds vs t.

    Draws ``api.figures.figure5_data``'s arrays; nothing of the model is computed here."""
    plt = pyplot()
    a, b = f.split, f.thresholds
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(a.n_p, a.prefill_rps, "o-", label="prefill bound (min of PrfaaS/p, PD-P/(1-p))")
    ax1.plot(a.n_p, a.decode_rps, "s-", label="decode bound Theta_pd-d")
    ax1.plot(a.n_p, a.lambda_max_rps, "k--", lw=2, label="Lambda_max")
    ax1.axvline(f.n_p, color="grey", ls=":", label=f"the best split, N_p = {f.n_p}")
    ax1.set_xlabel(f"N_p (N_d = {f.local_instances} - N_p)")
    ax1.set_ylabel("arrival rate bound (req/s)")
    ax1.set_title(f"(a) t = {units.tokens_to_k(f.threshold_tokens):.1f}K")
    ax1.legend(**_BELOW)

    x = b.thresholds_tokens / units.K_TOKENS
    ax2.plot(x, b.prfaas_rps, label="PrfaaS bound Theta_prfaas / p")
    ax2.plot(x, b.pd_prefill_rps, label="PD-P bound Theta_pd-p / (1 - p)")
    ax2.axhline(b.decode_rps, color="grey", ls="--", label="decode bound")
    tk = f.threshold_tokens / units.K_TOKENS
    # the optimum goes in the legend, and the legends go under the axes: inside, the curves of
    # some scenario always run through a label
    ax2.plot([tk], [f.lambda_max_rps], "ko", label=f"t* = {tk:.1f}K, Lambda_max = {f.lambda_max_rps:.2f}")
    # room above the lower prefill bound for its crossing (nanmax: a NaN bound is not drawn either)
    top = float(np.nanmax(np.minimum(b.prfaas_rps, b.pd_prefill_rps))) * 3 if x.size else 0.0
    ax2.set_ylim(0, max(top, f.lambda_max_rps * 2))
    ax2.set_xscale("log")
    ax2.set_xlabel("threshold t (K = 1024 tokens)")
    ax2.set_ylabel("req/s")
    ax2.set_title(f"(b) N_prfaas {f.n_prfaas}, N_p {f.n_p}, N_d {f.n_d}")
    ax2.legend(**_BELOW)
    fig.suptitle(f.title)
    save_figure(fig, path)
    plt.close(fig)


# units of a bare number in --set (io/scenario.py reads it so); other keys print without one
_BARE_UNITS = {"link.bandwidth": "Gbps", "link.rtt": "s", "slo.ttft": "s", "decode.t_decode": "s",
               "control.window": "s", "control.period": "s", "slo.decode_tokens_per_s": "tokens/s",
               "workload.rate_rps": "req/s", "workload.output_tokens": "tokens"}
_UNIT_NAMES = {"K": "K tokens, K = 1024", "k": "K tokens, K = 1024", "M": "M tokens, M = 1024^2"}


def sweep_axis_label(result: SweepResult) -> str:
    """The swept key with the unit its numbers are in: "link.bandwidth (Gbps)"."""
    key = result.key
    texts = [p.value_text for p in result.points]
    unit = units.split_quantity(texts[0])[1] if texts else ""
    if not unit:
        unit = _BARE_UNITS.get(key, "tokens" if key.startswith(("workload.input.", "search.threshold.")) else "")
    unit = _UNIT_NAMES.get(unit, unit)
    return f"{key} ({unit})" if unit else key


def sweep_figure(result: SweepResult, path: Path | BinaryIO) -> None:
    """(a) Lambda_max of PrfaaS-PD and homogeneous PD, link-bound points marked; (b) the threshold t."""
    plt = pyplot()
    rows = result.feasible
    if not rows:
        raise SpecError("nothing to plot: no value of the sweep is feasible", field="--plot")
    x = [r.value for r in rows]
    plans = [r.plan for r in rows if r.plan is not None]
    points = [p.point for p in plans]
    several = len(result.sites) > 1  # a topology: one threshold per PD site
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(x, [p.lambda_max_rps for p in points], "o-", label="joint PrfaaS-PD Lambda_max" if several
             else "PrfaaS-PD Lambda_max")
    if several:
        ax1.plot(x, [p.independent_lambda_max_rps for p in plans], "^:", label="independent planning")
    if plans[0].homogeneous_lambda_max_rps is not None:
        ax1.plot(x, [p.homogeneous_lambda_max_rps for p in plans], "s--", label="homogeneous PD")
    link = [(r.value, p.lambda_max_rps) for r, p in zip(rows, points, strict=True)
            if p.binding.split(" ")[0] == "link"]
    if link:
        ax1.plot([v for v, _ in link], [lam for _, lam in link], "o", ms=11, mfc="none",
                 mec="red", mew=1.5, label=f"{'a' if several else 'the'} link binds (bound by: link)")
    ax1.set_ylabel("Lambda_max (req/s)")
    ax1.set_title("(a) maximum arrival rate")
    ax1.set_ylim(bottom=0)
    for i, name in enumerate(result.sites):
        ax2.plot(x, [p.sites[i].threshold_tokens / units.K_TOKENS for p in points], "o-", color=f"C{i + 2}",
                 label=f"{name} t*" if several else "PrfaaS-PD t*")
    ax2.legend(**_BELOW)  # every panel has its legend, one site too
    ax2.set_ylabel("threshold t (K = 1024 tokens)")
    ax2.set_title("(b) best threshold: requests longer than t go to PrfaaS")
    ax2.set_ylim(bottom=0)
    label = sweep_axis_label(result)
    for ax in (ax1, ax2):
        ax.set_xlabel(label)
        ax.grid(True, alpha=0.3)
        if result.scale == "log":
            ax.set_xscale("log")
    ax1.legend(**_BELOW)
    fig.suptitle(f"sweep of {result.key} ({result.scale} steps)")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
