"""Rooms that say what they hold (issue 22, part 5): no module imports another's private names, no
module over ~400 lines, no function over ~80 (the simulator's compiled kernel included)."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

PACKAGE = ROOT / "prfaas_plan"
MAX_MODULE_LINES = 410
MAX_FUNCTION_LINES = 85
# a compiled extension module is private by name; importing it from its own package is its use
PRIVATE_MODULES = {("prfaas_plan.sim", "_kernel")}


def modules() -> list[tuple[str, ast.Module, int]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        out.append((path.relative_to(PACKAGE).as_posix(), ast.parse(text), text.count("\n")))
    return out


def private_imports(tree: ast.Module, name: str) -> list[str]:
    """``from prfaas_plan.x import _y`` where x is not the module itself."""
    me = "prfaas_plan." + name.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prfaas_plan"):
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and node.module != me and (node.module, alias.name) not in PRIVATE_MODULES:
                    found.append(f"{name}:{node.lineno} imports {alias.name} from {node.module}")
    return found


def test_no_module_imports_another_modules_private_names():
    found = [f for name, tree, _ in modules() for f in private_imports(tree, name)]
    assert found == []


def test_the_private_import_check_finds_one():
    tree = ast.parse("from prfaas_plan.api.plan import _timing\nfrom prfaas_plan.sim import _kernel\n")
    assert private_imports(tree, "api/optimize.py") == ["api/optimize.py:1 imports _timing from prfaas_plan.api.plan"]
    assert private_imports(ast.parse("from prfaas_plan.api.plan import _timing\n"), "api/plan.py") == []


def test_no_module_over_the_limit():
    big = {name: lines for name, _, lines in modules() if lines > MAX_MODULE_LINES}
    assert big == {}


def test_no_function_over_the_limit():
    long = []
    for name, tree, _ in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{name}:{node.name} {lines} lines")
    assert long == []
