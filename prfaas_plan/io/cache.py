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

``cached_load`` keeps a whole loaded scenario the same way, so that a command run again imports
neither pydantic nor the scenario schema. Which files a scenario reads (catalog entries and the
folders searched for them, traces, CSVs, bandwidth laws) is known only once it is loaded, so the
loader reports each file it reads (``io.files.note``) and the entry records them with their
stamps; a hit needs the same key (the mapping after the options, the working folder, the catalog
folders), the same code and libraries, and every recorded file unchanged (small files by their
content). ``write_back``, around a whole command, stores what the loaded scenario's length
distributions were asked, so a run again needs no scipy either.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar

from prfaas_plan.errors import SpecError
from prfaas_plan.io.files import note, os_reason, recording

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
    note(*files)  # a hit reads none of them, but a scenario that holds the result depends on them
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


# ----------------------------------------------------------------------------- whole loads

_LOAD_CODE = ("io", "specs", "core")  # every module that turns a mapping into specs (and pickles in them)
_LIBRARIES = ("numpy", "scipy", "pydantic", "pydantic_core", "yaml")  # an upgrade may change what they compute
_HASHED_BYTES = 1 << 20  # a recorded file up to this size is compared by content (mtimes tick coarsely)
MAX_ENTRY_BYTES = 8 << 20  # a larger load (a trace's requests, a long series) is not kept: see cached_load
KEPT_VALUES = 16  # entries of one kind cached_value keeps: a distribution's is at most ~1.2 MiB (grid and memo)


def _dependency(path: str) -> str:
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return "folder:" + hashlib.sha256("\0".join(sorted(os.listdir(path))).encode()).hexdigest()
        if st.st_size <= _HASHED_BYTES:
            with open(path, "rb") as f:
                return f"file:{hashlib.sha256(f.read()).hexdigest()}"
    except OSError:
        return "missing"
    return f"file:{st.st_size}:{st.st_mtime_ns}"


def _code() -> str:
    """Stamps of the code a load runs (os.walk and os.stat: pathlib's resolve would cost more than
    the whole hit) and of the libraries' ``__init__`` files, which an upgrade rewrites."""
    files = [str(_PACKAGE / "units.py"), str(_PACKAGE / "errors.py")]
    for d in _LOAD_CODE:
        for folder, subfolders, names in os.walk(_PACKAGE / d):
            subfolders[:] = sorted(f for f in subfolders if f != "__pycache__")
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    for name in _LIBRARIES:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        files.append(spec.origin if spec is not None and spec.origin else name)
    parts = []
    for f in files:
        try:
            st = os.stat(f)
            parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{f}:none")
    return "|".join(parts)


_WRITE_BACK: ContextVar[list[tuple[Path, bytes, bytes, Any]] | None] = ContextVar("prfaas_plan_write_back",
                                                                                 default=None)


@contextmanager
def write_back() -> Iterator[None]:
    """Around a whole command: a value ``cached_load`` gave that has changed by the end (its length
    distributions remember what they were asked, ``core.lengths.continuous.ContinuousLaw._recall``)
    is written back to its entry, so the next run finds those answers too. Only when the block
    ends normally; an entry that grew beyond ``MAX_ENTRY_BYTES`` is left as it was."""
    loaded: list[tuple[Path, bytes, bytes, Any]] = []
    token = _WRITE_BACK.set(loaded)
    try:
        yield
    finally:
        _WRITE_BACK.reset(token)
    for entry, head, body, value in loaded:
        try:
            now = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            if now != body and len(now) <= MAX_ENTRY_BYTES:
                _write(entry, head + now)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass


def _write(entry: Path, data: bytes) -> None:
    tmp = entry.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(entry)


def cached_load(kind: str, place: str, key: str, build: Callable[[], T]) -> T:
    """``build()``, or its result from an earlier run with the same ``key`` whose every file (as
    ``build`` reported them to ``io.files.note``) is unchanged.

    One entry per ``kind`` and ``place`` (a scenario file, the working folder, the catalog): a run
    with other options replaces it rather than adding one, so the cache does not grow with every
    ``--set`` value tried. A result that pickles to more than ``MAX_ENTRY_BYTES`` (a trace
    workload's requests, a long bandwidth series) is not kept: it would copy a large input into
    the cache, and its reading, not pydantic, is what such a load costs. Errors are never kept.
    """
    folder = _folder()
    if folder is None:
        return build()
    return _through(folder / (hashlib.sha256(f"{kind}|{place}".encode()).hexdigest()[:32] + ".pickle"), key, build)[0]


def cached_value(kind: str, key: str, build: Callable[[], T], *, keep: int = KEPT_VALUES) -> T:
    """``build()``, or its result from an earlier run with the same ``key`` and code: a value that
    depends on its key alone (no file), as a length distribution on its parameters, whose grid
    costs the scipy import. So a scenario edited elsewhere, or run with a new ``--set`` value that
    leaves the workload as it was, finds its distribution. One entry per key; of a ``kind``, the
    ``keep`` used last are kept (a hit marks its entry used)."""
    folder = _folder()
    if folder is None:
        return build()
    entry = folder / f"{kind}-{hashlib.sha256(f'{kind}|{key}'.encode()).hexdigest()[:32]}.pickle"
    value, wrote = _through(entry, key, build)
    try:
        if not wrote:
            os.utime(entry)
            return value
        kept = sorted(folder.glob(f"{kind}-*.pickle"), key=lambda f: f.stat().st_mtime_ns, reverse=True)
        for old in kept[keep:]:
            old.unlink()
    except OSError:  # another process pruned or replaced it first
        pass
    return value


def _through(entry: Path, key: str, build: Callable[[], T]) -> tuple[T, bool]:
    """The value of ``entry`` if it holds ``key`` under this code with its files unchanged, else
    ``build()`` written there; and whether it was written."""
    code = _code()
    kept = _WRITE_BACK.get()
    try:
        data = entry.read_bytes()
        f = io.BytesIO(data)
        stored_key, stored_code, reads = pickle.load(f)
        if stored_key == key and stored_code == code and all(_dependency(p) == s for p, s in reads):
            at = f.tell()
            value = pickle.load(f)
            note(*(p for p, _ in reads))
            if kept is not None:
                kept.append((entry, data[:at], data[at:], value))
            return value, False
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        pass
    with recording() as reads:
        value = build()
    paths = list(dict.fromkeys(reads))
    try:
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(body) <= MAX_ENTRY_BYTES:
            head = pickle.dumps((key, code, [(p, _dependency(p)) for p in paths]), protocol=pickle.HIGHEST_PROTOCOL)
            _write(entry, head + body)
            if kept is not None:
                kept.append((entry, head, body, value))
            return value, True
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass
    return value, False
