"""Which path plays a simulated run: the fast path (``sim.kernel``), compiled or as Python, or the
reference (the engine and the entities, ``sim.run``).

A run with no control loop and no replayed bandwidth series takes the fast path; the others need
the reference's objects. The fast path is the extension ``prfaas_plan.sim._kernel`` that setup.py
compiles from ``sim/kernel.py`` with Cython when a C compiler is there, as long as it was built
from the very source beside it (it carries that file's SHA-256: an edited kernel.py runs as
Python until the next install, never as a stale build); else ``sim.kernel`` itself, the same
results about 1.5x slower.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from prfaas_plan.sim import kernel

__all__ = ["implementation", "plain"]

_IMPLEMENTATION: Any = None


def implementation() -> Any:
    """The module whose ``run_plain`` plays a plain run (looked up once)."""
    global _IMPLEMENTATION
    if _IMPLEMENTATION is None:
        try:
            from prfaas_plan.sim import _kernel  # type: ignore[attr-defined]
        except ImportError:
            _IMPLEMENTATION = kernel
        else:
            digest = hashlib.sha256(Path(kernel.__file__).read_bytes()).hexdigest()
            _IMPLEMENTATION = _kernel if getattr(_kernel, "SOURCE_SHA256", None) == digest else kernel
    return _IMPLEMENTATION


def plain(run: Any) -> bool:
    """Whether ``run`` (a ``sim.run._Run``) can take the fast path: no control loop, no replayed series,
    and not run before (the fast path writes the run's histograms whole)."""
    return run.monitor is None and run.balancer is None and run.router is None and run.hist.n == 0
