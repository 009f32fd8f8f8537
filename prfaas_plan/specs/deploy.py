"""What `import-deployment` found: the deployed configuration, and the best plan for its fleet."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SitePlan:
    """A PD site's threshold (tokens; None: offloads nothing) and split."""

    site: str
    threshold_tokens: float | None
    n_p: int
    n_d: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportResult:
    scenario: str
    scenario_file: str | None  # where the scenario was written (None: not written)
    target: str
    context_from: str  # "the plan block" or "--scenario BASE": where the model, link and workload came from
    n_prfaas: int
    deployed: tuple[SitePlan, ...]
    deployed_lambda_rps: float
    deployed_binding: str
    best: tuple[SitePlan, ...]
    best_n_prfaas: int
    best_lambda_rps: float
    best_binding: str
    method: str
    notes: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.deployed_lambda_rps / self.best_lambda_rps if self.best_lambda_rps > 0 else 0.0
