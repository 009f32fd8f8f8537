"""Figures (matplotlib, imported lazily, Agg backend): the paper's Figure 5 and sweeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.errors import SpecError


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    try:
        fig.savefig(path, dpi=130, bbox_inches="tight")
    except OSError as exc:
        from prfaas_plan.io.files import write_failed

        raise write_failed("--plot", path, exc) from None
    except ValueError as exc:  # a format matplotlib refuses (the suffix is checked up front)
        raise SpecError(f"cannot write the figure: {exc}", field=f"--plot {path}") from None


_BELOW = {"fontsize": 8, "loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncol": 2, "frameon": False}


def figure5(result: Any, path: Path) -> None:
    """(a) Lambda vs N_p (N_d = total - N_p) at the best t; (b) the two prefill bounds vs t."""
    from prfaas_plan.core.throughput import Method, bounds, routing

    plt = _pyplot()
    sc, t = result.scenario, result.timing
    m = sc.search.method
    best = result.payload["best"]
    s = result.searches[m]
    kw = {"link_bytes_per_s": sc.link.usable_bytes_per_s, "decode_rps_per_instance": t.decode_rps_per_instance}
    r_best = routing(sc.workload.lengths, t.curves, [best["threshold_tokens"]], Method(m))
    n_p = np.arange(1, sc.local.instances)
    b = bounds(r_best, n_prfaas=best["n_prfaas"], n_p=n_p.reshape(1, -1), n_d=(sc.local.instances - n_p).reshape(1, -1),
               **kw)
    prefill = np.minimum(np.minimum(b.prfaas_compute, b.link), b.pd_prefill)[0]
    decode = b.decode[0]
    lam = np.minimum(prefill, decode)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(n_p, prefill, "o-", label="prefill bound (min of PrfaaS/p, PD-P/(1-p))")
    ax1.plot(n_p, decode, "s-", label="decode bound Theta_pd-d")
    ax1.plot(n_p, lam, "k--", lw=2, label="Lambda_max")
    ax1.axvline(best["n_p"], color="grey", ls=":")
    ax1.set_xlabel(f"N_p (N_d = {sc.local.instances} - N_p)")
    ax1.set_ylabel("arrival rate bound (req/s)")
    ax1.set_title(f"(a) t = {units.tokens_to_k(best['threshold_tokens']):.1f}K")
    ax1.legend(**_BELOW)

    r = s.routing
    bt = bounds(r, n_prfaas=best["n_prfaas"], n_p=best["n_p"], n_d=best["n_d"], **kw)
    x = r.t / units.K_TOKENS
    prfaas = np.minimum(bt.prfaas_compute, bt.link)
    ok = (r.p > 0) & (r.p < 1)
    ax2.plot(x[ok], prfaas[ok], label="PrfaaS bound Theta_prfaas / p")
    ax2.plot(x[ok], bt.pd_prefill[ok], label="PD-P bound Theta_pd-p / (1 - p)")
    ax2.axhline(float(np.atleast_1d(bt.decode)[0]), color="grey", ls="--", label="decode bound")
    tk = best["threshold_tokens"] / units.K_TOKENS
    # the optimum goes in the legend, and the legends go under the axes: inside, the curves of
    # some scenario always run through a label
    ax2.plot([tk], [best["lambda_max_rps"]], "ko", label=f"t* = {tk:.1f}K, Lambda_max = {best['lambda_max_rps']:.2f}")
    top = float(np.nanmax(np.where(ok, np.minimum(prfaas, bt.pd_prefill), np.nan))) * 3
    ax2.set_ylim(0, max(top, best["lambda_max_rps"] * 2))
    ax2.set_xscale("log")
    ax2.set_xlabel("threshold t (K = 1024 tokens)")
    ax2.set_ylabel("req/s")
    ax2.set_title(f"(b) N_prfaas {best['n_prfaas']}, N_p {best['n_p']}, N_d {best['n_d']}")
    ax2.legend(**_BELOW)
    fig.suptitle(f"{sc.name}: {sc.model.name} (method {m})")
    _save(fig, path)
    plt.close(fig)


# units of a bare number in --set (io/scenario.py reads it so); other keys print without one
_BARE_UNITS = {"link.bandwidth": "Gbps", "link.rtt": "s", "slo.ttft": "s", "decode.t_decode": "s",
               "control.window": "s", "control.period": "s", "slo.decode_tokens_per_s": "tokens/s",
               "workload.rate_rps": "req/s", "workload.output_tokens": "tokens"}
_UNIT_NAMES = {"K": "K tokens, K = 1024", "k": "K tokens, K = 1024", "M": "M tokens, M = 1024^2"}


def sweep_axis_label(result: dict[str, Any]) -> str:
    """The swept key with the unit its numbers are in: "link.bandwidth (Gbps)"."""
    key = result["key"]
    texts = [r["value_text"] for r in result["rows"]]
    unit = units.split_quantity(texts[0])[1] if texts else ""
    if not unit:
        unit = _BARE_UNITS.get(key, "tokens" if key.startswith(("workload.input.", "search.threshold.")) else "")
    unit = _UNIT_NAMES.get(unit, unit)
    return f"{key} ({unit})" if unit else key


def sweep_figure(result: dict[str, Any], path: Path) -> None:
    """(a) Lambda_max of PrfaaS-PD and homogeneous PD, link-bound points marked; (b) the threshold t."""
    plt = _pyplot()
    rows = [r for r in result["rows"] if r["feasible"]]
    if not rows:
        raise SpecError("nothing to plot: no value of the sweep is feasible", field="--plot")
    x = [r["value"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(x, [r["lambda_max_rps"] for r in rows], "o-", label="PrfaaS-PD Lambda_max")
    if rows[0]["homogeneous_lambda_max_rps"] is not None:
        ax1.plot(x, [r["homogeneous_lambda_max_rps"] for r in rows], "s--", label="homogeneous PD")
    link = [r for r in rows if r["binding"] == "link"]
    if link:
        ax1.plot([r["value"] for r in link], [r["lambda_max_rps"] for r in link], "o", ms=11, mfc="none",
                 mec="red", mew=1.5, label="the link binds (bound by: link)")
    ax1.set_ylabel("Lambda_max (req/s)")
    ax1.set_title("(a) maximum arrival rate")
    ax1.set_ylim(bottom=0)
    ax2.plot(x, [r["threshold_tokens"] / units.K_TOKENS for r in rows], "o-", color="C2", label="PrfaaS-PD t*")
    ax2.set_ylabel("threshold t (K = 1024 tokens)")
    ax2.set_title("(b) best threshold: requests longer than t go to PrfaaS")
    ax2.set_ylim(bottom=0)
    label = sweep_axis_label(result)
    for ax in (ax1, ax2):
        ax.set_xlabel(label)
        ax.grid(True, alpha=0.3)
        if result["scale"] == "log":
            ax.set_xscale("log")
    ax1.legend(**_BELOW)
    fig.suptitle(f"sweep of {result['key']} ({result['scale']} steps)")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
