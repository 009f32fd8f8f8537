"""A cache of validated catalog specs, so a command need not import pydantic to read a YAML file
it has read before. Validation builds some dozen pydantic models, which costs more than all of
`kv-rate`'s arithmetic; a validated spec is a small frozen dataclass that pickles.

The key holds the files' paths, sizes and modification times and those of the code that turns
YAML into specs, so an edited file or schema is never served stale. The cache lives in
$PRFAAS_PLAN_CACHE, else $XDG_CACHE_HOME/prfaas-plan, else ~/.cache/prfaas-plan; an unwritable
folder only means no cache. PRFAAS_PLAN_CACHE=off turns it off.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
_CODE = ("io/schema.py", "io/load.py", "specs/model.py", "specs/hardware.py", "units.py")
_PACKAGE = Path(__file__).resolve().parent.parent


def _folder() -> Path | None:
    env = os.environ.get("PRFAAS_PLAN_CACHE")
    if env == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prfaas-plan"


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def cached(kind: str, files: Sequence[Path], build: Callable[[], T]) -> T:
    """``build()``, or its result from an earlier run over the same unchanged ``files``."""
    folder = _folder()
    if folder is None:
        return build()
    try:
        parts = [kind, *(_stamp(f) for f in files), *(_stamp(_PACKAGE / c) for c in _CODE)]
    except OSError:
        return build()
    entry = folder / (hashlib.sha256("|".join(parts).encode()).hexdigest()[:32] + ".pickle")
    try:
        return pickle.loads(entry.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        pass
    value = build()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(entry)
    except OSError:
        pass
    return value
