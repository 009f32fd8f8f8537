"""Read a study file (YAML) into a ``specs.study.Study``.

    scenario: paper-case-study          # a bundled name or a file, relative to the study's folder
    command: optimize                   # optimize | size | latency | simulate
    axes:                               # crossed with each other
      link.bandwidth: [10Gbps, 40Gbps, 100Gbps]
      clusters.prfaas.instances: 2..8:4          # a range as sweep takes it: a..b:n[:log]
      model: [internal-1t, MiniMax-M2.5]
    zip:                                # each group's axes advance together, crossed with the rest
      - {clusters.prfaas.hardware: [H200, B200], clusters.local.hardware: [H20, H200]}
    set: {workload.output_tokens: 1024} # applied at every point
    options: {load: 0.7}                # the command's own options
    samples: 10000                      # optional: that many distinct points, drawn with seed
    seed: 0

The values are kept as the file holds them (numbers, unit strings, names) and applied as
``--set`` values are; that each axis names a scenario field is checked when the study's first
point is loaded (``api.study``), against the scenario's own schema.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from prfaas_plan import ranges, units
from prfaas_plan.errors import PrfaasError, SpecError, kind_of
from prfaas_plan.io.load import read_yaml, validation_message
from prfaas_plan.io.patch import Loaded
from prfaas_plan.specs.study import COMMANDS, MAX_POINTS, Axis, Study

_LAWS = ("lognormal", "gamma", "uniform", "fixed")  # a workload section check_value builds: no file to read
_KEYS = ("scenario", "command", "axes", "zip", "set", "options", "samples", "seed", "method")
# each command's options a study may set, and what reads them (the commands' own parsers)
OPTIONS = {"optimize": (), "size": ("demand",), "latency": ("load", "rate"),
           "simulate": ("load", "rate", "requests", "duration", "seed")}


def _axis(key: Any, raw: Any, source: str, at: str) -> Axis:
    if not isinstance(key, str) or not key.strip() or any(not p.strip() for p in key.split(".")):
        raise SpecError(f"an axis is a scenario field such as link.bandwidth, got {key!r}", source=source, field=at)
    key = key.strip()
    where = f"{at}.{key}"
    labels: list[str] | None = None
    ranged = isinstance(raw, str) and ".." in raw
    if ranged:
        try:
            texts, _ = ranges.parse_range(raw, max_points=MAX_POINTS)
        except units.UnitError as exc:
            raise SpecError(str(exc), source=source, field=where) from None
        values: list[Any] = list(texts)
    elif isinstance(raw, list):
        values = raw
    elif isinstance(raw, dict):  # named values: {short: {kind: lognormal, ...}, long: {...}}
        labels, values = [str(k) for k in raw], list(raw.values())
    else:
        raise SpecError(f"expected a list of values, a range a..b:n or a mapping of names to values, got "
                        f"{kind_of(raw)}", source=source, field=where)
    if not values:
        raise SpecError("an axis needs at least one value", source=source, field=where)
    for i, v in enumerate(values):
        if v is None or (labels is None and isinstance(v, dict | list)):
            raise SpecError(f"value {i + 1} must be a number, a quantity or a name (name a section's values: "
                            f"{{name: {{...}}}}), got {kind_of(v)}", source=source, field=where)
    # the numbers in SI units are read against the scenario's schema (``with_numbers``), not here
    return Axis(key=key, values=tuple(values), labels=tuple(labels or (str(v) for v in values)),
                numbers=(None,) * len(values), ranged=ranged, named=labels is not None)


def _mapping(raw: Any, source: str, field: str) -> dict[Any, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpecError(f"expected a mapping, got {kind_of(raw)}", source=source, field=field)
    return raw


def _whole(raw: Any, source: str, field: str, minimum: int) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise SpecError(f"expected a whole number, got {raw!r}", source=source, field=field)
    if raw < minimum:
        raise SpecError(f"must be >= {minimum}, got {raw}", source=source, field=field)
    return raw


def load_study(path: str | Path) -> tuple[Study, Path]:
    """The study and the scenario file it names (resolved: a file relative to the study's folder,
    else a bundled name, which ``api.study`` resolves through the catalog)."""
    path = Path(path)
    source = str(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise SpecError(f"expected a mapping of keys, got {kind_of(raw)}", source=source)
    unknown = [k for k in raw if k not in _KEYS]
    if unknown:
        raise SpecError(f"unknown key (a study takes {', '.join(_KEYS)})", source=source, field=str(unknown[0]))
    command = raw.get("command", "optimize")
    if command not in COMMANDS:
        raise SpecError(f"must be one of {', '.join(COMMANDS)}, got {command!r}", source=source, field="command")
    scenario = raw.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        raise SpecError(f"expected a bundled name or a file, got {kind_of(scenario)}", source=source,
                        field="scenario")
    if isinstance(scenario, str) and (path.parent / scenario).is_file():
        scenario = str(path.parent / scenario)

    groups: list[tuple[Axis, ...]] = []
    seen: set[str] = set()

    def add(group: tuple[Axis, ...], at: str) -> None:
        for a in group:
            if a.key in seen:
                raise SpecError("the field is an axis twice", source=source, field=f"{at}.{a.key}")
            seen.add(a.key)
        rows = list(zip(*(a.values for a in group), strict=True))
        if len({repr(r) for r in rows}) != len(rows):  # a zipped group may repeat a value, not a combination
            what = "value" if len(group) == 1 else "combination of values"
            raise SpecError(f"lists the same {what} twice", source=source,
                            field=f"{at}.{group[0].key}" if len(group) == 1 else at)
        groups.append(group)

    for key, values in _mapping(raw.get("axes"), source, "axes").items():
        add((_axis(key, values, source, "axes"),), "axes")
    zipped = raw.get("zip") or []
    if not isinstance(zipped, list):
        raise SpecError(f"expected a list of groups of axes, got {kind_of(zipped)}", source=source, field="zip")
    for i, group in enumerate(zipped):
        at = f"zip[{i}]"
        axes = tuple(_axis(k, v, source, at) for k, v in _mapping(group, source, at).items())
        if not axes:
            raise SpecError("a zipped group needs at least one axis", source=source, field=at)
        lengths = {len(a.values) for a in axes}
        if len(lengths) > 1:
            raise SpecError(f"zipped axes advance together, so they need as many values each; got "
                            f"{', '.join(f'{a.key}: {len(a.values)}' for a in axes)}", source=source, field=at)
        add(axes, at)
    if not groups:
        raise SpecError("a study needs at least one axis", source=source, field="axes")

    fixed = tuple((str(k), v) for k, v in _mapping(raw.get("set"), source, "set").items())
    options = _mapping(raw.get("options"), source, "options")
    for k in options:
        if k not in OPTIONS[command]:
            allowed = ", ".join(OPTIONS[command]) or "none"
            raise SpecError(f"not an option of {command} in a study (it takes: {allowed})", source=source,
                            field=f"options.{k}")
    samples = raw.get("samples")
    if samples is not None:
        samples = _whole(samples, source, "samples", 1)
    seed = _whole(raw.get("seed", 0), source, "seed", 0)
    method = raw.get("method")
    if method is not None and method not in ("paper", "exact"):
        raise SpecError(f"must be paper or exact, got {method!r}", source=source, field="method")
    study = Study(source=source, scenario=scenario, command=command, groups=tuple(groups), fixed=fixed,
                  samples=samples, seed=seed, method=method, options=tuple((str(k), v) for k, v in options.items()))
    if study.space > MAX_POINTS and samples is None:
        raise SpecError(f"the axes cross to {study.space:,} points, more than {MAX_POINTS:,}: give samples: N",
                        source=source, field="axes")
    if samples is not None and samples > study.space:
        raise SpecError(f"asks for {samples:,} distinct points of a study of {study.space:,}", source=source,
                        field="samples")
    return study, path


def load_point(ref: str | None, catalog: Any, fixed: Sequence[tuple[str, Any]], values: Sequence[tuple[str, Any]],
               *, method: str | None = None) -> tuple[Any, Loaded | None]:
    """The scenario with the study's ``set`` and a point's (field, value) pairs set as typed values,
    as ``load_scenario`` builds it from ``--set``; with the mapping and schema object ``io.patch``
    patches further. A message names them ``set FIELD`` and ``axes FIELD``."""
    from prfaas_plan.io.fleet import FleetFile, load_fleet
    from prfaas_plan.io.scenario import to_spec

    path, placed, sc = _schema_valid(ref, catalog, fixed, values, method)
    if isinstance(sc, FleetFile):  # several models: loaded whole at every point (no patch)
        return load_fleet(path, placed, catalog, sc), None
    spec = to_spec(sc, path, catalog, placed)
    return spec, Loaded(spec, placed.data, sc)


def with_numbers(study: Study, catalog: Any) -> Study:
    """The study with each axis value as the number the scenario reads at its field, in SI units:
    the one reader of a study's values is the scenario schema's, as for ``--set`` (a bare number on
    ``link.bandwidth`` is Gbps, on ``link.rtt`` seconds, on ``link.max_window`` bytes, on a length
    tokens); None for a name, a named section, or a value its field refuses (``api.study.check``
    refuses those before any point runs). Every reader is a number times its unit's scale, so each
    unit's scale is read once per axis (the field at ``1UNIT``), never each of a range's values."""
    groups = tuple(tuple(replace(a, numbers=_numbers(study, catalog, a)) for a in g) for g in study.groups)
    return replace(study, groups=groups)


def _numbers(study: Study, catalog: Any, a: Axis) -> tuple[float | None, ...]:
    if a.named:
        return (None,) * len(a.values)

    def read(value: Any) -> float | None:
        try:
            _, _, sc = _schema_valid(study.scenario, catalog, study.fixed, [(a.key, value)], study.method)
        except PrfaasError:
            return None
        got = field_at(sc, a.key)
        return float(got) if isinstance(got, int | float) and not isinstance(got, bool) else None

    scales: dict[str, float | None] = {}
    out: list[float | None] = []
    for v in a.values:
        try:
            x, unit = units.split_quantity(v)
        except units.UnitError:  # a name (H200, paper): no number
            out.append(None)
            continue
        if unit not in scales:
            scales[unit] = read(f"1{unit}")
        scale = scales[unit]
        out.append(x * scale if scale is not None else read(v))  # the field refuses 1UNIT: this value alone
    return tuple(out)


def field_at(obj: Any, key: str) -> Any:
    """The value at a dotted key (``links[0].bandwidth``, ``sites.a.instances``) of a schema object."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", key):
        if part.startswith("["):
            i = int(part[1:-1])
            obj = obj[i] if isinstance(obj, list) and i < len(obj) else None
        else:
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def check_value(ref: str | None, catalog: Any, fixed: Sequence[tuple[str, Any]], key: str, value: Any,
                *, method: str | None = None, laws: bool = True) -> None:
    """``value`` alone at ``key`` passes the scenario's schema, at ``model`` or a ``hardware`` field
    names a catalog entry and (``laws``) in the workload's input makes a length law that builds;
    else the SpecError, placed ``axes KEY`` where the fault is the value's own (its type, unit or
    bounds, an unknown name) rather than the scenario's."""
    path, placed, sc = _schema_valid(ref, catalog, fixed, [(key, value)], method)
    from prfaas_plan.io.fleet import FleetFile, load_fleet

    if isinstance(sc, FleetFile):  # several models: every name and law the way optimize loads them
        load_fleet(path, placed, catalog, sc)
        return
    if isinstance(value, str) and (key == "model" or key.endswith(".hardware")):
        from prfaas_plan.io.load import load_gpu, load_model
        from prfaas_plan.io.scenario import named

        named(load_model if key == "model" else load_gpu, value, catalog, placed, key)
    if laws and key.split(".")[:2] == ["workload", "input"] and sc.workload.input.kind in _LAWS:
        from prfaas_plan.io.workload import load_lengths

        load_lengths(sc.workload.input, path.parent, None, placed)  # bounds, sigma, shape (io.cache keeps the law)


