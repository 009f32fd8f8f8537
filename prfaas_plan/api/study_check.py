"""A study checked whole before any point runs (``check``): what can be refused is one line, exit
code 2, placed in the study file."""

from __future__ import annotations

import math
import re
from typing import Any

from prfaas_plan import units
from prfaas_plan.api import study_rows
from prfaas_plan.api.study_worker import Worker
from prfaas_plan.errors import PrfaasError, SpecError
from prfaas_plan.io.study import check_value
from prfaas_plan.specs.study import Axis, Study


def _placed(exc: SpecError, study: Study) -> SpecError:
    """An error of the study's own making, placed in the study file: its scenario, set or an axis."""
    field = exc.field or ""
    if exc.source is None and field.split(" ", 1)[0] in ("set", "axes"):
        return SpecError(exc.message, source=study.source, field=field.replace(" ", ".", 1))
    if exc.source is None and field == "SCENARIO":
        return SpecError(exc.message, source=study.source, field="scenario")
    if study.scenario is not None and exc.source == study.scenario and not field:  # the file it names
        return SpecError(f"{study.scenario}: {exc.message}", source=study.source, field="scenario")
    return exc


def check(study: Study) -> None:
    """What can be refused before a point runs, as exit 2 placed in the study file: the scenario
    loads with the study's ``set``; the command's options read; each axis names one of the
    scenario's fields (its first value loads, or fails for its value); and each value passes the
    field's schema (type, unit, bounds), names a catalog entry where it is a name and makes a
    workload law that can be (``_check_values``), a fault no other axis can mend. A value refused
    for the scenario it makes (one instance where a cluster needs two) is that point's error,
    recorded in its row."""
    w = Worker(study)
    try:
        w.load([])
        if study.command in ("latency", "simulate"):
            from prfaas_plan.specs.run import check as check_run

            check_run(study_rows.run_args(w.options))
    except SpecError as exc:
        if exc.field and exc.field.startswith("--"):  # an option, named as the study file names it
            raise SpecError(re.sub(r"--(\w+)", r"\1", exc.message), source=study.source,
                            field=f"options.{exc.field[2:]}") from None
        raise _placed(exc, study) from None
    for a in study.axes:
        try:
            w.load([(a.key, a.values[0])])
        except SpecError as exc:
            if "unknown key" in exc.message or "not a mapping" in exc.message:
                raise _placed(exc, study) from None
            _never_applies(study, w, a, exc)
        except PrfaasError:
            continue
        _check_values(study, w, a)


def _section(key: str) -> str:
    return re.split(r"[.\[]", key, maxsplit=1)[0]


def _failing_field(exc: SpecError, study: Study) -> str | None:
    """The scenario field a load's error is about (without the option that set it), or None."""
    field = exc.field or ""
    if exc.source is None and field.split(" ", 1)[0].lstrip("-") in ("set", "axes") and " " in field:
        return field.split(" ", 1)[1]
    if exc.source is not None and field:  # in the scenario file, as the study's values left it
        return field
    return None


def _never_applies(study: Study, w: Worker, a: Axis, first: SpecError) -> None:
    """Refuse an axis that can never apply to the scenario: each of its values (a range's ends, up
    to 20 of a list) fails alone with the same message at the same field (``link.bandwidth`` on a
    scenario of sites and links; ``clusters.prfaas.instances`` where there are no clusters; at its
    own field, a message that does not depend on the value, for two values or more), and no other
    axis sets that field's section or its own, so that every point would fail."""
    def field_of(exc: SpecError) -> str | None:
        at = _failing_field(exc, study)
        if at is None and (exc.field or "").lstrip("-") in ("axes", "set"):
            at = a.key  # the option that set the axis's key, named without it
        return at

    at = field_of(first)
    if at is None:
        return  # not the scenario's
    others = {_section(b.key) for b in study.axes if b is not a}
    if _section(a.key) in others or _section(at) in others:
        return  # another axis may make the section whole
    values = _checked(a) if a.ranged or len(a.values) <= 20 else [*enumerate(a.values[:20])]
    if (at == a.key or at.startswith((a.key + ".", a.key + "["))) and len(values) < 2:
        return  # at its own field one value may be its own fault, which _check_values names
    for _, v in values[1:]:
        try:
            w.load([(a.key, v)])
        except SpecError as exc:
            if exc.message != first.message or field_of(exc) != at:
                return
        except PrfaasError:
            return
        else:
            return
    name = f"scenario {study.scenario}" if study.scenario else "the scenario"
    raise SpecError(f"never applies to {name}: at each value the scenario fails at {at}: {first.message}",
                    source=study.source, field=f"axes.{a.key}")


def _check_values(study: Study, w: Worker, a: Axis) -> None:
    """Each value of axis ``a`` alone (a range's by its two ends), where no other axis can mend it:
    not when another axis is a part of it or it of another (a section and a field in it), and the
    workload's length law (its bounds, sigma, shape) only when no other axis sets a part of it."""
    others = [b.key for b in study.axes if b is not a]
    if any(k.startswith(a.key + ".") or a.key.startswith(k + ".") for k in others):
        return
    laws = not any(k.startswith("workload.input") for k in others)
    for i, v in _checked(a):
        try:
            check_value(study.scenario, w.catalog, w.fixed, a.key, v, method=study.method, laws=laws)
        except SpecError as exc:
            at = exc.field or ""
            if exc.source is None and (at == f"axes {a.key}" or at.startswith(f"axes {a.key}.")):  # in a section
                if a.labels[i] != str(v):  # a section, by the name the study gives it
                    msg = f"{a.labels[i]}: {exc.message}"
                else:
                    msg = exc.message if repr(v) in exc.message else f"{v!r}: {exc.message}"
                if a.ranged and 0 < i < len(a.values) - 1:  # a range's fractional step (_checked)
                    msg += _whole_steps(a)
                raise SpecError(f"value {i + 1}, {msg}", source=study.source, field=at.replace(" ", ".", 1)) from None


def _checked(a: Axis) -> list[tuple[int, Any]]:
    """The values of ``a`` that stand for all of them: a list's each; a range's two ends and, for a
    range of plain whole numbers, its first fractional step (1..4:3 steps through 2.5, which a
    field of whole numbers, an instance count, refuses though it takes both ends)."""
    if not a.ranged:
        return list(enumerate(a.values))
    ends = [(0, a.values[0]), (len(a.values) - 1, a.values[-1])]

    def whole(v: Any) -> bool:
        try:
            x, unit = units.split_quantity(v)
        except units.UnitError:
            return False
        return not unit and x.is_integer()

    if all(whole(v) for _, v in ends):
        ends += [next(((i, v) for i, v in enumerate(a.values) if not whole(v)), ends[0])]
    return list(dict.fromkeys(ends))


def _whole_steps(a: Axis) -> str:
    """What a range of whole ends that steps by fractions could be instead: the fewest points from
    as many up whose steps are whole (1..4:3 -> 1..4:4)."""
    lo, second, hi = (units.split_quantity(a.values[j])[0] for j in (0, 1, -1))
    step = (hi - lo) / (len(a.values) - 1)
    span = round(abs(hi - lo))
    n = next((k for k in range(len(a.values), min(span + 2, len(a.values) + 10_000)) if span % (k - 1) == 0), None)
    if n is None or not math.isclose(second - lo, step, rel_tol=1e-3):  # log steps: no whole count to offer
        return " (this field takes whole numbers: list them, or give a linear range whose steps are whole)"
    return (f" (the range steps by {abs(step):g}; this field takes whole numbers: "
            f"{a.values[0]}..{a.values[-1]}:{n} steps by {span // (n - 1)})")
