"""Which path plays a simulated run, and on which parts: the fast path (``sim.kernel``), compiled or
as Python, or the reference (the engine and the entities, ``sim.topology`` and ``sim.site``).

A run of one PD site with no control loop and no replayed bandwidth series takes the fast path;
the others need the reference's objects. Both are built on the parts of ``sim.parts`` (the request record and the
stations' state). setup.py compiles parts.py and kernel.py with Cython, as one extension
``prfaas_plan.sim._kernel``, when a C compiler is there; it is used (for both paths) only while it
was built from the very sources beside it (it carries their SHA-256: an edited source runs as
Python until the next install, never as a stale build); else the sources themselves, the same
results about 3-4x slower (as fast as the reference path then).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType
from typing import Any

from prfaas_plan.sim import kernel
from prfaas_plan.sim import parts as parts_source

__all__ = ["SOURCES", "digest", "implementation", "parts", "plain"]

SOURCES = ("parts.py", "kernel.py")  # the extension's sources, joined in this order (setup.py)
_COMPILED: list[ModuleType | None] = []


def digest(folder: Path | None = None) -> str:
    """SHA-256 of the sources joined, as setup.py stamps the extension with (``SOURCE_SHA256``)."""
    folder = folder if folder is not None else Path(kernel.__file__).parent
    return hashlib.sha256(b"".join((folder / name).read_bytes() for name in SOURCES)).hexdigest()


def compiled() -> ModuleType | None:
    """The extension, if there is one built from these sources (looked up once)."""
    if not _COMPILED:
        try:
            from prfaas_plan.sim import _kernel  # type: ignore[attr-defined]
        except ImportError:
            _COMPILED.append(None)
        else:
            _COMPILED.append(_kernel if getattr(_kernel, "SOURCE_SHA256", None) == digest() else None)
    return _COMPILED[0]


def implementation() -> Any:
    """The module whose ``run_plain`` plays a plain run."""
    return compiled() or kernel


def parts() -> Any:
    """The module whose ``Req``, ``Fifo``, ``Slots`` and ``Link`` both paths build on."""
    return compiled() or parts_source


def plain(run: Any) -> bool:
    """Whether ``run`` (a ``sim.topology.TopologyEngineRun``) can take the fast path: one PD site on
    the run's own stations, no control loop, no replayed series, and not run before (the fast path
    writes the run's histograms whole)."""
    if not run.kernel_ready or len(run.sites) != 1:
        return False
    site = run.sites[0]
    return site.monitor is None and site.balancer is None and site.router is None and run.hist.n == 0
