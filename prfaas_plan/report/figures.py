"""What each figure takes: typed arrays the api layer computes (``api.figures``), drawn by ``report.plots``.

Declared here, below api in the layers, so the plotting functions can name the types they draw;
no function of the model is called in this package (a contract in pyproject.toml).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True, slots=True, kw_only=True)
class SplitPanel:
    """(a) At the best t, every split N_p = 1 .. instances - 1 with N_d = instances - N_p (req/s)."""

    n_p: NDArray[np.int64]
    prefill_rps: NDArray[np.float64]  # min(Theta_prfaas / p, Theta_pd-p / (1 - p)), Eq. 3 and 4
    decode_rps: NDArray[np.float64]  # Theta_pd-d
    lambda_max_rps: NDArray[np.float64]  # the smaller of the two


@dataclass(frozen=True, slots=True, kw_only=True)
class ThresholdPanel:
    """(b) At the best split, each searched t that splits the traffic (0 < p < 1), in req/s."""

    thresholds_tokens: NDArray[np.float64]
    prfaas_rps: NDArray[np.float64]  # Theta_prfaas / p: min of the PrfaaS compute and link bounds
    pd_prefill_rps: NDArray[np.float64]  # Theta_pd-p / (1 - p)
    decode_rps: float  # Theta_pd-d, the same at every t


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure5:
    """Figure 5 of one plan: both panels and the optimum they mark."""

    title: str  # scenario, model and method
    local_instances: int
    threshold_tokens: float  # t*
    n_prfaas: int
    n_p: int
    n_d: int
    lambda_max_rps: float
    split: SplitPanel
    thresholds: ThresholdPanel
