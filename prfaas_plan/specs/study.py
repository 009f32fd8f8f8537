"""A study: one base scenario, axes of scenario fields, a command run at every point.

The points are typed scenario patches: (field, value) pairs whose values are what the study file
holds (numbers, unit strings, catalog names), applied as ``--set`` overrides are, never as text
spliced into YAML. Groups of axes are crossed; the axes within one group advance together (zipped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

COMMANDS = ("optimize", "size", "latency", "simulate")
MAX_POINTS = 10_000_000  # a study beyond this is a mistake in its axes, not a plan


@dataclass(frozen=True, slots=True, kw_only=True)
class Axis:
    """One scenario field and its values; ``labels`` how the results name each value (as written,
    or the study's name for a section such as a workload); ``numbers`` the value as a number where
    it has one (in SI units as the scenario reads it, ``io.study.with_numbers``; None for a name);
    ``ranged`` whether the values are a range's, made alike from its two ends (so its ends stand
    for all of them when checked); ``named`` whether ``labels`` are the study's names for them."""

    key: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]
    numbers: tuple[float | None, ...]
    ranged: bool = field(default=False, repr=False)  # not in the repr a study's fingerprint is made of
    named: bool = field(default=False, repr=False)  # values named by the study (sections): no number

    def __post_init__(self) -> None:
        if not self.values or not len(self.values) == len(self.labels) == len(self.numbers):
            raise ValueError("an axis needs one label and one number (or None) per value, and at least one value")


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """Point ``index`` of the study: its (field, value) patches, in axis order."""

    index: int
    values: tuple[tuple[str, Any], ...]
    labels: tuple[str, ...]
    numbers: tuple[float | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Study:
    """``groups``: each a tuple of zipped axes of equal length; the study is their cross product,
    or ``samples`` points of it drawn without replacement with ``seed``.

    ``fixed``: ``--set``-style overrides (field, value) applied at every point before the axes.
    """

    source: str
    scenario: str | None
    command: str
    groups: tuple[tuple[Axis, ...], ...]
    fixed: tuple[tuple[str, Any], ...] = ()
    samples: int | None = None
    seed: int = 0
    method: str | None = None
    options: tuple[tuple[str, Any], ...] = ()  # the command's own options, e.g. ("load", 0.7)

    @property
    def axes(self) -> tuple[Axis, ...]:
        return tuple(a for g in self.groups for a in g)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(a.key for a in self.axes)

    @property
    def space(self) -> int:
        """Points of the full cross product."""
        return math.prod(len(g[0].values) for g in self.groups)

    @property
    def size(self) -> int:
        """Points the study runs."""
        return self.space if self.samples is None else self.samples

    def point(self, index: int, cell: int | None = None) -> Point:
        """Point ``index``; ``cell`` its position in the cross product (mixed radix, first group
        slowest, as ``itertools.product``), default ``index``."""
        rest = index if cell is None else cell
        picks: list[int] = []
        for g in reversed(self.groups):
            rest, k = divmod(rest, len(g[0].values))
            picks.append(k)
        picks.reverse()
        values, labels, numbers = [], [], []
        for g, k in zip(self.groups, picks, strict=True):
            for a in g:
                values.append((a.key, a.values[k]))
                labels.append(a.labels[k])
                numbers.append(a.numbers[k])
        return Point(index=index, values=tuple(values), labels=tuple(labels), numbers=tuple(numbers))

    def cells(self) -> Sequence[int]:
        """Each point's cell in the cross product, in point order (a range, not a list, for the full one)."""
        if self.samples is None:
            return range(self.space)
        return sample_cells(self.space, self.samples, self.seed)

    def points(self) -> list[Point]:
        return [self.point(i, c) for i, c in enumerate(self.cells())]


def sample_cells(space: int, n: int, seed: int) -> list[int]:
    """``n`` distinct cells of ``range(space)``, seeded, sorted (Floyd's algorithm: memory in n, not
    in the space, which may be far larger than any array)."""
    import numpy as np

    if not 0 < n <= space:
        raise ValueError(f"cannot draw {n} distinct points from {space}")
    rng = np.random.default_rng(seed)
    chosen: set[int] = set()
    for j in range(space - n, space):
        t = int(rng.integers(0, j + 1))
        chosen.add(j if t in chosen else t)
    return sorted(chosen)
