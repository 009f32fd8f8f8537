"""SI units inside, and the only conversions to and from the units people write.

Decisions, stated once (docs/design.md#units):
- sizes: bytes inside; MiB/GiB (binary) shown where the paper shows them; "GB" of HBM
  capacity is decimal (vendors' 141 GB is 141e9 bytes);
- links: bytes/s inside; Gbps at the edges is decimal, 1 Gbps = 1e9 bit/s = 1.25e8 B/s;
- bandwidths are per direction (vendors quote NVLink bidirectional totals, halved on input);
- FLOPS are dense (no 2:4 sparsity), TFLOPS decimal (1e12);
- token lengths: "1K" = 1024 tokens (the paper's K).

One parser reads every quantity a person writes (``parse_bandwidth``, ``parse_duration``,
``parse_length``, ``parse_count``; ``split_quantity`` for the number and the unit text):

- numbers: ``100``, ``12.5``, ``.5``, ``1e5``, ``1.5e4``; ``inf`` and ``nan`` are refused.
- bandwidth, case-SENSITIVE because ``b`` is a bit and ``B`` a byte (IEEE 1541):
  bits ``bps``, ``b/s``, ``bit/s``, ``bits/s``; bytes ``Bps``, ``B/s``, ``Byte/s``, ``Bytes/s``,
  ``byte/s``, ``bytes/s``; each with a prefix ``k``/``K`` (1e3), ``M``, ``G``, ``T`` (decimal) or
  ``Ki``, ``Mi``, ``Gi``, ``Ti`` (binary): ``100Gbps`` = ``100Gb/s`` = ``100Gbit/s`` = 12.5e9 B/s,
  ``100GB/s`` = ``100GBps`` = ``100GByte/s`` = 1e11 B/s, ``1GiB/s`` = 2**30 B/s.
  The all-lowercase ``kbps``, ``mbps``, ``gbps``, ``tbps`` are bits (that spelling is common and
  always means bits). Anything else whose case is off (``GBPS``, ``gBps``, ``gb/s``, ``mB/s``) is
  refused with the two readings spelled out. A bare number is Gbps.
- durations: ``s``, ``ms``, ``us``/``µs``, ``ns``, ``min``, ``h`` (case-sensitive: ``Ms`` is
  refused); a bare number is seconds.
- token lengths: ``1024``, ``8K``/``8k`` (K = 1024), ``1M`` (1024**2), ``1e5``. A length must
  come out a whole number of tokens, or it is refused, never rounded: ``100.5`` is refused, and so
  is ``19.4K`` (19,865.6 tokens; the paper's "19.4K" threshold means 19,400, write that).
- parameter counts: ``63e9``, ``63B``, ``1T``, ``500M`` (decimal, as model cards write them; the
  suffix is case-insensitive, there is no bit/byte to confuse).

Errors are ``UnitError`` (a ``ValueError``) with one line that shows the text once.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal

KIB = 1024
MIB = 1024**2
GIB = 1024**3
GB = 1e9
TB = 1e12
BITS_PER_BYTE = 8
GBPS = 1e9 / BITS_PER_BYTE  # bytes/s in one Gbps
TFLOPS = 1e12
MS = 1e-3
US = 1e-6
NS = 1e-9
HOUR = 3600.0
K_TOKENS = 1024  # the paper's "1K"
MILLION = 1e6


class UnitError(ValueError):
    """A quantity that cannot be read; the message shows the text once."""


def _decimal(x: float, scale: int, divide: int = 1) -> float:
    """x * 10**scale / divide with the decimal digits people wrote: 2.039 TB/s -> 2039e9 B/s exactly
    (2.039 * 1e12 in binary floating point is 2039000000000.0002)."""
    if not isinstance(x, int | float) or not math.isfinite(x):
        return x * 10.0**scale / divide  # arrays, inf: plain arithmetic
    return float(Decimal(repr(float(x))).scaleb(scale) / divide)


def gbps_to_bytes_per_s(gbps: float) -> float:
    return _decimal(gbps, 9, BITS_PER_BYTE)


def bytes_per_s_to_gbps(bytes_per_s):
    return bytes_per_s / GBPS


def bytes_to_mib(n):
    return n / MIB


def mib_to_bytes(mib):
    return mib * MIB


def bytes_to_gib(n):
    return n / GIB


def gb_to_bytes(gb: float) -> float:
    return _decimal(gb, 9)


def tbps_to_bytes_per_s(tb_per_s: float) -> float:
    """Memory bandwidth in TB/s (decimal bytes) to bytes/s."""
    return _decimal(tb_per_s, 12)


def gbytes_per_s_to_bytes_per_s(gbytes_per_s: float) -> float:
    return _decimal(gbytes_per_s, 9)


def tflops_to_flops(tflops: float) -> float:
    return _decimal(tflops, 12)


def ms_to_s(ms):
    return ms * MS


def s_to_ms(s):
    return s / MS


def tokens_to_k(tokens):
    return tokens / K_TOKENS


# ---------------------------------------------------------------------------------------------
# The parser

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_QUANTITY_RE = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-zµμ/][^\s]*)?\s*$")
QUANTITY = _QUANTITY_RE  # a number with an optional unit, as split_quantity reads it
_NON_FINITE_RE = re.compile(r"^\s*[-+]?(inf|infinity|nan)\b", re.IGNORECASE)

_DECIMAL_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BINARY_PREFIX = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_BIT_BASES = ("bps", "b/s", "bit/s", "bits/s")
_BYTE_BASES = ("Bps", "B/s", "Byte/s", "Bytes/s", "byte/s", "bytes/s")


def _bandwidth_table() -> dict[str, tuple[float, str]]:
    """Every accepted spelling -> (bytes/s per unit, the canonical spelling)."""
    table: dict[str, tuple[float, str]] = {}
    for prefix, scale in (_DECIMAL_PREFIX | _BINARY_PREFIX).items():
        canon = prefix.upper() if prefix == "k" else prefix
        for base in _BIT_BASES:
            table[prefix + base] = (scale / BITS_PER_BYTE, f"{canon}bps")
        for base in _BYTE_BASES:
            table[prefix + base] = (scale, f"{canon}B/s")
    for prefix in "mgt":  # kbps/mbps/gbps/tbps: bits in every usage
        table[f"{prefix}bps"] = (_DECIMAL_PREFIX[prefix.upper()] / BITS_PER_BYTE, f"{prefix.upper()}bps")
    return table


BANDWIDTH_UNITS = _bandwidth_table()
DURATION_UNITS = {"s": 1.0, "ms": MS, "us": US, "µs": US, "μs": US, "ns": NS, "min": 60.0, "h": HOUR}
LENGTH_UNITS = {"": 1, "k": K_TOKENS, "K": K_TOKENS, "M": K_TOKENS * K_TOKENS}
_COUNT_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def shown_text(text: object) -> str:
    shown = repr(text.strip()) if isinstance(text, str) else repr(text)
    return shown if len(shown) <= 40 else f"{shown[:30]}...({len(shown)} characters)"


def split_quantity(text: str | float | int) -> tuple[float, str]:
    """``"100 Gbps"`` -> ``(100.0, "Gbps")``; a finite number and the unit text as written."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise UnitError(f"{shown_text(text)} is not a number")
    if isinstance(text, int | float):
        try:
            value, unit = float(text), ""
        except OverflowError:  # an int past 1.8e308
            raise UnitError(f"{shown_text(text)} is not a finite number") from None
    else:
        m = _QUANTITY_RE.match(text)
        if not m:
            if _NON_FINITE_RE.match(text):
                raise UnitError(f"{shown_text(text)} is not a finite number")
            raise UnitError(f"{shown_text(text)} is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)")
        value, unit = float(m.group(1)), m.group(2) or ""
    if not math.isfinite(value):
        raise UnitError(f"{shown_text(text)} is not a finite number")
    return value, unit


