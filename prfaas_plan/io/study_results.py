"""A study's results on disk: parts written as points finish, one file at the end.

While a study runs, each finished batch of points is one Parquet file in ``OUT.parts/`` (written
to a temporary name, then renamed, so a kill leaves only whole parts). ``--resume`` reads the
parts (and a finished ``OUT``) to skip the points they hold. At the end the rows, sorted by
point, are written to ``OUT`` (Parquet, or CSV for a ``.csv`` name) and the parts removed.

Every part carries the study's fingerprint in its schema metadata: parts of another study are
refused, never mixed in. pyarrow is imported only here and only when a study writes.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prfaas_plan.errors import SpecError
from prfaas_plan.io import files
from prfaas_plan.io.files import os_reason

SUFFIXES = (".parquet", ".csv")
STATUS = ("ok", "infeasible", "error")  # a point's outcome (api.study)
_KEY = b"prfaas-plan.study"


def check_output(path: Path) -> Path:
    if path.suffix.lower() not in SUFFIXES:
        raise SpecError(f"writes .parquet or .csv, not {path.suffix or 'a name without a suffix'!r}",
                        field=f"-o {path}")
    return files.check_output(path, "-o")


def parts_dir(path: Path) -> Path:
    return path.with_name(path.name + ".parts")


def _schema(columns: list[tuple[str, str]], fingerprint: str) -> Any:
    import pyarrow as pa

    types = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
    return pa.schema([(name, types[kind]) for name, kind in columns], metadata={_KEY: fingerprint.encode()})


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str]], fingerprint: str) -> Any:
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=_schema(columns, fingerprint))


def _write(tbl: Any, path: Path, option: str) -> None:
    import pyarrow.parquet as pq

    tmp = path.with_name(path.name + ".tmp")
    try:
        if path.suffix.lower() == ".csv":
            import pyarrow.csv as pcsv

            pcsv.write_csv(tbl, tmp)
        else:
            pq.write_table(tbl, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise SpecError(f"cannot write: {os_reason(exc)}", field=f"{option} {path}") from None


def write_part(out: Path, number: int, rows: list[dict[str, Any]], columns: list[tuple[str, str]],
               fingerprint: str) -> None:
    folder = parts_dir(out)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise SpecError(f"cannot make the parts folder: {os_reason(exc)}", field=f"-o {out}") from None
    _write(table(rows, columns, fingerprint), folder / f"part-{number:06d}.parquet", "-o")


def _read(path: Path, fingerprint: str, what: str) -> Any:
    import pyarrow.parquet as pq

    try:
        tbl = pq.read_table(path)
    except Exception as exc:  # a torn or foreign file: say which, never a traceback
        raise SpecError(f"cannot read {what}: {exc}", source=str(path)) from None
    meta = tbl.schema.metadata or {}
    if meta.get(_KEY, b"").decode() != fingerprint:
        raise SpecError(f"{what} comes from another study (or another version of this one): remove it or "
                        "run without --resume", source=str(path))
    return tbl


def finished(out: Path, fingerprint: str) -> list[Any]:
    """The tables already on disk for this study: its parts, else the finished file."""
    folder = parts_dir(out)
    if folder.is_dir():
        return [_read(p, fingerprint, "a partial result") for p in sorted(folder.glob("part-*.parquet"))]
    if out.is_file() and out.suffix.lower() == ".parquet":
        return [_read(out, fingerprint, "the finished results")]
    return []


def clear_parts(out: Path) -> None:
    folder = parts_dir(out)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)


def finish(out: Path, tables: list[Any], columns: list[tuple[str, str]], fingerprint: str) -> Any:
    """All rows sorted by point, written to ``out``; the parts removed. Returns the table."""
    import pyarrow as pa

    merged = pa.concat_tables([t.select([c for c, _ in columns]).cast(_schema(columns, fingerprint))
                               for t in tables]) if tables else table([], columns, fingerprint)
    merged = merged.sort_by("point")
    _write(merged, out, "-o")
    clear_parts(out)
    return merged


def read(path: Path, kinds: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """A finished study's rows (Parquet or CSV), for ``study-report``; a file that is not one is one line.

    ``kinds``: the result columns' types ("int", "float", "str", "bool"), each cell read as its
    column's (a CSV's ``1`` in a text column is "1"; ``abc`` in a number column is refused, naming
    the line and column); an axis' ``.si`` column is a float, an axis' value its text."""
    if not path.is_file():
        raise SpecError("file not found" if not path.exists() else "is a folder, not a file", source=str(path))
    try:
        if path.suffix.lower() == ".csv":
            import pyarrow.csv as pcsv

            tbl = pcsv.read_csv(path)
        else:
            import pyarrow.parquet as pq

            tbl = pq.read_table(path)
        names = tbl.column_names
        rows = tbl.to_pylist()
    except Exception as exc:  # pyarrow's own words: not Parquet, a torn file, a bad CSV, names not UTF-8
        reason = str(exc).splitlines()[0] if str(exc).strip() else "unreadable"
        raise SpecError(f"not a study's results: {reason}", source=str(path)) from None
    missing = [c for c in ("point", "status") if c not in names]
    if missing:
        raise SpecError(f"not a study's results: no column {missing[0]!r}", source=str(path))
    csv = path.suffix.lower() == ".csv"
    axes = set(names[names.index("point") + 1:names.index("status")])  # as api.study writes them
    for i, row in enumerate(rows):
        where = f"line {i + 2}" if csv else f"row {i + 1}"  # a CSV's header is line 1
        point, status = row["point"], row["status"]
        if isinstance(point, bool) or not isinstance(point, int) or point < 0:
            raise SpecError(f"not a study's results: point {point!r} is not a whole number >= 0", source=str(path),
                            field=f"{where}, column point")
        if status not in STATUS:
            raise SpecError(f"not a study's results: status {status!r} is not one of {', '.join(STATUS)}",
                            source=str(path), field=f"{where}, column status")
        for k, v in row.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise SpecError(f"not a study's results: {v} is not a finite number", source=str(path),
                                field=f"{where}, column {k}")
            kind = "float" if k.endswith(".si") else (kinds or {}).get(k, "str" if k in axes else None)
            if kind is not None and v is not None:
                try:
                    row[k] = _typed(v, kind)
                except ValueError as exc:
                    raise SpecError(f"not a study's results: {exc}", source=str(path),
                                    field=f"{where}, column {k}") from None
    return rows


def _typed(v: Any, kind: str) -> Any:
    """A cell as its column's type; ValueError (with the value) where it is not one."""
    if kind == "str":
        return v if isinstance(v, str) else str(v)
    if kind == "bool":
        if isinstance(v, bool):
            return v
        raise ValueError(f"{v!r} is not true or false")
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"{v!r} is not a number")
    if kind == "float":
        return float(v)
    if v != int(v):
        raise ValueError(f"{v!r} is not a whole number")
    return int(v)
