"""The blocks of a report page: a section, its tables (a ``render.Table``'s cells with their
alignment), inline SVG figures numbered in page order, notes, and the first screen's summary."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from prfaas_plan.report.html_figures import Figures
from prfaas_plan.report.render import Table


@dataclass
class Section:
    id: str
    title: str
    intro: list[str] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def add(self, items: list[Any]) -> None:
        """A command's items: each Table a table; consecutive lines of text one block, preformatted
        where the text output indents them."""
        lines: list[str] = []
        for item in [*items, None]:
            if isinstance(item, str):
                lines += item.splitlines() or [""]
                continue
            if any(ln.startswith(" ") for ln in lines):
                self.blocks.append({"kind": "pre", "text": "\n".join(lines).strip("\n")})
            else:
                self.blocks += [{"kind": "text", "text": ln} for ln in lines if ln.strip()]
            lines = []
            if isinstance(item, Table):
                self.blocks.append(_table(item))

    def figure(self, svg: str, caption: str) -> None:
        self.blocks.append({"kind": "figure", "svg": svg, "caption": caption})

    def note(self, text: str) -> None:
        self.blocks.append({"kind": "note", "text": text})

    def h3(self, text: str) -> None:
        self.blocks.append({"kind": "h3", "text": text})


_NUMBER = re.compile(r"^[-+$]?\d")


def _numeric(cells: list[str]) -> bool:
    filled = [c for c in cells if c.strip() not in ("", "-")]
    return bool(filled) and sum(bool(_NUMBER.match(c.strip())) for c in filled) * 2 >= len(filled)


def _table(t: Table) -> dict[str, Any]:
    """A Table's cells with their alignment: the first column left, numbers right, other text left."""
    cols = len(t.columns)
    rows = [r + [""] * (cols - len(r)) for r in t.rows]
    align = ["r" if i not in t.left and _numeric([r[i] for r in rows]) else "l" for i in range(cols)]
    return {"kind": "table", "title": t.title, "columns": list(zip(t.columns, align, strict=True)),
            "rows": [list(zip(r, align, strict=True)) for r in rows], "caption": t.caption}


_DROP = (re.compile(r"<metadata>.*?</metadata>\s*", re.S), re.compile(r"<!--.*?-->\s*", re.S),
         re.compile(r'\s+xmlns(:\w+)?="[^"]*"'))


def inline_svg(svg: str, prefix: str) -> str:
    """matplotlib's SVG document as an element of the page: no prolog, metadata or comments, and
    every id (and reference to one) prefixed, since ids are unique across the whole page."""
    svg = svg[svg.index("<svg"):]
    for pattern in _DROP:
        svg = pattern.sub("", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    return svg.replace("<svg", f'<svg role="img" aria-labelledby="{prefix}-caption"', 1)


class Numbered:
    """Figures numbered in page order, their SVG from ``Figures`` (drawn ahead, or here)."""

    def __init__(self, figures: Figures) -> None:
        self.figures, self.count = figures, 0

    def __call__(self, section: Section, caption: str, key: str, draw: Any, *args: Any) -> None:
        self.count += 1
        prefix = f"fig{self.count}"
        section.figure(inline_svg(self.figures.svg(key, draw, *args), prefix), f"Figure {self.count}. {caption}")
        section.blocks[-1]["id"] = prefix