def parse_number(text: str | float | int) -> float:
    """A plain finite number without a unit: "0.7", "4e2", 12."""
    if isinstance(text, str) and not _QUANTITY_RE.match(text) and not _NON_FINITE_RE.match(text):
        raise UnitError(f"{shown_text(text)} is not a number")
    value, unit = split_quantity(text)
    if unit:
        raise UnitError(f"{shown_text(text)} is a plain number, without a unit")
    return value


def _unit_error(text: object, unit: str, table: dict, what: str, examples: str) -> UnitError:
    """Unknown unit: name the readings that differ from it only in case, else list some units."""
    canons = list(dict.fromkeys(v[1] if isinstance(v, tuple) else s for s, v in table.items()
                                if s and s.lower() == unit.lower()))
    if canons:
        def label(c: str) -> str:
            return f"{c} (bits)" if c.endswith("bps") and what == "bandwidth" else (
                f"{c} (bytes)" if what == "bandwidth" else c)
        hint = " or ".join(label(c) for c in canons)
        kind = "ambiguous" if len(canons) > 1 else "unknown"
        return UnitError(f"{shown_text(text)}: {kind} {what} unit {unit!r}; did you mean {hint}?")
    return UnitError(f"{shown_text(text)}: unknown {what} unit {unit!r} (use {examples})")


