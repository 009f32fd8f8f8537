"""The project cites its own documentation: no file names the notes it was first built from (which
users do not have), and every `docs/...` link in the README, the catalog, the code and the outputs
names a file of docs/ and, with an anchor, one of its headings (GitHub's heading slugs)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import ROOT

runner = CliRunner()
DOCS = ROOT / "docs"
# the notes outside the project, spelled apart so that this file does not cite them itself
OUTSIDE = tuple(f"{name}.md" for name in ("PAPER", "DESIGN", "REFERENCE", "STYLE"))
TEXT = {".py", ".pyx", ".md", ".yaml", ".yml", ".csv", ".json", ".jsonl", ".txt", ".j2", ".toml", ".cfg", ".ini", ""}
SKIP = {".git", ".venv", "__pycache__", "build", "dist", ".pytest_cache", ".ruff_cache", ".hypothesis",
        ".import_linter_cache", ".mypy_cache"}
LINK = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)(?:#([\w-]+))?")  # not a URL's .../docs/x.md
LOCAL = re.compile(r"\]\(([\w.-]+\.md)?(?:#([\w-]+))?\)")  # a docs page's own links: (model.md#x), (#x)


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation but - and _ dropped, spaces -> -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # no headings in code
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def project_files() -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.endswith(".egg-info")]
        for name in files:
            path = Path(folder, name)
            if path.suffix in TEXT and path.stat().st_size < 5_000_000:
                out.append(path)
    return out


def broken(text: str, page: Path | None = None) -> list[str]:
    """The links of ``text`` that name no docs page or no heading of it (``page``: the docs page the
    text is, for its own relative links)."""
    bad = []
    found = [(m.group(0), m.group(1), m.group(2)) for m in LINK.finditer(text)]
    if page is not None:
        found += [(m.group(0), m.group(1) or page.name, m.group(2)) for m in LOCAL.finditer(text)]
    for whole, name, anchor in found:
        target = DOCS / name
        if not target.is_file():
            bad.append(f"{whole}: no file docs/{name}")
        elif anchor and anchor not in anchors(target):
            bad.append(f"{whole}: no heading #{anchor} in docs/{name}")
    return bad


def test_slug_is_githubs():
    assert slug("The optimum and the joint search") == "the-optimum-and-the-joint-search"
    assert slug("S_kv per request") == "s_kv-per-request"
    assert slug("Eq. 2's worked examples") == "eq-2s-worked-examples"


def test_the_link_check_can_fail():
    assert broken("see docs/model.md#no-such-heading") == ["docs/model.md#no-such-heading: no heading "
                                                           "#no-such-heading in docs/model.md"]
    assert broken("see docs/nothing.md") == ["docs/nothing.md: no file docs/nothing.md"]
    assert broken("see docs/model.md#symbols and docs/sources.md#table-5") == []
    assert broken("https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md") == []  # another project's docs


def test_the_docs_are_there():
    for name in ("model.md", "design.md", "sources.md"):
        assert (DOCS / name).is_file(), name
    assert {"symbols", "throughput-model", "latency-and-queueing", "time-model", "assumptions",
            "sources"} <= anchors(DOCS / "model.md")
    assert {"gpus", "prices", "models", "table-3", "table-5", "table-6"} <= anchors(DOCS / "sources.md")


def outside(text: str) -> list[str]:
    """The notes outside the project that ``text`` cites."""
    return [name for name in OUTSIDE if name in text]


def test_no_file_cites_notes_outside_the_project():
    assert outside("see " + OUTSIDE[0] + " section 4") == [OUTSIDE[0]]  # the check can fail
    hits = []
    for path in project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{path.relative_to(ROOT)}: {name}" for name in outside(text)]
    assert hits == []


def test_every_docs_link_in_the_project_resolves():
    bad = []
    for path in project_files():
        if path == Path(__file__):
            continue  # its own broken links are the checker's test
        text = path.read_text(encoding="utf-8", errors="replace")
        page = path if path.parent == DOCS else None
        bad += [f"{path.relative_to(ROOT)}: {b}" for b in broken(text, page)]
    assert bad == []


def _out(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


def test_the_catalog_outputs_cite_the_docs_and_resolve():
    texts = [_out("stacks", "--format", "json"), _out("model", "show", "MiniMax-M2.5"),
             _out("model", "show", "Ring-2.5-1T", "--format", "json"),
             _out("kv-rate", "internal-1t", "--stack", "paper-table3", "--format", "json")]
    joined = "\n".join(texts)
    assert "docs/sources.md#models" in joined and "docs/sources.md#table-3" in joined
    assert outside(joined) == []
    assert broken(joined) == []


@pytest.mark.slow
def test_every_model_shows_sources_that_resolve():
    names = [m["name"] for m in json.loads(_out("models", "--format", "json"))["models"]]
    assert len(names) >= 20
    for name in names:
        text = _out("model", "show", name)
        assert broken(text) == [] and outside(text) == [], name
