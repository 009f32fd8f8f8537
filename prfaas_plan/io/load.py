"""YAML and JSON files -> validated specs; catalog lookup by name.

The catalog is a list of folders, searched in order: ``--catalog DIR`` folders, then the
folders in $PRFAAS_PLAN_CATALOG (os.pathsep-separated), then the catalog shipped in the
package. Each folder holds ``models/``, ``hardware/`` and ``scenarios/`` with YAML files.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.cache import cached
from prfaas_plan.io.files import note, os_reason, read_text
from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.model import ModelSpec
from prfaas_plan.specs.stack import DEFAULT_STACK, StackSpec, apply_stack

if TYPE_CHECKING:  # pydantic is imported only when a file is validated (see io/cache.py)
    from pydantic import BaseModel, ValidationError

try:  # libyaml is several times faster where present
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

ENV_CATALOG = "PRFAAS_PLAN_CATALOG"
PACKAGED_CATALOG = Path(__file__).resolve().parent.parent / "catalog"
KINDS = ("models", "hardware", "scenarios", "stacks")

M = TypeVar("M", bound="BaseModel")


def read_yaml(path: Path) -> Any:
    text = read_text(path)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"invalid YAML: {problem}", source=str(path), field=where) from None


def read_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source=str(path)) from None


def _loc(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_TAGS = {"gqa", "swa", "mla", "dsa", "linear", "lognormal", "fixed", "uniform", "gamma", "empirical", "trace"}


def validation_message(exc: ValidationError) -> tuple[str, str]:
    """The most telling error of a pydantic validation as (field path, message with the value).

    A misspelt key shows up twice, as an unknown key and as a missing one; the unknown key is
    named first, with the closest known key as a suggestion.
    """
    errors = exc.errors(include_url=False)
    extra = [e for e in errors if e["type"] == "extra_forbidden"]
    err = extra[0] if extra else errors[0]
    # discriminated unions put the tag in the location ("layers[1].gqa.count"): drop it
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p in _TAGS)]
    field = _loc(loc)
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        missing = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and e["loc"][:-1] == err["loc"][:-1]]
        close = difflib.get_close_matches(str(loc[-1]), missing, n=1, cutoff=0.5)
        return field, f"unknown key {loc[-1]!r}" + (f"; did you mean {close[0]!r}?" if close else "")
    if kind == "missing":
        return field, "required key is missing"
    msg = err["msg"].removeprefix("Value error, ")
    if kind in ("model_type", "dict_type", "model_attributes_type"):  # pydantic words it as Python ("instance of Link")
        msg = "expected a mapping of keys"
    if kind == "union_tag_invalid":
        tag = (err.get("ctx") or {}).get("tag", value)
        expected = (err.get("ctx") or {}).get("expected_tags", "")
        return field + ".kind" if field else "kind", f"unknown kind {tag!r} (expected {expected})"
    if kind.startswith("union_tag") or kind == "literal_error":
        return field, f"{msg} (got {value!r})"
    if value is None or (isinstance(value, dict | list) and kind.endswith("_type")):  # null, or the wrong shape
        return field, f"{msg} (got {kind_of(value)})"
    shown = value if not isinstance(value, dict | list) else None
    if shown is None or re.search(r"\bgot\b", msg) or msg.startswith((repr(shown), f"{shown} ")) \
            or (isinstance(shown, str) and repr(shown) in msg):  # the message shows the value already
        return field, msg
    return field, f"{msg} (got {shown!r})"


def validate(schema: type[M], data: Any, source: str) -> M:
    if not isinstance(data, dict):
        raise SpecError(f"expected a mapping of keys, got {kind_of(data)}", source=source)
    from pydantic import ValidationError

    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        field, msg = validation_message(exc)
        raise SpecError(msg, source=source, field=field or None) from None


@dataclass(frozen=True, slots=True)
class Catalog:
    """Ordered catalog folders; the first folder that defines a name wins."""

    roots: tuple[Path, ...]

    @classmethod
    def default(cls, extra: Iterable[Path | str] = ()) -> Catalog:
        """``--catalog`` folders, then $PRFAAS_PLAN_CATALOG's, then the packaged one; a folder that
        is missing, not a folder, or holds none of models/, hardware/, scenarios/ is refused."""
        roots = [_catalog_root(Path(p), "--catalog") for p in extra]
        env = os.environ.get(ENV_CATALOG, "")
        roots += [_catalog_root(Path(p), f"${ENV_CATALOG}") for p in env.split(os.pathsep) if p]
        roots.append(PACKAGED_CATALOG)
        return cls(tuple(roots))

    def files(self, kind: str) -> list[Path]:
        out: list[Path] = []
        for root in self.roots:
            folder = root / kind
            note(folder)  # a name's file depends on every folder searched, and on what each holds
            if folder.is_dir():
                try:
                    out += sorted(p.resolve() for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))
                except OSError as exc:
                    raise SpecError(f"cannot list the folder: {os_reason(exc)}", source=str(folder)) from None
        return out

    def entries(self, kind: str) -> dict[str, Path]:
        """Name (lower case) -> file, the first folder winning."""
        out: dict[str, Path] = {}
        for path in self.files(kind):
            name = _entry_name(path)
            if name is not None:
                out.setdefault(name.lower(), path)
        return out

    def find(self, kind: str, name: str) -> Path:
        """The catalog file of ``name`` (case-insensitive); a close match is suggested if none."""
        key = name.lower()
        # fast path: a file whose stem is the name
        for path in self.files(kind):
            if path.stem.lower() == key and (_entry_name(path) or "").lower() == key:
                return path
        entries = self.entries(kind)
        if key in entries:
            return entries[key]
        for path in self.files(kind):  # a file of that name that does not read: say why
            if path.stem.lower() == key and not _head(path):
                data = read_yaml(path)
                if not isinstance(data, dict):
                    raise SpecError(f"expected a mapping of keys, got {kind_of(data)}", source=str(path))
                raise SpecError("required key is missing", source=str(path), field="name")
        names = sorted({_entry_name(p) or p.stem for p in entries.values()})
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.4) or difflib.get_close_matches(
            name.lower(), [n.lower() for n in names], n=1, cutoff=0.4)
        hint = f"; did you mean {next(n for n in names if n.lower() == close[0].lower())!r}?" if close else ""
        singular = {"models": "model", "hardware": "hardware", "scenarios": "scenario", "stacks": "stack"}[kind]
        raise SpecError(f"unknown {singular} {name!r}{hint} (see `prfaas-plan {kind}`)"
                        if kind != "scenarios" else f"unknown scenario {name!r}{hint}", unknown=kind)

    def overlays(self, hardware_name: str) -> list[Path]:
        """Efficiency overlays for a GPU, highest priority first."""
        out = []
        for path in self.files("hardware"):
            data = _head(path)
            if str(data.get("overlay", "")).lower() == hardware_name.lower():
                out.append(path)
        return out


def _catalog_root(path: Path, option: str) -> Path:
    where = f"{option} {path}"
    if not path.exists():
        raise SpecError("folder not found", field=where)
    if not path.is_dir():
        raise SpecError("is a file, not a folder", field=where)
    if not any((path / kind).is_dir() for kind in KINDS):
        raise SpecError(f"holds none of {', '.join(k + '/' for k in KINDS)}", field=where)
    return path


def _head(path: Path) -> dict[str, Any]:
    note(path)  # outside the per-process cache: every load that reads it depends on it
    return _read_head(path)


@cache
def _read_head(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry_name(path: Path) -> str | None:
    data = _head(path)
    name = data.get("name")
    return str(name) if name is not None else None


def is_path_like(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml", ".json")) or os.sep in ref or "/" in ref


def load_model(ref: str, catalog: Catalog | None = None) -> ModelSpec:
    """A model by catalog name, model YAML file, or HuggingFace config.json."""
    catalog = catalog or Catalog.default()
    path = Path(ref)
    note(path)  # a name is a file's if one of that name is here (else it must stay absent)
    if ref.endswith(".json"):
        from prfaas_plan.io.hf_import import import_hf_config
        from prfaas_plan.io.schema import ModelFile

        data = import_hf_config(read_json(path), source=str(path))
        return validate(ModelFile, data, str(path)).to_spec()
    if not (is_path_like(ref) or path.is_file()):
        path = catalog.find("models", ref)

    def build() -> ModelSpec:
        from prfaas_plan.io.schema import ModelFile

        return validate(ModelFile, read_yaml(path), str(path)).to_spec()

    return cached("model", [path], build) if path.is_file() else build()


def load_stack(ref: str | None = None, catalog: Catalog | None = None) -> StackSpec:
    """A serving-stack profile by catalog name or YAML file (``DEFAULT_STACK`` when None)."""
    catalog = catalog or Catalog.default()
    ref = ref or DEFAULT_STACK
    path = Path(ref) if is_path_like(ref) else catalog.find("stacks", ref)

    def build() -> StackSpec:
        from prfaas_plan.io.stack_schema import StackFile

        return validate(StackFile, read_yaml(path), str(path)).to_spec()

    return cached("stack", [path], build) if path.is_file() else build()


def load_gpu(ref: str, catalog: Catalog | None = None, stack: str | StackSpec | None = None) -> GpuSpec:
    """A GPU by catalog name or hardware YAML file, its time-model parameters from the serving stack
    (``DEFAULT_STACK`` when None) unless its YAML or an efficiency overlay gives its own."""
    catalog = catalog or Catalog.default()
    path = Path(ref) if is_path_like(ref) else catalog.find("hardware", ref)
    name = _head(path.resolve()).get("name") if path.is_file() else None
    overlays = catalog.overlays(str(name)) if name else []

    def build() -> GpuSpec:
        from prfaas_plan.io.schema import EfficiencyOverlay, HardwareFile

        hw = validate(HardwareFile, read_yaml(path), str(path))
        found = catalog.overlays(hw.name)
        if found:
            ov = validate(EfficiencyOverlay, read_yaml(found[0]), str(found[0]))
            return hw.to_spec(efficiency=ov.efficiency)
        return hw.to_spec()

    gpu = cached("gpu", [path, *overlays[:1]], build) if path.is_file() else build()
    return apply_stack(gpu, stack if isinstance(stack, StackSpec) else load_stack(stack, catalog))
