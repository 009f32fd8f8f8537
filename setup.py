"""The simulator's parts and fast path (``prfaas_plan/sim/parts.py`` and ``kernel.py``) compiled by
Cython as one optional extension, ``prfaas_plan.sim._kernel``; everything else is in pyproject.toml.

The extension is the two sources joined (pure-Python mode: their type annotations are Cython's,
never evaluated by Python; kernel.py's import of parts.py dropped, the two being one module), with
the SHA-256 of the sources appended (``sim.fast.digest``), so ``sim.fast`` uses it only while it
matches the sources beside it: an edited source runs as Python until the next install, never as a
stale build. ``optional=True``: without a C compiler the build goes on and the simulator runs the
Python sources (the same results, about 3-4x slower). ``-ffp-contract=off``: no fused multiply-add,
so every floating-point operation rounds as Python's does (the results are the reference path's
bit for bit; tests/sim/test_kernel.py).
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
SIM = ROOT / "prfaas_plan" / "sim"
SOURCES = ("parts.py", "kernel.py")  # as sim.fast.SOURCES


def joined() -> str:
    """parts.py, then kernel.py without its ``from __future__`` line and its import from parts."""
    first, second = ((SIM / name).read_text() for name in SOURCES)
    lines = second.splitlines(keepends=True)
    for node in reversed(ast.parse(second).body):
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__", "prfaas_plan.sim.parts"):
            del lines[node.lineno - 1:node.end_lineno]
    return first + "".join(lines)


def kernel_extension() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # a build without Cython (pyproject's build requirements name it): Python only
        return []
    digest = hashlib.sha256(b"".join((SIM / name).read_bytes() for name in SOURCES)).hexdigest()
    copy = ROOT / "build" / "cython" / "prfaas_plan" / "sim" / "_kernel.py"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(joined() + f"\nSOURCE_SHA256 = {digest!r}\n")
    ext = Extension("prfaas_plan.sim._kernel", [str(copy.relative_to(ROOT))],
                    extra_compile_args=["-O2", "-ffp-contract=off"])
    built = cythonize([ext], language_level=3, quiet=True)
    for e in built:  # set here: cythonize's copies do not keep it
        e.optional = True
    return built


setup(ext_modules=kernel_extension())
