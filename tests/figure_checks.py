"""Checks of a drawn matplotlib figure: no two tick labels overlap (their text extents, as the
renderer lays them out), and every line is labelled (in a legend or by a label of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

EPS_PX = 0.5  # boxes that only touch (shared edge, rounding) do not overlap


def tick_labels(fig: Any) -> list[tuple[str, Any]]:
    """(text, window extent) of every tick label the figure draws: visible, non-empty, at a tick
    inside its axis' view interval."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) or 1.0
            for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                                (axis.get_minorticklocs(), axis.get_minor_ticks)):
                for loc, tick in zip(locs, ticks(len(locs)), strict=False):
                    if not lo - 1e-9 * span <= loc <= hi + 1e-9 * span:
                        continue
                    for label in (tick.label1, tick.label2):
                        if label.get_visible() and label.get_text().strip():
                            out.append((label.get_text(), label.get_window_extent(renderer=renderer)))
    return out


def overlapping_ticks(fig: Any) -> list[tuple[str, str]]:
    """Pairs of tick labels of ``fig`` whose drawn boxes overlap (by more than EPS_PX each way)."""
    labels = tick_labels(fig)
    bad = []
    for i, (ta, a) in enumerate(labels):
        for tb, b in labels[i + 1:]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > EPS_PX and h > EPS_PX:
                bad.append((ta, tb))
    return bad


def unlabelled_lines(fig: Any) -> list[str]:
    """Lines of ``fig`` with no label of their own (matplotlib's default "_child0" names none)."""
    out = []
    for k, ax in enumerate(fig.axes):
        for line in ax.get_lines():
            if str(line.get_label()).startswith("_") and len(line.get_xdata()) > 0:
                out.append(f"axes {k}: {line.get_label()}")
    return out


@contextmanager
def checked_figures() -> Iterator[list[dict[str, Any]]]:
    """Every figure saved inside the block, checked as it is saved: [{title, overlaps, unlabelled}]."""
    from matplotlib.figure import Figure

    seen: list[dict[str, Any]] = []
    original = Figure.savefig

    def savefig(self: Any, *args: Any, **kwargs: Any) -> Any:
        title = self.get_suptitle() or (self.axes[0].get_title() if self.axes else "")
        seen.append({"title": title, "overlaps": overlapping_ticks(self), "unlabelled": unlabelled_lines(self)})
        return original(self, *args, **kwargs)

    Figure.savefig = savefig  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        Figure.savefig = original  # type: ignore[method-assign]
