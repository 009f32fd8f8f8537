"""Empirical length distributions from CSV: one length per line, or `length,count` lines.

Rules: blank lines and `#` comments are skipped; the first other line may be a header if none of
its cells reads as a number (e.g. `length,count`; `nan` reads as one, and is refused); column 1 is
the input length in tokens (a number >= 1, kept as written), column 2, if present, how many
requests have it (a number >= 0); a third column is refused, not ignored; a trailing comma is fine.
"""

from __future__ import annotations

import math
from pathlib import Path

from prfaas_plan.errors import SpecError
from prfaas_plan.io.files import data_rows


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _is_float(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read_lengths_csv(path: Path):
    from prfaas_plan.core.lengths import Empirical

    source = str(path)
    lengths: list[float] = []
    counts: list[float] = []
    for n, cells in data_rows(path, _is_float):  # a header line: no cell reads as a number
        values = [_number(c) for c in cells]
        if len(cells) > 2:
            raise SpecError(f"expected `length` or `length,count`, got {len(cells)} columns: {','.join(cells)!r}",
                            source=source, field=f"line {n}")
        if values[0] is None or values[0] < 1:
            raise SpecError(f"{cells[0]!r} is not a token length (a number >= 1)", source=source,
                            field=f"line {n} column 1")
        if len(cells) == 2 and (values[1] is None or values[1] < 0):
            raise SpecError(f"{cells[1]!r} is not a count of requests (a number >= 0)", source=source,
                            field=f"line {n} column 2")
        lengths.append(values[0])
        counts.append(values[1] if len(cells) == 2 and values[1] is not None else 1.0)
    if not lengths:
        raise SpecError("no lengths: every line is blank, a comment or the header", source=source)
    if sum(counts) <= 0:
        raise SpecError("every count is 0: no requests", source=source)
    return Empirical.from_histogram(lengths, counts)
