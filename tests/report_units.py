"""Whether a table header names a unit, or names something that has none (a name, a category, a
count of instances by its symbol, a ratio): shared by the HTML and the browser tests of the report."""

from __future__ import annotations

import re

# units a header may carry, as the tables write them
UNIT = re.compile(r"(req/s|\bs\b|\bms\b|Gbps|\btokens\b|\bMiB\b|\bGiB\b|B/token|\$|%|\bGPUs\b|\binstances\b|"
                  r"\brequests\b|\bblocks\b|\blayers\b)")
# headers that name something without a unit (kept small on purpose: a new quantity must say its unit)
UNITLESS = {"", "#", "site", "role", "role / site", "system", "path", "link", "GPU", "kind", "method", "plan",
            "fleet", "input", "source", "file", "name", "used for", "arrivals", "varies", "bound by", "B_out set by",
            "time from", "cache", "factor", "PrfaaS pays", "offloads", "link tier", "role changes", "symbol",
            "meaning", "unit", "level", "best PrfaaS-PD plan", "Scenario"}
UNITLESS_PATTERNS = (
    re.compile(r"^vs |^naive vs "),  # ratios, written 1.56x in their cells
    re.compile(r"^(N_\w+|prfaas ?/ ?p ?/ ?d|split)( ?/ ?N_\w+)*$"),  # counts of instances by their symbol
    re.compile(r"(share|fraction|share cap)$"),  # fractions by name
    re.compile(r"^(PrfaaS-PD|Homogeneous PD|Naive heterogeneous|joint PrfaaS-PD|independent planning|"
               r"homogeneous PD|naive heterogeneous)\b", re.I),  # a column per system; its rows name their units
    re.compile(r"^[\w.]+(\[\d+\])?\.\w+$"),  # a swept --set key (link.bandwidth): its cells carry their unit
)


def has_unit(header: str) -> bool:
    """A header that carries a unit or is unitless by name."""
    h = " ".join(header.split())
    return h in UNITLESS or bool(UNIT.search(h)) or any(p.search(h) for p in UNITLESS_PATTERNS)


def without_units(headers: list[str]) -> list[str]:
    return sorted({h for h in headers if not has_unit(h)})
