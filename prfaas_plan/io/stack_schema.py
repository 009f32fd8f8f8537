"""The YAML schema of a serving-stack profile (``stacks/*.yaml``): ``specs.stack.StackSpec``."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from prfaas_plan.io.schema import EfficiencyFields, Strict
from prfaas_plan.specs.stack import StackSpec


class Band(Strict):
    """A predicted time's P10-P90 band as factors on it (measured / predicted quantiles)."""

    p10: Annotated[float, Field(gt=0, le=1)]
    p90: Annotated[float, Field(ge=1)]


def _words(text: str) -> str:
    """A profile's text must say something: not empty, not a word that reads as no number (nan, inf)."""
    bare = text.strip().lower().lstrip("+-")
    if not bare or bare in ("nan", "inf", "infinity", "none", "null"):
        raise ValueError(f"must be words, got {text!r}")
    return text


Words = Annotated[str, AfterValidator(_words)]


class StackFile(Strict):
    """A serving-stack profile (``specs.stack.StackSpec``): an engine on GPUs, its fitted parameters,
    what they were fitted on and the leave-one-source-out band of their error."""

    name: Words
    engine: Words
    versions: Words
    gpus: list[Words] = Field(min_length=1)
    description: Words | None = None
    source: Words
    parameters: EfficiencyFields
    measurements: str = ""  # the file the parameters were fitted on
    points: Annotated[int, Field(ge=0)] = 0
    sources: Annotated[int, Field(ge=0)] = 0
    prefill_band: Band
    decode_band: Band | None = None
    band_from: Words  # how the bands were measured (which residuals)

    def to_spec(self) -> StackSpec:
        return StackSpec(name=self.name, engine=self.engine, versions=self.versions, gpus=tuple(self.gpus),
                         description=self.description or "", source=self.source,
                         efficiency=self.parameters.to_spec(stack=self.name), measurements=self.measurements,
                         points=self.points, sources=self.sources,
                         prefill_band=(self.prefill_band.p10, self.prefill_band.p90),
                         decode_band=(self.decode_band.p10, self.decode_band.p90) if self.decode_band else None,
                         band_from=self.band_from)
