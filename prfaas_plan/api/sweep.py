"""Library API of `sweep`: re-optimise for each value of one ranged ``--set``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prfaas_plan import ranges
from prfaas_plan.api.headline import headline
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.io import patch
from prfaas_plan.io.scenario import TraceArg, load_scenario
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sweep import SweepPoint, SweepResult

MAX_SWEEP_POINTS = 2_000


def _planned(sc: ScenarioSpec, number: float, text: str) -> SweepPoint:
    try:
        return SweepPoint(value=number, value_text=text, plan=headline(sc))
    except InfeasibleError as exc:
        return SweepPoint(value=number, value_text=text, reason=str(exc))


def parse_range(item: str, *, log: bool = False) -> tuple[str, list[str], list[float]]:
    """`key=a..b:n[:log]` -> (key, values as strings with the unit, numeric values); see ranges.parse_range."""
    key, _, raw = item.partition("=")
    if not key.strip():
        raise SpecError(f"expected key=a..b:n (e.g. link.bandwidth=1Gbps..100Gbps:20), got {item!r}", field="--set")
    try:
        texts, values = ranges.parse_range(raw, max_points=MAX_SWEEP_POINTS, log=log)
    except ValueError as exc:
        raise SpecError(str(exc), field=f"--set {key.strip()}") from None
    return key.strip(), texts, values


def sweep(ref: str | None, catalog: Any, *, overrides: list[str], method: str | None = None,
          trace: TraceArg = None, log: bool = False, progress: Callable[[str, int, int], None] | None = None,
          reload: bool = False) -> SweepResult:
    """Re-optimise for each value of the one ranged --set; the others apply to every run.

    The scenario is loaded once, at the first value; each further value patches that spec
    (``io.patch``) where the patch is provably the loader's, else reloads the scenario. With
    ``reload`` every value loads the scenario afresh: the reference the patches agree with."""
    return _sweep(ref, catalog, overrides=overrides, method=method, trace=trace, log=log, progress=progress,
                  specs=_reloaded if reload else _patched)


Specs = Callable[..., Iterator[ScenarioSpec]]


def _reloaded(ref: str | None, catalog: Any, *, fixed: list[str], key: str, texts: list[str],
              method: str | None, trace: TraceArg) -> Iterator[ScenarioSpec]:
    for text in texts:
        yield load_scenario(ref, catalog, overrides=[*fixed, f"{key}={text}"], method=method, trace=trace)


def _patched(ref: str | None, catalog: Any, *, fixed: list[str], key: str, texts: list[str],
             method: str | None, trace: TraceArg) -> Iterator[ScenarioSpec]:
    def reload(text: str) -> ScenarioSpec:
        return load_scenario(ref, catalog, overrides=[*fixed, f"{key}={text}"], method=method, trace=trace)

    first = reload(texts[0])
    yield first
    base = patch.loaded(first, ref, catalog, overrides=[*fixed, f"{key}={texts[0]}"], trace=trace, method=method) \
        if patch.patchable(key) and len(texts) > 1 else None
    if base is not None and not patch.agrees(first, patch.point(base, key, texts[0])):
        base = None  # the patch would not rebuild the first point as loaded: reload every point
    for text in texts[1:]:
        sc = patch.point(base, key, text) if base is not None else None
        # generators run lazily: a value the loader refuses raises after the points before it, as it did
        yield sc if sc is not None else reload(text)


def _sweep(ref: str | None, catalog: Any, *, overrides: list[str], method: str | None, trace: TraceArg,
           log: bool, progress: Callable[[str, int, int], None] | None, specs: Specs) -> SweepResult:
    ranged = [o for o in overrides if ".." in o.partition("=")[2]]
    if len(ranged) != 1:
        raise SpecError(f"give exactly one --set as a range key=a..b:n, got {len(ranged)}", field="--set")
    fixed = [o for o in overrides if o not in ranged]
    key, texts, numbers = parse_range(ranged[0], log=log)
    rows: list[SweepPoint] = []
    points = specs(ref, catalog, fixed=fixed, key=key, texts=texts, method=method, trace=trace)
    first: ScenarioSpec | None = None
    for text, number, sc in zip(texts, numbers, points, strict=True):
        first = first or sc
        rows.append(_planned(sc, number, text))
        if progress is not None:
            progress(f"sweeping {key}", len(rows), len(texts))
    assert first is not None
    return SweepResult(key=key, scale="log" if log or ranged[0].rstrip().endswith("log") else "linear", method=method,
                       prefill_site=first.topology.prefill.name, sites=tuple(s.name for s in first.topology.sites),
                       points=tuple(rows))