SUBNORMAL = f"below the smallest normal float, {sys.float_info.min:.3g}"  # what a refusal of one says


def subnormal(x: float) -> bool:
    """Whether ``x`` is a nonzero float below the smallest normal one: its products round to 0 and
    its reciprocal overflows, so an input of one is refused."""
    return x != 0 and abs(x) < sys.float_info.min


def _scaled(text: object, table: dict, what: str, examples: str, default: str) -> float:
    value, unit = split_quantity(text)  # type: ignore[arg-type]
    entry = table.get(unit or default)
    if entry is None:
        raise _unit_error(text, unit, table, what, examples)
    scale = entry[0] if isinstance(entry, tuple) else entry
    out = value * scale
    if math.isfinite(value) and not math.isfinite(out):
        raise UnitError(f"{shown_text(text)} is beyond a float in SI units ({what} in {unit or default} above "
                        f"{sys.float_info.max / scale:.3g})")
    if subnormal(out):
        raise UnitError(f"{shown_text(text)} is below the smallest normal float in SI units ({what} in "
                        f"{unit or default} below {sys.float_info.min / scale:.3g})")
    return out


def bandwidth_scale(unit: str) -> float | None:
    """bytes/s per ``unit`` (``None`` if it is not a bandwidth unit)."""
    entry = BANDWIDTH_UNITS.get(unit)
    return None if entry is None else entry[0]


def parse_bandwidth(text: str | float) -> float:
    """ "100Gbps", "12.5GB/s" or a bare number of Gbps -> bytes/s (> 0)."""
    out = _scaled(text, BANDWIDTH_UNITS, "bandwidth", "Gbps, Gb/s, Gbit/s for bits; GB/s, GBps, GiB/s for bytes",
                  "Gbps")
    if not out > 0:
        raise UnitError(f"{shown_text(text)} is not a positive bandwidth")
    return out


def parse_duration(text: str | float) -> float:
    """ "25ms", "1.5s", "1min" or a bare number of seconds -> seconds (>= 0)."""
    out = _scaled(text, DURATION_UNITS, "time", "s, ms, us, ns, min, h", "s")
    if out < 0:
        raise UnitError(f"{shown_text(text)} is a negative time")
    return out


SIZE_UNITS = {"B": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}


def parse_size(text: str | float) -> float:
    """ "4MiB", "512KiB", "2MB" or a bare number of bytes -> bytes (> 0). b/bit are not sizes here."""
    out = _scaled(text, SIZE_UNITS, "size", "B, KB, MB, GB (decimal), KiB, MiB, GiB (binary)", "B")
    if not out > 0:
        raise UnitError(f"{shown_text(text)} is not a positive size")
    return out


RATE_UNITS = {"rps": 1.0, "req/s": 1.0, "/s": 1.0, "rpm": 1 / 60.0, "req/min": 1 / 60.0, "rph": 1 / HOUR,
              "req/h": 1 / HOUR}


def parse_rate(text: str | float) -> float:
    """ "40rps", "2400rpm", "40req/s" or a bare number of requests per second -> req/s (> 0)."""
    out = _scaled(text, RATE_UNITS, "request rate", "rps, req/s, rpm, req/min, req/h", "rps")
    if not out > 0:
        raise UnitError(f"{shown_text(text)} is not a positive request rate")
    return out


def parse_length(text: str | float | int) -> int:
    """A token length: "1024", "1K" (1024), "128K" (131072), "1M" (1024*1024), "1e5", "1.5K" (1536).

    Raises ``UnitError`` for anything that is not a positive whole number of tokens.
    """
    tokens = _scaled(text, LENGTH_UNITS, "token length", "1024, 8K, 128K, 1M; K = 1024 tokens", "")
    if tokens < 1:
        raise UnitError(f"{shown_text(text)} is not a positive token length")
    whole = round(tokens)
    if abs(tokens - whole) > 1e-9 * max(1.0, tokens):
        _, unit = split_quantity(text)  # type: ignore[arg-type]
        hint = f" (K = {K_TOKENS}, not 1000)" if unit else ""
        raise UnitError(f"{shown_text(text)} is {tokens:,.6g} tokens{hint}, not a whole number: write "
                        f"{math.floor(tokens)} or {math.ceil(tokens)}")
    return whole


