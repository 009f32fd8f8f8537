"""Empirical length distributions from CSV: one length per row, or `length,count` rows."""

from __future__ import annotations

import csv
from pathlib import Path

from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import read_text


def read_lengths_csv(path: Path):
    from prfaas_plan.core.lengths import Empirical

    text = read_text(path)
    lengths: list[float] = []
    counts: list[float] = []
    for n, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row if c.strip()]
        if not cells or cells[0].startswith("#"):
            continue
        try:
            values = [float(c) for c in cells]
        except ValueError:
            if n == 1:  # a header row
                continue
            raise SpecError(f"not a number: {','.join(cells)!r}", source=str(path), field=f"row {n}") from None
        if len(values) > 2 or values[0] < 1 or (len(values) == 2 and values[1] < 0):
            raise SpecError(f"expected `length` or `length,count` with length >= 1, got {','.join(cells)!r}",
                            source=str(path), field=f"row {n}")
        lengths.append(values[0])
        counts.append(values[1] if len(values) == 2 else 1.0)
    if not lengths or sum(counts) <= 0:
        raise SpecError("no lengths in the file", source=str(path))
    return Empirical.from_histogram(lengths, counts)
