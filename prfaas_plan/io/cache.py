"""A cache of validated catalog specs, so a command need not import pydantic to read a YAML file
it has read before. Validation builds some dozen pydantic models, which costs more than all of
`kv-rate`'s arithmetic; a validated spec is a small frozen dataclass that pickles.

The key holds the files' paths, sizes and modification times and those of the code that turns
YAML into specs, so an edited file or schema is never served stale. The cache lives in
$PRFAAS_PLAN_CACHE, else $XDG_CACHE_HOME/prfaas-plan, else ~/.cache/prfaas-plan.
PRFAAS_PLAN_CACHE=off (any case) turns it off. A folder named in $PRFAAS_PLAN_CACHE that cannot be
used (a file, cannot be made, not writable) is an error (exit code 2), never silently ignored; the
default folder is best effort: if it cannot be used, the command runs without a cache. A write
that fails later (disk full) only loses that entry.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from prfaas_plan.errors import SpecError
from prfaas_plan.io.files import os_reason

T = TypeVar("T")
_CODE = ("io/schema.py", "io/load.py", "specs/model.py", "specs/hardware.py", "units.py")
_PACKAGE = Path(__file__).resolve().parent.parent


ENV_CACHE = "PRFAAS_PLAN_CACHE"


def _folder() -> Path | None:
    env = os.environ.get(ENV_CACHE, "").strip()
    if env.lower() == "off":
        return None
    if env:
        return _usable(Path(env).expanduser())
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    try:
        return _usable(Path(base) / "prfaas-plan")
    except SpecError:
        return None


def _usable(folder: Path) -> Path:
    """``folder``, made if missing, or a SpecError saying why it cannot hold the cache."""
    where = f"${ENV_CACHE} {folder}"
    hint = f" (set {ENV_CACHE}=off to run without a cache)"
    if folder.exists() and not folder.is_dir():
        raise SpecError(f"is a file, not a folder{hint}", field=where)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(f"cannot make the folder: {os_reason(exc)}{hint}", field=where) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SpecError(f"folder not writable{hint}", field=where)
    return folder


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
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(entry)
    except OSError:
        pass
    return value