def _schema_valid(ref: str | None, catalog: Any, fixed: Sequence[tuple[str, Any]], values: Sequence[tuple[str, Any]],
                  method: str | None) -> tuple[Path, Any, Any]:
    """The scenario file's mapping with the overrides applied, and its schema object (``ScenarioFile``)."""
    from pydantic import ValidationError

    from prfaas_plan.io.overrides import Override, apply
    from prfaas_plan.io.scenario import scenario_path
    from prfaas_plan.io.scenario_schema import ScenarioFile

    path = scenario_path(ref, catalog)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise SpecError(f"expected a mapping of keys, got {kind_of(raw)}", source=str(path))
    extra = [Override(k, v, "set") for k, v in fixed] + [Override(k, v, "axes") for k, v in values]
    if method is not None:
        extra.append(Override("search.method", method, "method"))
    placed = apply(raw, extra, str(path))
    if "models" in placed.data:  # several models: each model's mapping validated (io.fleet)
        from prfaas_plan.io.fleet import fleet_file

        return path, placed, fleet_file(placed)
    try:
        return path, placed, ScenarioFile.model_validate(placed.data)
    except ValidationError as exc:
        field_path, msg = validation_message(exc)
        raise SpecError(msg + placed.context(field_path), **placed.place(field_path or None)) from None
