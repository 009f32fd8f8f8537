"""`size --plot`: cost against demand and, with a TTFT SLO, against the TTFT bound (else the link tiers)."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from prfaas_plan import units
from prfaas_plan.report.plots import money_axis, pyplot, save_figure, value_ticks
from prfaas_plan.specs.sizing import SizingResult


def size_figure(r: SizingResult, path: Path | BinaryIO) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    pts = [d for d in r.demand_curve if d.prfaas is not None]
    a.plot([d.demand_rps for d in pts], [d.prfaas.cost.per_hour for d in pts], "o-", label="PrfaaS-PD (cheapest)")
    hom = [d for d in r.demand_curve if d.homogeneous is not None]
    a.plot([d.demand_rps for d in hom], [d.homogeneous.cost.per_hour for d in hom], "s--",
           label="homogeneous PD (cheapest kind)")
    a.axvline(r.demand_rps, color="grey", lw=0.8, ls=":", label=f"demand {r.demand_rps:g} req/s")
    a.set_xscale("log")
    a.set_yscale("log")
    value_ticks(a.xaxis, [d.demand_rps for d in r.demand_curve])
    money_axis(a.yaxis, log=True)
    a.set_xlabel("demand (req/s)")
    a.set_ylabel("cost ($/h)")
    a.set_title("cost versus demand")
    a.legend(fontsize=8)
    if r.ttft_frontier:
        pts_t = [t for t in r.ttft_frontier if t.plan is not None]
        b.plot([t.bound_s for t in pts_t], [t.plan.cost.per_hour for t in pts_t], "o-", label="PrfaaS-PD (cheapest)")
        b.axvline(r.ttft_bound_s, color="grey", lw=0.8, ls=":", label=f"SLO {r.ttft_bound_s:g} s")
        b.set_xlabel(f"TTFT bound, {r.ttft_statistic} (s)")
        b.set_title("cost versus TTFT bound")
    else:
        tiers = [t for t in r.tiers if t.plan is not None]
        b.plot([units.bytes_per_s_to_gbps(t.bandwidth_bytes_per_s) for t in tiers],
               [t.plan.cost.per_hour for t in tiers], "o-", label="every link at this tier")
        h = r.best_homogeneous
        if h is not None:
            b.axhline(h.cost.per_hour, color="C1", ls="--", label=f"homogeneous {h.sites[0].hardware}")
        b.set_xscale("log")
        value_ticks(b.xaxis, [units.bytes_per_s_to_gbps(t.bandwidth_bytes_per_s) for t in tiers])
        b.set_xlabel("link tier (Gbps)")
        b.set_title("link versus GPUs")
    money_axis(b.yaxis)
    b.set_ylabel("cost ($/h)")
    b.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
