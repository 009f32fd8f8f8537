"""SI units inside, and the only conversions to and from the units people write.

Decisions, stated once (see ../shared/docs/PAPER.md and STYLE.md section 6.3):
- sizes: bytes inside; MiB/GiB (binary) shown where the paper shows them; "GB" of HBM
  capacity is decimal (vendors' 141 GB is 141e9 bytes);
- links: bytes/s inside; Gbps at the edges is decimal, 1 Gbps = 1e9 bit/s = 1.25e8 B/s;
- bandwidths are per direction (vendors quote NVLink bidirectional totals, halved on input);
- FLOPS are dense (no 2:4 sparsity), TFLOPS decimal (1e12);
- token lengths: "1K" = 1024 tokens (the paper's K).
"""

from __future__ import annotations

import math
import re

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
HOUR = 3600.0
K_TOKENS = 1024  # the paper's "1K"
MILLION = 1e6


def gbps_to_bytes_per_s(gbps: float) -> float:
    return gbps * GBPS


def bytes_per_s_to_gbps(bytes_per_s):
    return bytes_per_s / GBPS


def bytes_to_mib(n):
    return n / MIB


def mib_to_bytes(mib):
    return mib * MIB


def bytes_to_gib(n):
    return n / GIB


def gb_to_bytes(gb: float) -> float:
    return gb * GB


def tbps_to_bytes_per_s(tb_per_s: float) -> float:
    """Memory bandwidth in TB/s (decimal bytes) to bytes/s."""
    return tb_per_s * TB


def gbytes_per_s_to_bytes_per_s(gbytes_per_s: float) -> float:
    return gbytes_per_s * GB


def tflops_to_flops(tflops: float) -> float:
    return tflops * TFLOPS


def ms_to_s(ms):
    return ms * MS


def s_to_ms(s):
    return s / MS


def tokens_to_k(tokens):
    return tokens / K_TOKENS


_LENGTH_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_length(text: str) -> int:
    """Parse a token length: "1024", "1K" (1024), "128K" (131072), "1M" (1024*1024), "19.4K".

    Raises ValueError for anything that is not a positive whole number of tokens.
    """
    m = _LENGTH_RE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a token length (examples: 1024, 8K, 128K)")
    value = float(m.group(1))
    scale = {"": 1, "k": K_TOKENS, "m": K_TOKENS * K_TOKENS}[m.group(2).lower()]
    tokens = value * scale
    if tokens < 1 or not math.isfinite(tokens):
        raise ValueError(f"{text!r} is not a positive token length")
    return round(tokens)


def parse_lengths(text: str) -> list[int]:
    """Parse a comma-separated list of lengths, e.g. "1K,8K,32K,128K"."""
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise ValueError(f"{text!r} holds no token length")
    return [parse_length(p) for p in parts]


_QUANTITY_RE = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-z/]*)\s*$")

_BANDWIDTH_UNITS = {
    "bps": 1 / BITS_PER_BYTE,
    "kbps": 1e3 / BITS_PER_BYTE,
    "mbps": 1e6 / BITS_PER_BYTE,
    "gbps": GBPS,
    "tbps": 1e12 / BITS_PER_BYTE,
    "b/s": 1.0,
    "gb/s": GB,
    "tb/s": TB,
}

_TIME_UNITS = {"s": 1.0, "ms": MS, "us": US, "min": 60.0, "h": HOUR}


def parse_quantity(text: str | float | int, units: dict[str, float], default_unit: str) -> float:
    """A number with an optional unit suffix, converted to SI by the table ``units``."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text) * units[default_unit]
    m = _QUANTITY_RE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a number with a unit")
    unit = (m.group(2) or default_unit).lower()
    if unit not in units:
        raise ValueError(f"{text!r}: unknown unit {m.group(2)!r} (use one of {', '.join(units)})")
    return float(m.group(1)) * units[unit]


def parse_bandwidth(text: str | float) -> float:
    """ "100Gbps", "12.5GB/s" or a bare number of Gbps -> bytes/s."""
    return parse_quantity(text, _BANDWIDTH_UNITS, "gbps")


def parse_duration(text: str | float) -> float:
    """ "25ms", "1.5s" or a bare number of seconds -> seconds."""
    return parse_quantity(text, _TIME_UNITS, "s")


def format_length(tokens: float) -> str:
    """Tokens as the paper writes them: 1024 -> "1K", 45046 -> "44.0K"."""
    k = tokens / K_TOKENS
    if abs(k - round(k)) < 1e-9 and k >= 1:
        return f"{round(k)}K"
    return f"{k:.1f}K" if tokens >= K_TOKENS else f"{tokens:.0f}"
