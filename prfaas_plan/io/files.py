"""Reading input files and checking output paths: every failure is one SpecError naming the file.

The messages say what is wrong in words (missing, a folder, not readable, not UTF-8, empty), never
an exception class. Output paths are refused, not created: the folder must already exist.
"""

from __future__ import annotations

import csv
import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from prfaas_plan.errors import SpecError

# image formats matplotlib's Agg backend writes without LaTeX or extra libraries (pillow is a dependency)
IMAGE_SUFFIXES = ("png", "svg", "svgz", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")

_REASONS = {
    errno.ENOENT: "not found",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "read-only file system",
    errno.ENAMETOOLONG: "name too long",
}


def os_reason(exc: OSError) -> str:
    """An OSError in words, without the path (the message names it once) or the class name."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return (exc.strerror or "input/output error").lower()


_READS: ContextVar[list[str] | None] = ContextVar("prfaas_plan_reads", default=None)


@contextmanager
def recording() -> Iterator[list[str]]:
    """The absolute paths ``note``d inside the block (also passed on to an enclosing recording):
    what ``io.cache.cached_load`` must find unchanged to serve a load again."""
    outer = _READS.get()
    reads: list[str] = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)
        if outer is not None:
            outer.extend(reads)


def note(*paths: Path | str) -> None:
    """Tell the recording in progress, if any, that what is being built depends on these files
    (or folders, by their listing; or paths that do not exist, which must stay so)."""
    reads = _READS.get()
    if reads is not None:
        reads.extend(os.path.abspath(p) for p in paths)


def read_text(path: Path, encoding: str = "utf-8", *, source: str | None = None) -> str:
    """A file's text, or a SpecError naming the file: missing, a folder, unreadable, not text, empty."""
    note(path)
    where = source or str(path)
    if path.is_dir():
        raise SpecError("is a folder, not a file", source=where)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SpecError("file not found", source=where) from None
    except OSError as exc:
        raise SpecError(f"cannot read: {os_reason(exc)}", source=where) from None
    except ValueError:  # the OS takes no path with a NUL byte in it
        raise SpecError("no such file: the path holds a NUL byte", source=where) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at byte offset {exc.start}",
                        source=where, field=f"line {line} column {column}") from None
    if not text.strip():
        raise SpecError("the file is empty", source=where)
    if text.startswith(LFS_POINTER):
        raise SpecError(lfs_pointer_message(text), source=where)
    return text


# the first line of a Git LFS pointer file (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md)
LFS_POINTER = "version https://git-lfs.github.com/spec/v1"


def lfs_pointer_message(text: str) -> str:
    """What to do about a Git LFS pointer given where the file's content was expected."""
    size = next((line.split(None, 1)[1].strip() for line in text.splitlines()[1:4] if line.startswith("size ")), "")
    what = f" of a {int(size):,}-byte file" if size.isdigit() else ""
    return (f"a Git LFS pointer{what}, not the file itself: run `git lfs pull` in its repository (or download the "
            "file from the repository's web page) and give that file")


def check_output(path: Path, option: str, *, image: bool = False) -> Path:
    """Refuse an output path before any work: its folder must exist, it must not be a folder, and
    it must be writable. ``image`` also requires a suffix matplotlib writes (no suffix: it would
    append ``.png`` and write another file than the one named)."""
    where = f"{option} {path}"
    if str(path) == "":
        raise SpecError("an empty path", field=option)
    if path.is_dir():
        raise SpecError("is a folder, not a file", field=where)
    parent = path.parent
    if not parent.exists():
        raise SpecError(f"folder {parent} does not exist", field=where)
    if not parent.is_dir():
        raise SpecError(f"{parent} is not a folder", field=where)
    if path.exists() and not os.access(path, os.W_OK):
        raise SpecError("not writable", field=where)
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise SpecError(f"folder {parent} is not writable", field=where)
    if image:
        suffix = path.suffix.lower().lstrip(".")
        if suffix not in IMAGE_SUFFIXES:
            got = f"unknown image type '.{suffix}'" if suffix else "no image suffix"
            raise SpecError(f"{got} (use one of {', '.join('.' + s for s in IMAGE_SUFFIXES)})", field=where)
    return path


def write_failed(option: str, path: Path | str, exc: OSError) -> SpecError:
    """A write that failed after the up-front check (disk full, permissions changed)."""
    return SpecError(f"cannot write: {os_reason(exc)}", field=f"{option} {path}")


def data_rows(path: Path, is_value: Callable[[str], bool]) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each data row of a small CSV: blank lines, `#` comments and a
    trailing comma skipped, and the first other line too if none of its cells ``is_value`` (a header)."""
    first = True
    for n, row in enumerate(csv.reader(read_text(path).split("\n")), start=1):
        cells = [c.strip() for c in row]
        while cells and not cells[-1]:  # a trailing comma
            cells.pop()
        if not cells or cells[0].startswith("#"):
            continue
        if first and not any(is_value(c) for c in cells):
            first = False
            continue
        first = False
        yield n, cells
