"""The simulator's fast path (``prfaas_plan/sim/kernel.py``) compiled by Cython, as the optional
extension ``prfaas_plan.sim._kernel``; everything else is in pyproject.toml.

The extension is the same source (pure-Python mode: its type annotations are Cython's, never
evaluated by Python) with the SHA-256 of ``kernel.py`` appended, so ``sim.fast.implementation``
uses it only while it matches the source beside it: an edited kernel.py runs as Python until the
next install, never as a stale build. ``optional=True``: without a C compiler the build goes on and
the simulator runs the Python source (the same results, about 1.5x slower). ``-ffp-contract=off``:
no fused multiply-add, so every floating-point operation rounds as Python's does (the results
are the reference path's bit for bit; tests/sim/test_kernel.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
SOURCE = ROOT / "prfaas_plan" / "sim" / "kernel.py"


def kernel_extension() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # a build without Cython (pyproject's build requirements name it): Python only
        return []
    text = SOURCE.read_bytes()
    copy = ROOT / "build" / "cython" / "prfaas_plan" / "sim" / "_kernel.py"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(text + f"\nSOURCE_SHA256 = {hashlib.sha256(text).hexdigest()!r}\n".encode())
    ext = Extension("prfaas_plan.sim._kernel", [str(copy.relative_to(ROOT))],
                    extra_compile_args=["-O2", "-ffp-contract=off"])
    built = cythonize([ext], language_level=3, quiet=True)
    for e in built:  # set here: cythonize's copies do not keep it
        e.optional = True
    return built


setup(ext_modules=kernel_extension())
