"""Checked reads of the values deployment files and our plan block hold: each checker returns the value
as the reader needs it or raises one SpecError naming the file, the key path and the value refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prfaas_plan.errors import SpecError, kind_of

MAX_COUNT = 100_000  # instances of a pool (the scenario caps a site's sum lower and says so)
MAX_GPUS = 1024  # GPUs of an instance, as the scenario bounds gpus_per_instance
MAX_TOKENS = 10**9  # a router's threshold in tokens
_DIGITS = re.compile(r"[0-9]{1,12}")  # a count written as a string (Kubernetes quantities: "8")


def shown(value: Any) -> str:
    """A value as the file spells it (null, true, 'text', 1.5, NaN), or its kind for a list or mapping."""
    if isinstance(value, dict | list):
        return kind_of(value)
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            text = kind_of(value)
    return text if len(text) <= 40 else f"{text[:30]}...({len(text)} characters)"


def fail(message: str, value: Any, source: str | Path, field: str) -> SpecError:
    return SpecError(f"{message}, got {shown(value)}", source=str(source), field=field)


def mapping(value: Any, source: str | Path, field: str, *, null: bool = True) -> dict[Any, Any]:
    """A mapping; null is an empty one where the format says so (``null``)."""
    if value is None and null:
        return {}
    if not isinstance(value, dict):
        raise fail("expected a mapping", value, source, field)
    return value


def listing(value: Any, source: str | Path, field: str) -> list[Any]:
    """A list; null is an empty one."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail("expected a list", value, source, field)
    return value


def text(value: Any, source: str | Path, field: str, *, null: bool = True) -> str | None:
    """A non-empty string, or None for null where it may be left out (``null``)."""
    if value is None and null:
        return None
    if not isinstance(value, str) or not value.strip():
        raise fail("expected a non-empty string", value, source, field)
    return value


def choice(value: Any, choices: tuple[str, ...], source: str | Path, field: str, *, null: bool = True) -> str | None:
    """One of ``choices``, or None for null where it may be left out (``null``)."""
    if (value is not None or not null) and (not isinstance(value, str) or value not in choices):
        raise fail(f"expected one of {', '.join(choices)}", value, source, field)
    return value


def count(value: Any, source: str | Path, field: str, *, what: str = "instances", least: int = 0,
          most: int = MAX_COUNT, default: int | None = None) -> int:
    """A whole number in [least, most], given as a number or a string of digits ("8"); null is ``default``
    where the format has one (replicas: 1)."""
    if value is None and default is not None:
        return default
    number = int(value.strip()) if isinstance(value, str) and _DIGITS.fullmatch(value.strip()) else value
    if isinstance(number, bool) or not isinstance(number, int) or not least <= number <= most:
        raise fail(f"expected a whole number of {what} from {least} to {most}", value, source, field)
    return number


def tokens(value: Any, source: str | Path, field: str) -> float | None:
    """A threshold in tokens: a finite number >= 0, or None for null (offload nothing)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_TOKENS:  # NaN too
        raise fail(f"expected a number of tokens from 0 to {MAX_TOKENS} or null", value, source, field)
    return float(value)
