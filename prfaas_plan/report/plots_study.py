"""The study report's figures (matplotlib, lazily): gain over homogeneous PD against bandwidth,
cost against throughput, and where PrfaaS-PD stops paying. Draws ``api.study_report``'s series."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from prfaas_plan import units
from prfaas_plan.report.figures_study import StudyFigures
from prfaas_plan.report.plots import pyplot, save_figure

_LEGEND = {"fontsize": 8, "loc": "upper center", "frameon": False}


def gain_figure(f: StudyFigures, path: Path | BinaryIO) -> None:
    """Panels (models across, the next axis down) of Lambda_max(PrfaaS-PD) / Lambda_max(homogeneous)
    against bandwidth (log), a line per remaining combination; 1 is where PrfaaS-PD stops paying."""
    plt = pyplot()
    nr, nc = len(f.rows), len(f.columns)
    fig, axes = plt.subplots(nr, nc, figsize=(3.6 * nc + 0.6, 2.6 * nr + 1.0), squeeze=False, sharex=True)
    handles: dict[str, object] = {}
    for i, row in enumerate(f.gain):
        for j, panel in enumerate(row):
            ax = axes[i][j]
            for s in panel.series:
                (line,) = ax.plot([units.bytes_per_s_to_gbps(x) for x in s.x], s.y, "o-", ms=3, label=s.label)
                handles.setdefault(s.label, line)
            ax.axhline(1.0, color="grey", ls="--", lw=1, label="homogeneous PD (1x)")
            ax.set_xscale("log")
            ax.set_title(panel.title, fontsize=9)
            if i == nr - 1:
                ax.set_xlabel(f"{f.x_key} (Gbps)", fontsize=8)
            if j == 0:
                ax.set_ylabel("Lambda_max vs homogeneous (x)", fontsize=8)
            ax.tick_params(labelsize=8)
    (ref,) = axes[0][0].plot([], [], color="grey", ls="--", lw=1)
    handles["homogeneous PD (1x): PrfaaS-PD pays above"] = ref
    rows = (len(handles) + 2) // 3
    fig.legend(list(handles.values()), list(handles), ncol=min(3, len(handles)), fontsize=8, frameon=False,
               loc="lower center", bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, min(0.5, 0.35 * rows / fig.get_size_inches()[1]), 1, 1))
    save_figure(fig, path)
    plt.close(fig)


def cost_figure(f: StudyFigures, path: Path | BinaryIO) -> None:
    """Every feasible point's cost against what it serves, coloured by line (a GPU pair, ...)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    markers = "osD^v<>P*X"
    for k, s in enumerate(f.cost):
        ax.scatter(s.x, s.y, s=14, marker=markers[k % len(markers)], label=s.label, alpha=0.8)
    ax.set_xlabel(f.cost_x_label)
    ax.set_ylabel(f.cost_y_label)
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(ncol=2, bbox_to_anchor=(0.5, -0.18), **_LEGEND)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def breakeven_figure(f: StudyFigures, path: Path | BinaryIO) -> None:
    """Per panel and line, the lowest bandwidth from which PrfaaS-PD serves at least homogeneous PD's
    Lambda_max; a cross at the right edge where it never does within the study."""
    plt = pyplot()
    items = list(f.breakeven)
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(items) + 1.4))
    xs = sorted({units.bytes_per_s_to_gbps(x) for s in f.gain for p in s for se in p.series for x in se.x})
    right = xs[-1] * 2.0 if xs else 1.0
    for k, b in enumerate(items):  # each point labelled as its row's tick names it
        name = f"{b.panel} · {b.label}"
        if b.from_bytes_per_s is None:
            ax.plot([right], [k], "x", color="tab:red", label=name)
        else:
            ax.plot([units.bytes_per_s_to_gbps(b.from_bytes_per_s)], [k], "o",
                    color="tab:green" if not b.always else "tab:blue", label=name)
    keys = [ax.plot([], [], "o", color="tab:green", label="pays from this bandwidth")[0],
            ax.plot([], [], "o", color="tab:blue", label="pays at every bandwidth studied")[0],
            ax.plot([], [], "x", color="tab:red", label="never pays within the study")[0]]
    ax.set_yticks(range(len(items)), [f"{b.panel} · {b.label}" for b in items], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    if xs:  # the study's own bandwidths as the ticks, and "never" beyond them
        ax.set_xticks([*xs, right], [f"{x:g}" for x in xs] + ["never"], fontsize=8)
        ax.minorticks_off()
        ax.set_xlim(xs[0] / 1.5, right * 1.5)
    ax.set_xlabel(f"{f.x_key} (Gbps)")
    ax.grid(axis="x", alpha=0.3)
    below = -0.9 / fig.get_size_inches()[1]
    ax.legend(handles=keys, ncol=3, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, below))
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
