"""What the HTML report shows: the typed results ``api.report`` computes, drawn by ``report.html``.

Declared here, below api in the layers (as ``report.figures`` is), so that both can name them.
Every field is the result a command renders (``optimize``, ``sweep``, ``latency``, ...), so the
report's tables are those commands' tables, produced by the same view functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.report.figures import Figure5
from prfaas_plan.specs.catalog_view import ModelShow
from prfaas_plan.specs.kv_rate import KvRateResult
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sweep import SweepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class TtftCdf:
    """The analytic TTFT law of each stable system at one rate: P(TTFT <= x) on a grid of x (s)."""

    title: str  # scenario and model
    rate_rps: float
    load: float
    curves: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]  # system -> (x_s, cdf)
    unstable: tuple[str, ...] = ()  # systems above capacity at this rate: no curve


@dataclass(frozen=True, slots=True, kw_only=True)
class Sweep:
    """One `sweep` of a link's bandwidth: its result and the command-line range used."""

    link: str  # the link's name, e.g. prfaas->local
    setting: str  # the --set given to sweep, e.g. link.bandwidth=1Gbps..400Gbps:12
    result: SweepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class InputFile:
    """A catalog entry the page rests on: what it is, the file it was read from (a bundled file by
    its catalog path), the public source it names, and what the page uses it for."""

    kind: str  # model, GPU, serving stack, measured profile
    name: str
    file: str
    source: str
    used_for: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillCost:
    """One prefill on an instance kind the sizing may buy: the mean prefill time of the workload's
    requests there (``role``: as the prefill service, every request; as a PD site, every request
    kept local) and the instance's price."""

    role: str
    instance: str  # e.g. 8xH200
    price_per_instance_hour: float
    seconds: float

    @property
    def dollars(self) -> float:
        return self.price_per_instance_hour * self.seconds / 3600.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportData:
    """Everything one report shows. ``None``: the scenario lacks the feature (no ``sizing:``
    section) or it was not asked for (``--simulate``); ``notes`` say what was left out and why."""

    scenario: ScenarioSpec
    command: str  # the shell command that reproduces the report
    version: str
    overrides: tuple[str, ...]
    trace: str | None
    plan: Any  # PlanResult | TopologyPlanResult
    figure5: Figure5 | None
    sweeps: tuple[Sweep, ...]
    latency: Any  # specs.latency.LatencyResult
    latency_load: float
    cdf: TtftCdf | None
    model: ModelShow | None  # `model show`
    kv_rate: KvRateResult | None  # `kv-rate` on the prefill instance
    simulation: Any = None  # sim.result.SimulateRun
    simulation_requests: int | None = None
    sizing: Any = None  # specs.sizing.SizingResult
    degrade: Any = None  # specs.degrade.DegradeResult
    scenario_file: str = "-"  # the scenario's file as the page names it (a bundled one by its catalog path)
    inputs: tuple[InputFile, ...] = ()  # every catalog entry used, with its file and source
    selective: Any = None  # specs.sizing.SizedPlan: the cheapest plan splitting the traffic, when the cheapest does not
    prefill_costs: tuple[PrefillCost, ...] = ()  # one prefill on each kind the sizing may buy
    trace_stats: Any = None  # specs.trace_stats.TraceStats of --trace
    notes: dict[str, list[str]] = field(default_factory=dict)  # section id -> what was left out, and why
    timings_s: dict[str, float] = field(default_factory=dict)  # wall time of each computation
