"""What the study report draws: typed series the api layer cuts from a study's rows
(``api.study_report``), drawn by ``report.plots_study``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Panel:
    title: str
    series: tuple[Series, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Breakeven:
    """Where one line's gain over homogeneous PD crosses 1: the lowest bandwidth at which PrfaaS-PD
    serves more (by ``api.study_report.PAYS``; None: at no bandwidth of the study); ``always`` if
    already at the lowest."""

    panel: str
    label: str
    from_bytes_per_s: float | None
    always: bool
    best_gain: float
    best_at_bytes_per_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class StudyFigures:
    """``gain``: panels (columns by model, rows by the next axis) of PrfaaS-PD / homogeneous
    Lambda_max against bandwidth, a line per remaining combination; ``cost``: cost against
    throughput (optimize: $ per million requests vs Lambda_max; size: $/h vs demand) per line label."""

    title: str
    x_key: str | None  # the bandwidth axis, e.g. link.bandwidth (None: the study has none)
    columns: tuple[str, ...]  # panel column titles
    rows: tuple[str, ...]  # panel row titles
    gain: tuple[tuple[Panel, ...], ...]  # [row][column]
    aggregated: tuple[str, ...]  # axes the lines take the best over
    cost_x_label: str
    cost_y_label: str
    cost: tuple[Series, ...]
    breakeven: tuple[Breakeven, ...]
