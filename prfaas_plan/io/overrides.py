"""``--set``, ``--trace`` and ``--method`` on top of a scenario file.

Overrides are values put into the scenario's mapping, never YAML text spliced together, so a path
holding ``'``, ``:``, ``#`` or spaces stays that path. Each value remembers the option it came
from: an error in it names the option (``--set clusters.prfaas.hardware: ...``), not the file.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from prfaas_plan.errors import SpecError, kind_of


@dataclass(frozen=True, slots=True)
class Override:
    key: str  # dotted path, e.g. link.bandwidth
    value: Any
    option: str  # --set, --trace, --method
    implied: bool = False  # a consequence of another option (--trace clears output_tokens): may be set again
    # a point of the command's own grid (degrade's levels, thresholds' bandwidths): replaces what the
    # file or an earlier option gave at its key, a bandwidth law from --set as one from the file
    replaces: bool = False

    @property
    def label(self) -> str:
        """How a message names it: `--set link.bandwidth`, `--trace`, `--method`; a study's fixed values
        and axes as `set link.bandwidth` and `axes link.bandwidth`."""
        return f"{self.option} {self.key}" if self.option in ("--set", "set", "axes") else self.option


def parse_set(item: str) -> Override:
    """``key.sub=value``; the value is read as one YAML value (numbers, 10Gbps, {kind: fixed, ...})."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise SpecError(f"takes key=value, got {item!r}", field="--set")
    if any(not p.strip() for p in key.split(".")):
        raise SpecError(f"empty part in the key {key!r}", field="--set")
    key = ".".join(p.strip() for p in key.split("."))
    return Override(key, _value(raw, key), "--set")


def grid_point(key: str, text: str, option: str) -> Override:
    """``key=text`` set by a command at a point of its grid, named by the ``option`` that asked for
    it (``--levels``); it replaces the scenario's value there, wherever that came from."""
    return Override(key, _value(text, key), option, replaces=True)


def _value(raw: str, key: str) -> Any:
    text = raw.strip()
    if not text:
        return None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        if text[0] in "{[\"'":  # meant as YAML: say what is wrong rather than keep the text
            problem = getattr(exc, "problem", None) or "not valid YAML"
            raise SpecError(f"{problem} in {raw!r}", field=f"--set {key}") from None
        return raw  # e.g. `name=a: b`: the text as written
    if node is not None and node.end_mark.index < len(text):  # YAML dropped the rest as a comment
        raise SpecError(f"' #' starts a YAML comment, so {text!r} would read as "
                        f"{text[:node.end_mark.index].rstrip()!r}; quote the value", field=f"--set {key}")
    return yaml.safe_load(text)


@dataclass(frozen=True, slots=True)
class Placed:
    """The scenario mapping after the overrides, and where each overridden part came from."""

    data: dict[str, Any]
    source: str  # the scenario file
    origins: dict[str, str] = field(default_factory=dict)  # dotted path -> option

    def option_of(self, field_path: str | None) -> str | None:
        """The option that set ``field_path`` (or a section holding it), else None: the file."""
        f = field_path or ""
        hits = [k for k in self.origins if f == k or f.startswith((k + ".", k + "["))]
        return self.origins[max(hits, key=len)] if hits else None

    def place(self, field_path: str | None) -> dict[str, str | None]:
        """``source``/``field`` keywords of a SpecError about ``field_path``."""
        option = self.option_of(field_path)
        if option is None:
            return {"source": self.source, "field": field_path}
        return {"source": None, "field": f"{option} {field_path}"}

    def context(self, field_path: str | None) -> str:
        """For a field of the file that is wrong only beside an option's value (``--set
        workload.input.kind=uniform`` leaves the file's ``mu``): which option, and how to replace
        the whole section instead. Empty when no option touched the field's section."""
        if not field_path or "." not in field_path or self.option_of(field_path) is not None:
            return ""
        section = field_path.rsplit(".", 1)[0]
        near = sorted(k for k in self.origins if k.rsplit(".", 1)[0] == section and "." in k)
        if not near:
            return ""
        return (f" (kept from the scenario file beside {self.origins[near[0]]} {near[0]}; "
                f"to replace the section, give it whole: --set '{section}={{...}}')")

    def error(self, exc: SpecError, field_path: str) -> SpecError:
        """``exc`` (raised without a place, e.g. an unknown catalog name) placed at ``field_path``."""
        return exc.at(**self.place(field_path))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else kind_of(value)


