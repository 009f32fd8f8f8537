"""The import contracts of pyproject.toml's [tool.importlinter] hold (imports point one way).

Runs import-linter in-process, so ``pytest`` covers what ``lint-imports`` checks; a broken
contract fails with every illegal import listed (module -> module, line). A second case breaks
the layers on purpose in a scratch package to show the check can fail.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from importlinter.cli import lint_imports  # in the test extra: a missing install fails, it does not skip

from tests.conftest import ROOT


def _check(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """lint-imports on ``config``: exit code, its report, and the illegal imports it lists."""
    code = lint_imports(config_filename=str(config), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    # each import of a broken chain is rendered '-   a.b -> c.d (l.N)' (continuations without '-')
    listed = [ln.strip().lstrip("-").strip() for ln in report.splitlines() if " -> " in ln]
    return code, report, listed


def test_imports_point_one_way(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, listed = _check(ROOT / "pyproject.toml", capsys)
    broken = report[report.find("Broken contracts"):] if "Broken contracts" in report else report
    assert code == 0 and "BROKEN" not in report, "imports against the contracts:\n" + "\n".join(listed) + "\n" + broken
    assert "3 kept, 0 broken" in report


def test_a_broken_layer_is_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A low layer importing a high one (and pathlib in the 'no I/O' layer) is reported by name."""
    pkg = tmp_path / "layered"
    for sub in ("top", "low"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "top" / "a.py").write_text("from layered.low import b\n")
    (pkg / "low" / "b.py").write_text("import pathlib\n\nfrom layered.top import a\n")
    config = tmp_path / "pyproject.toml"
    config.write_text(textwrap.dedent("""
        [tool.importlinter]
        root_package = "layered"
        include_external_packages = true

        [[tool.importlinter.contracts]]
        name = "layers"
        type = "layers"
        layers = ["layered.top", "layered.low"]

        [[tool.importlinter.contracts]]
        name = "no I/O"
        type = "forbidden"
        source_modules = ["layered.low"]
        forbidden_modules = ["pathlib"]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "layered", raising=False)
    code, report, listed = _check(config, capsys)
    assert code == 1
    assert "layered.low.b -> layered.top.a (l.3)" in listed, report
    assert "layered.low.b -> pathlib (l.1)" in listed, report
    assert "0 kept, 2 broken" in report


def test_no_import_cycles() -> None:
    """No module imports itself through others (strongly connected components of the import
    graph, lazy imports inside functions included, are single modules)."""
    import grimp

    g = grimp.build_graph("prfaas_plan")
    index, low, stack, on, cycles = {}, {}, [], set(), []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in sorted(g.modules):
        if m not in index:
            visit(m)
    assert not cycles, cycles