def parse_lengths(text: str) -> list[int]:
    """Parse a comma-separated list of lengths, e.g. "1K,8K,32K,128K"."""
    return [parse_length(p) for p in split_items(text, "token length")]


def split_items(text: str, what: str) -> list[str]:
    """The items of a comma-separated list; a trailing comma is fine, an empty item inside
    ("1K,,8K") is refused rather than dropped."""
    parts = [p.strip() for p in str(text).split(",")]
    if parts and not parts[-1]:
        parts = parts[:-1]
    if not any(parts):
        raise UnitError(f"{shown_text(text)} holds no {what}")
    if not all(parts):
        raise UnitError(f"{shown_text(text)} has an empty item between commas")
    return parts


def parse_count(text: str | float | int) -> float:
    """A parameter count: 63e9, "63B", "1T", "1.0e12" (decimal suffixes K, M, B, T, any case) -> >= 0."""
    value, unit = split_quantity(text)
    scale = _COUNT_SCALE.get(unit.lower())
    if scale is None:
        raise UnitError(f"{shown_text(text)} is not a parameter count (examples: 63e9, 63B, 1T)")
    if value < 0:
        raise UnitError(f"{shown_text(text)} is a negative parameter count")
    return value * scale


_QUANTITIES: dict[str, tuple[str, dict[str, float]]] = {
    "size": ("a size", SIZE_UNITS), "time": ("a time", DURATION_UNITS), "rate": ("a request rate", RATE_UNITS),
    "bandwidth": ("a bandwidth", {u: v[0] for u, v in BANDWIDTH_UNITS.items()})}


def parse_in(text: str | float, unit: str) -> float:
    """A number in ``unit`` (GiB, ms, rps, Gbps, ...): a plain number is one in ``unit``, one with a
    unit of the same quantity is converted to it (``10GB`` in GiB: 9.31); another unit is refused,
    saying which unit is taken (the caller names the option)."""
    what, table = next((w, t) for w, t in _QUANTITIES.values() if unit in t)
    value, given = split_quantity(text)
    if not given:
        return value
    if given not in table:
        raise UnitError(f"{shown_text(text)} is not in {unit}: give a number of {unit} or {what} with its unit "
                        f"(e.g. {value:g}{unit})")
    out = value * table[given] / table[unit]
    if not math.isfinite(out) or subnormal(out):
        raise UnitError(f"{shown_text(text)} is {out:g} {unit}, beyond what a float carries")
    return out


def parse_fraction(text: str | float) -> float:
    """A fraction: a plain number (0.5) or a percentage (50%)."""
    t = text.strip() if isinstance(text, str) else text
    if isinstance(t, str) and t.endswith("%"):
        try:
            return parse_number(t[:-1]) / 100
        except UnitError:
            raise UnitError(f"{shown_text(text)} is not a percentage (e.g. 50%)") from None
    try:
        return parse_number(t)
    except UnitError:
        raise UnitError(f"{shown_text(text)} is not a fraction (0.5) or a percentage (50%)") from None


# ---------------------------------------------------------------------------------------------
# Formatting for people (render.py formats tables; these are the unit-aware pieces)


def format_length(tokens: float) -> str:
    """Tokens as the paper writes them: 1024 -> "1K", 45046 -> "44.0K"; below 1K the plain count."""
    if not math.isfinite(tokens) or abs(tokens) >= 1e15:
        return f"{tokens:.4g}"
    k = tokens / K_TOKENS
    if abs(k - round(k)) < 1e-9 and k >= 1:
        return f"{round(k)}K"
    return f"{k:.1f}K" if tokens >= K_TOKENS else f"{tokens:.0f}"  # no "1,000": lists split on commas


def format_tokens(tokens: int) -> str:
    """A whole number of tokens as ``parse_length`` reads it back exactly: 32768 -> "32K", 1000 -> "1000"."""
    return f"{tokens // K_TOKENS}K" if tokens >= K_TOKENS and tokens % K_TOKENS == 0 else str(int(tokens))


def shown_threshold(tokens: float) -> int:
    """A threshold t as it is shown, rounded down: requests longer than t are offloaded (l > t),
    so the whole number at or below t routes every whole length as t does. The one conversion
    of t for display (``optimize``, ``size``, ``thresholds``, ``study``, ``study-report``)."""
    return math.floor(tokens)


def format_threshold(tokens: float) -> str:
    """``shown_threshold`` with thousands separators: 19194.79 -> "19,194"."""
    return f"{shown_threshold(tokens):,}"