def _overlap(prev: Override, ov: Override) -> bool:
    if prev.key == ov.key or prev.key.startswith(ov.key + "."):
        return True
    if not ov.key.startswith(prev.key + "."):
        return False
    node = prev.value  # a key inside a section given whole, e.g. --trace's workload.input.file
    for part in ov.key[len(prev.key) + 1:].split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


_INDEX = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<i>\d+)\]$")


def _indexed(node: Any, part: str, ov: Override, source: str) -> tuple[Any, Any]:
    """(container, key) for a key part: ``links[1]`` is entry 1 of the list ``links``; a list
    that is missing or too short is the scenario's, so the error names its file too."""
    m = _INDEX.match(part)
    if m is None:
        return node, part
    seq, i = node.get(m["name"]) if isinstance(node, dict) else None, int(m["i"])
    if not isinstance(seq, list) or i >= len(seq):
        got = "missing" if seq is None else _short(seq) if not isinstance(seq, list) else f"{len(seq)} entries"
        raise SpecError(f"{ov.label} indexes entry {i} of a list; the scenario has {got}", source=source,
                        field=m["name"])
    return seq, i


_NAMED = {"sites": "site"}  # mappings of the user's own names: a key inside one names an entry it has


def _known_entry(data: dict[str, Any], parts: list[str], ov: Override) -> None:
    """A --set into a field of a named entry the scenario lacks (``sites.prefil-east.hardware``, a
    typo) is refused naming the entry and the known ones; an entry given whole may be new."""
    if len(parts) < 3 or parts[0] not in _NAMED:
        return
    entries = data.get(parts[0])
    if entries is None and parts[0] == "sites" and "clusters" in data:
        raise SpecError(f"the scenario gives clusters and link, no sites: set clusters.prfaas.{parts[-1]} or "
                        f"clusters.local.{parts[-1]}", field=ov.label)
    if isinstance(entries, dict) and entries and parts[1] not in entries:
        what = _NAMED[parts[0]]
        raise SpecError(f"no {what} named {parts[1]!r} ({parts[0]}: {', '.join(map(str, entries))}); a new {what} "
                        f"is given whole: --set '{parts[0]}.{parts[1]}={{...}}'", field=ov.label)


def apply(data: dict[str, Any], overrides: list[Override], source: str) -> Placed:
    out = copy.deepcopy(data)
    origins: dict[str, str] = {}
    done: list[Override] = []
    for ov in overrides:
        for prev in done:  # a value given twice, or replaced by a section or inside one: refuse
            if not prev.implied and not ov.replaces and _overlap(prev, ov):
                same = (prev.key, prev.option) == (ov.key, ov.option)
                what = f"given twice ({_short(prev.value)}, then {_short(ov.value)})" if same else \
                    f"would replace what {prev.label} gave; give one"
                raise SpecError(what, field=ov.label)
        done.append(ov)
        node = out
        parts = ov.key.split(".")
        _known_entry(out, parts, ov)
        for i, part in enumerate(parts[:-1]):
            node, part = _indexed(node, part, ov, source)
            child = node[part] if isinstance(node, list) else node.get(part)
            if child is None:
                child = {}
                node[part] = child
                origins.setdefault(".".join(parts[: i + 1]), ov.option)  # a section this option made
            if not isinstance(child, dict):
                path = ".".join(parts[: i + 1])
                if ov.option == "--set":  # the key the user wrote goes too deep
                    raise SpecError(f"{path} is a value ({_short(child)}), not a section", field=ov.label)
                # --trace / --method set a fixed key: the file's (or an earlier option's) value is in the way
                by = origins.get(path)
                raise SpecError(f"expected a mapping of keys (got {_short(child)})",
                                **({"source": source, "field": path} if by is None else {"field": f"{by} {path}"}))
            node = child
        node, last = _indexed(node, parts[-1], ov, source)
        node[last] = copy.deepcopy(ov.value)
        origins[ov.key] = ov.option
        for k in [k for k in origins if k.startswith(ov.key + ".")]:  # replaced with the rest
            origins[k] = ov.option
    return Placed(out, source, origins)
