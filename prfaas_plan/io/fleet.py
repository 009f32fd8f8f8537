"""A scenario of several models (``models:``) over one topology: one scenario spec per model.

Each entry of ``models:`` names a catalog model, its demand share (of the total arrival rate; the
shares sum to 1) and optionally its own ``workload``, ``slo``, ``decode``, ``stack`` and the PD
``sites`` that serve it (default: every PD site, the model's demand split as the sites' demand
shares). Every other key (the sites, links, profiles, search) is the scenario's. Each model's
scenario is the file's mapping with its entry laid over it, validated as any scenario is, so a bad
value in an entry is named at ``models[i].<field>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.overrides import Placed
from prfaas_plan.io.scenario import TraceArg, TraceChoice, load_placed, scenario_mapping, to_spec
from prfaas_plan.specs.fleet import FleetModelSpec, FleetSpec
from prfaas_plan.specs.scenario import ScenarioSpec

# the keys an entry may give: its own, and the scenario's it replaces
OWN = ("name", "model", "demand_share", "sites")
REPLACED = ("stack", "workload", "slo", "decode")


def is_fleet(placed: Placed) -> bool:
    return isinstance(placed.data, dict) and "models" in placed.data


@dataclass(frozen=True, slots=True)
class EntryPlaced(Placed):
    """Where a field of one model's scenario is written: the entry's own keys at ``models[i]``."""

    index: int = 0
    given: tuple[str, ...] = ()

    def place(self, field_path: str | None) -> dict[str, str | None]:
        top = (field_path or "").split(".")[0].split("[")[0]
        if top in self.given:
            field_path = f"models[{self.index}].{field_path}"
        return Placed.place(self, field_path)


def _entries(placed: Placed) -> list[dict[str, Any]]:
    where = placed.place
    raw = placed.data["models"]
    if not isinstance(raw, list) or not raw:
        got = "an empty list" if isinstance(raw, list) else kind_of(raw)
        raise SpecError(f"expected a list of models (each with model: and demand_share:), got {got}",
                        **where("models"))
    if "model" in placed.data:
        raise SpecError("give each model under models: (its own model:), not a scenario-wide model: too",
                        **where("model"))
    for i, e in enumerate(raw):
        at = f"models[{i}]"
        if not isinstance(e, dict):
            raise SpecError(f"expected a mapping with model: and demand_share:, got {kind_of(e)}", **where(at))
        for key in e:
            if key not in OWN + REPLACED:
                raise SpecError(f"unknown key {key!r}; an entry takes {', '.join(OWN + REPLACED)}",
                                **where(f"{at}.{key}"))
        for key in ("model", "demand_share"):
            if key not in e:
                raise SpecError(f"missing {key}:", **where(f"{at}.{key}"))
        if not isinstance(e["model"], str) or not e["model"]:
            raise SpecError(f"expected a model's name, got {e['model']!r}", **where(f"{at}.model"))
        share = e["demand_share"]
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise SpecError(f"expected a share in (0, 1], got {share!r}", **where(f"{at}.demand_share"))
    total = sum(float(e["demand_share"]) for e in raw)
    if abs(total - 1) > 1e-6:
        raise SpecError(f"the models' demand shares sum to {total:g}, not 1", **where("models"))
    return raw


def _label(e: dict[str, Any], i: int, placed: Placed, seen: set[str]) -> str:
    name = e.get("name", e["model"])
    if not isinstance(name, str) or not name or any(c in name for c in "\n\t"):
        raise SpecError(f"expected a name, got {name!r}", **placed.place(f"models[{i}].name"))
    if name in seen:
        raise SpecError(f"two models are named {name!r}: give one a name:", **placed.place(f"models[{i}].name"))
    seen.add(name)
    return name


def _sites(e: dict[str, Any], i: int, placed: Placed) -> dict[str, Any]:
    """The mapping's sites and links restricted to the entry's sites, shares renormalised."""
    data = placed.data
    if "sites" not in e:
        return {}
    at = f"models[{i}].sites"
    want = e["sites"]
    if not isinstance(want, list) or not want or not all(isinstance(s, str) for s in want):
        raise SpecError(f"expected a list of PD site names, got {want!r}", **placed.place(at))
    sites = data.get("sites")
    if not isinstance(sites, dict):
        raise SpecError("a model's sites: needs the scenario's sites: form (sites and links)", **placed.place(at))
    pd = {k: v for k, v in sites.items() if isinstance(v, dict) and v.get("role") == "pd"}
    for s in want:
        if s not in pd:
            raise SpecError(f"{s!r} is not a PD site of the scenario ({', '.join(pd) or 'none'})", **placed.place(at))
    shares = {s: pd[s].get("demand_share", 1.0) for s in want}
    tot = sum(float(v) for v in shares.values() if isinstance(v, int | float))
    kept = {k: (dict(v, demand_share=float(shares[k]) / tot) if k in want else v)
            for k, v in sites.items() if k in want or k not in pd}
    links = [lk for lk in data.get("links") or [] if not isinstance(lk, dict) or lk.get("to") in kept]
    return {"sites": kept, "links": links}


@dataclass(frozen=True, slots=True)
class FleetFile:
    """The validated schema objects of a scenario of several models: one ``ScenarioFile`` per model
    (its entry laid over the scenario) and the entries as written. A field outside ``models`` reads
    as the first model's (they share it)."""

    files: tuple[Any, ...]  # io.scenario_schema.ScenarioFile per model
    models: list[dict[str, Any]]
    labels: tuple[str, ...]
    placed: tuple[EntryPlaced, ...]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.files[0], name)


