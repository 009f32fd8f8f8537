"""Library API of `sweep`: re-optimise for each value of one ranged ``--set``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prfaas_plan import ranges
from prfaas_plan.api import topology
from prfaas_plan.api.plan import plan
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.io import patch
from prfaas_plan.io.scenario import TraceArg, load_scenario
from prfaas_plan.specs.scenario import ScenarioSpec

MAX_SWEEP_POINTS = 2_000


def _topology_row(sc: ScenarioSpec, number: float, text: str) -> dict[str, Any]:
    """One sweep point of a topology: the total Lambda, what binds, each site's t and split."""
    try:
        p = topology.plan(sc, methods=(sc.search.method,)).payload
    except InfeasibleError as exc:
        return {"value": number, "value_text": text, "feasible": False, "reason": str(exc)}
    b = p["best"]
    return {"value": number, "value_text": text, "feasible": True, "lambda_max_rps": b["lambda_max_rps"],
            "binding": b["binding"], "tight": b["tight"], "n_prfaas": b["n_prfaas"],
            "prfaas_utilization": b["prfaas_utilization"],
            "prfaas_vs_independent": p["ratios"]["prfaas_vs_independent"],
            "independent_lambda_max_rps": p["baselines"]["independent"]["lambda_max_rps"],
            "homogeneous_lambda_max_rps": p["baselines"]["homogeneous"]["lambda_max_rps"],
            "prfaas_vs_homogeneous": p["ratios"]["prfaas_vs_homogeneous"],
            "sites": {n: {k: s[k] for k in ("threshold_tokens", "n_p", "n_d", "p_offload", "lambda_rps")}
                      for n, s in b["sites"].items() if s["role"] == "pd"},
            "links": b["links"]}


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
          reload: bool = False) -> dict[str, Any]:
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
           log: bool, progress: Callable[[str, int, int], None] | None, specs: Specs) -> dict[str, Any]:
    ranged = [o for o in overrides if ".." in o.partition("=")[2]]
    if len(ranged) != 1:
        raise SpecError(f"give exactly one --set as a range key=a..b:n, got {len(ranged)}", field="--set")
    fixed = [o for o in overrides if o not in ranged]
    key, texts, numbers = parse_range(ranged[0], log=log)
    rows: list[dict[str, Any]] = []
    points = specs(ref, catalog, fixed=fixed, key=key, texts=texts, method=method, trace=trace)
    for text, number, sc in zip(texts, numbers, points, strict=True):
        if sc.multi_site:
            rows.append(_topology_row(sc, number, text))
            if progress is not None:
                progress(f"sweeping {key}", len(rows), len(texts))
            continue
        try:
            p = plan(sc, methods=(sc.search.method,)).payload
        except InfeasibleError as exc:
            rows.append({"value": number, "value_text": text, "feasible": False, "reason": str(exc)})
        else:
            b = p["best"]
            hom = p["baselines"]["homogeneous"]
            rows.append({"value": number, "value_text": text, "feasible": True,
                         "threshold_tokens": b["threshold_tokens"], "n_prfaas": b["n_prfaas"], "n_p": b["n_p"],
                         "n_d": b["n_d"], "lambda_max_rps": b["lambda_max_rps"], "p_offload": b["p_offload"],
                         "binding": b["binding"], "tight": b["tight"], "egress_gbps": b["egress_gbps"],
                         "link_utilization": b["link_utilization"],
                         "homogeneous_lambda_max_rps": hom["lambda_max_rps"] if hom else None,
                         "prfaas_vs_homogeneous": p["ratios"].get("prfaas_vs_homogeneous")})
        if progress is not None:
            progress(f"sweeping {key}", len(rows), len(texts))
    return {"key": key, "scale": "log" if log or ranged[0].rstrip().endswith("log") else "linear",
            "method": method, "rows": rows}
