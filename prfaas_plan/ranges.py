"""Ranges people write for sweeps and studies: ``a..b:n[:log|lin]``, each end read by the one
parser of ``units`` (a unit on one end applies to both; two units of one kind are converted to
the first), and each point shown as the text that reads back to the number that runs."""

from __future__ import annotations

from decimal import Decimal

from prfaas_plan.units import (
    BANDWIDTH_UNITS,
    DURATION_UNITS,
    LENGTH_UNITS,
    UnitError,
    format_tokens,
    shown_text,
    split_quantity,
)

__all__ = ["parse_range", "unit_kind", "unit_scale"]


def unit_kind(unit: str) -> str | None:
    """Which quantity a unit text belongs to: "bandwidth", "duration", "length" or None."""
    if unit in BANDWIDTH_UNITS:
        return "bandwidth"
    if unit in DURATION_UNITS:
        return "duration"
    if unit in LENGTH_UNITS and unit:
        return "length"
    return None


def unit_scale(unit: str) -> float:
    """SI value of one ``unit`` (bytes/s, seconds or tokens)."""
    kind = unit_kind(unit)
    if kind == "bandwidth":
        return BANDWIDTH_UNITS[unit][0]
    if kind == "duration":
        return DURATION_UNITS[unit]
    if kind == "length":
        return float(LENGTH_UNITS[unit])
    raise UnitError(f"unknown unit {unit!r}")


def plain_digits(v: float, digits: int) -> str:
    """``v`` to ``digits`` significant digits, without an exponent where one is not needed."""
    text = f"{v:.{digits}g}"
    if "e" in text and 1e-4 <= abs(v) < 1e15:
        text = f"{Decimal(text):f}"
    return text


def parse_range(text: str, *, max_points: int, log: bool = False) -> tuple[list[str], list[float]]:
    """``a..b:n[:log|lin]`` -> (texts with the unit, numbers in the unit of ``a``).

    Both ends go through ``units``' parser: a unit on one end applies to both; two different units
    of one kind are converted to the first (``500Mbps..10Gbps`` steps in Mbps). Each text is the
    shortest (>= 4 significant digits) that keeps the ends exact and the steps distinct, and its
    number is the one returned, so what is shown is what runs. Token lengths with K/M step in whole
    tokens.
    """
    ends, dots, rest = str(text).partition("..")
    parts = rest.split(":")
    if not dots or len(parts) not in (2, 3):
        raise UnitError(f"{shown_text(text)} is not a range a..b:n (e.g. 1Gbps..100Gbps:20, 1K..128K:8:log)")
    a, unit_a = split_quantity(ends)
    b, unit_b = split_quantity(parts[0])
    step = parts[2].strip() if len(parts) == 3 else "lin"
    if step not in ("log", "lin"):
        raise UnitError(f"{shown_text(text)}: steps are 'log' or 'lin', not {step!r}")
    try:
        count = int(parts[1].strip())
    except ValueError:
        raise UnitError(f"{shown_text(text)}: the number of points {parts[1].strip()!r} is not a whole "
                        "number") from None
    if not 2 <= count <= max_points:
        raise UnitError(f"{shown_text(text)}: a range takes 2 to {max_points:,} points, not {count:,}")
    unit = unit_a or unit_b
    if unit_a and unit_b and unit_a != unit_b:
        if unit_kind(unit_a) is None or unit_kind(unit_a) != unit_kind(unit_b):
            raise UnitError(f"{shown_text(text)}: the ends have different units {unit_a!r} and {unit_b!r}")
        b = b * unit_scale(unit_b) / unit_scale(unit_a)
    if a == b:
        raise UnitError(f"{shown_text(text)}: the two ends are equal")
    import numpy as np

    if log or step == "log":
        if a <= 0 or b <= 0:
            raise UnitError(f"{shown_text(text)}: log steps need two positive ends")
        raw = np.geomspace(a, b, count)
    else:
        raw = np.linspace(a, b, count)
    raw[0], raw[-1] = a, b
    if unit_kind(unit) == "length":
        scale = LENGTH_UNITS[unit]
        tokens = [round(float(v) * scale) for v in raw]
        if len(set(tokens)) < count or min(tokens) < 1:
            raise UnitError(f"{shown_text(text)}: {count:,} points are closer than one token or below 1")
        return [format_tokens(n) for n in tokens], [n / scale for n in tokens]
    for digits in range(4, 18):
        numbers = [plain_digits(float(v), digits) for v in raw]
        if len(set(numbers)) == count and float(numbers[0]) == a and float(numbers[-1]) == b:
            break
    return [f"{n}{unit}" for n in numbers], [float(n) for n in numbers]