def fleet_file(placed: Placed) -> FleetFile:
    """Each model's mapping validated by the scenario schema; a fault is named at ``models[i]``."""
    from pydantic import ValidationError

    from prfaas_plan.io.load import validation_message
    from prfaas_plan.io.scenario_schema import ScenarioFile

    raw = _entries(placed)
    base = {k: v for k, v in placed.data.items() if k != "models"}
    seen: set[str] = set()
    files, labels, where = [], [], []
    for i, e in enumerate(raw):
        labels.append(_label(e, i, placed, seen))
        given = tuple(k for k in ("model", *REPLACED) if k in e)
        data = {**base, **{k: e[k] for k in given}, **_sites(e, i, placed)}
        mp = EntryPlaced(data, placed.source, dict(placed.origins), index=i, given=given)
        try:
            files.append(ScenarioFile.model_validate(data))
        except ValidationError as exc:
            field_path, msg = validation_message(exc)
            raise SpecError(msg + mp.context(field_path), **mp.place(field_path or None)) from None
        where.append(mp)
    return FleetFile(files=tuple(files), models=raw, labels=tuple(labels), placed=tuple(where))


def load_fleet(path: Path, placed: Placed, catalog: Catalog, ff: FleetFile | None = None) -> FleetSpec:
    """Each model's scenario spec over the scenario's topology."""
    ff = ff or fleet_file(placed)
    models = tuple(FleetModelSpec(name=label, demand_share=float(e["demand_share"]),
                                  scenario=to_spec(sf, path, catalog, mp))
                   for label, e, sf, mp in zip(ff.labels, ff.models, ff.files, ff.placed, strict=True))
    first = models[0].scenario
    return FleetSpec(name=first.name, source=first.source, path=str(path), models=models)


def load_plan_input(ref: str | None, catalog: Catalog, *, overrides: list[str] | None = None,
                    trace: TraceArg = None, method: str | None = None, demand: str | None = None
                    ) -> ScenarioSpec | FleetSpec:
    """A scenario of one model (``load_scenario``) or of several (``models:``, ``io.fleet``)."""
    path, placed = scenario_mapping(ref, catalog, overrides=overrides, trace=trace, method=method, demand=demand)
    if "models" not in placed.data:
        return load_placed(path, placed, catalog)
    if trace is not None and (trace.file if isinstance(trace, TraceChoice) else trace) is not None:
        raise SpecError("a scenario of several models takes each model's trace in its own workload "
                        "(models[i].workload.input)", field="--trace")
    return load_fleet(path, placed, catalog)
