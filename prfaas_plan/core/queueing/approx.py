"""Two-moment approximations: M/G/c (Lee-Longton) and G/G/c (Allen-Cunneen, Kingman for c = 1)
mean waits and wait quantiles, built on the exact M/M/c results of :mod:`.exact`. Conventions,
symbols (c_s², c_a² the SCVs of service and inter-arrival times) and sources in
:mod:`prfaas_plan.core.queueing`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.queueing.exact import (
    FloatOrArray,
    as_output,
    checked_probability,
    mmc_parts,
    mmc_wait,
    nonnegative,
    tail_quantile,
)

__all__ = ["ggc_wait", "ggc_wait_quantile", "mgc_wait", "mgc_wait_quantile"]


def _variability_factor(*scvs: tuple[str, ArrayLike]) -> NDArray[np.float64]:
    total = sum(nonnegative(name, v) for name, v in scvs)
    return np.asarray(total, dtype=np.float64) / 2.0


def mgc_wait(lam: ArrayLike, mean_s: ArrayLike, scv: ArrayLike, c: ArrayLike = 1) -> FloatOrArray:
    """Mean wait in queue of an M/G/c queue (Lee-Longton approximation), seconds.

    Parameters
    ----------
    lam : float or array
        Poisson arrival rate λ, requests/s.
    mean_s : float or array
        Mean service time E[S], seconds.
    scv : float or array
        Squared coefficient of variation of the service time, c_s² = Var S / E[S]² (0 for
        deterministic, 1 for exponential).
    c : int or array of int
        Number of servers.

    Returns
    -------
    float or array
        W_q ≈ (1 + c_s²)/2 · W_q(M/M/c).

    Notes
    -----
    Lee & Longton (1959); the c_a² = 1 case of Allen-Cunneen. Exact for c = 1 (it is then the
    Pollaczek-Khinchine formula) and for exponential service (c_s² = 1); for c > 1 it is an
    approximation that is good in heavy traffic and typically within ~10% for moderate
    loads (Whitt 1993). For M/D/c at light load it overestimates the wait.

    Examples
    --------
    >>> round(mgc_wait(0.7, 1.0, 0.0, 1), 9)  # M/D/1, equals P-K
    1.166666667
    """
    factor = _variability_factor(("scv_arrival", 1.0), ("scv", scv))
    return as_output(np.asarray(factor * mmc_wait(lam, mean_s, c)))


def mgc_wait_quantile(
    q: ArrayLike, lam: ArrayLike, mean_s: ArrayLike, scv: ArrayLike, c: ArrayLike = 1
) -> FloatOrArray:
    """q-quantile of the M/G/c wait in queue (scaled-exponential approximation), seconds.

    Parameters
    ----------
    q : float or array
        Quantile level in [0, 1).
    lam, mean_s, scv, c
        As in :func:`mgc_wait`.

    Notes
    -----
    Approximation: keep the M/M/c shape, an atom 1 - C at zero and an exponential tail, with the
    same probability of waiting C = C(c, a), and scale the tail so the mean equals the
    Lee-Longton mean of :func:`mgc_wait`:

        P(W_q > x) ≈ C exp(-x C / W_q),   W_q = (1 + c_s²)/2 · W_q(M/M/c),
        x_q = (W_q / C) ln(C / (1 - q))   for q > 1 - C, else 0.

    It is exact for M/M/c. For c = 1, C = ρ holds for every service law, and the exponential tail
    is the heavy-traffic limit (Kingman 1961); at moderate load it is a rough guide to P90/P99
    (it understates the tail of heavy-tailed service and overstates that of deterministic
    service). Use the simulator when a tail quantile drives a decision.

    Examples
    --------
    >>> from prfaas_plan.core.queueing.exact import mmc_wait_quantile
    >>> mgc_wait_quantile(0.9, 0.5, 1.0, 1.0, 1) == mmc_wait_quantile(0.9, 0.5, 1.0, 1)
    True
    """
    q_a = checked_probability(q)
    factor = _variability_factor(("scv_arrival", 1.0), ("scv", scv))
    p_wait, tail_mean = mmc_parts(lam, mean_s, c)
    return as_output(tail_quantile(q_a, p_wait, factor * tail_mean))


def ggc_wait(
    lam: ArrayLike,
    mean_s: ArrayLike,
    scv_service: ArrayLike,
    scv_arrival: ArrayLike,
    c: ArrayLike = 1,
) -> FloatOrArray:
    """Mean wait in queue of a G/G/c queue (Allen-Cunneen / Kingman approximation), seconds.

    Parameters
    ----------
    lam : float or array
        Arrival rate λ, requests/s.
    mean_s : float or array
        Mean service time E[S], seconds.
    scv_service : float or array
        c_s², squared CV of the service time.
    scv_arrival : float or array
        c_a², squared CV of the inter-arrival time (1 for Poisson; cv² of a Gamma renewal
        process such as :func:`prfaas_plan.sim.stations.gamma_arrivals`; > 1 is bursty).
    c : int or array of int
        Number of servers.

    Returns
    -------
    float or array
        W_q ≈ (c_a² + c_s²)/2 · W_q(M/M/c).

    Notes
    -----
    Allen-Cunneen (Allen 1990); for c = 1 this is Kingman's heavy-traffic formula
    W_q ≈ ρ/(1-ρ) · (c_a² + c_s²)/2 · E[S] (Kingman 1961). Renewal arrivals are assumed
    (no correlation between successive gaps). Exact only for M/M/c and M/G/1; the error grows
    at light load with c_a² far from 1 (Whitt 1993).

    Examples
    --------
    >>> ggc_wait(0.5, 1.0, 1.0, 1.0, 1) == mmc_wait(0.5, 1.0, 1)
    True
    >>> round(ggc_wait(0.5, 1.0, 1.0, 4.0, 1), 9)  # bursty arrivals, cv_a = 2
    2.5
    """
    factor = _variability_factor(("scv_service", scv_service), ("scv_arrival", scv_arrival))
    return as_output(np.asarray(factor * mmc_wait(lam, mean_s, c)))


def ggc_wait_quantile(
    q: ArrayLike,
    lam: ArrayLike,
    mean_s: ArrayLike,
    scv_service: ArrayLike,
    scv_arrival: ArrayLike,
    c: ArrayLike = 1,
) -> FloatOrArray:
    """q-quantile of the G/G/c wait in queue, by the same scaled-exponential approximation.

    P(W_q > x) ≈ C exp(-x C / W_q) with C = C(c, λ E[S]) and W_q from :func:`ggc_wait`; see
    :func:`mgc_wait_quantile` for the caveats. With non-Poisson arrivals, the probability of
    waiting itself differs from Erlang C, so this is coarser still than the M/G/c version.

    Examples
    --------
    >>> round(ggc_wait_quantile(0.9, 0.5, 1.0, 1.0, 1.0, 1), 6)
    3.218876
    """
    q_a = checked_probability(q)
    factor = _variability_factor(("scv_service", scv_service), ("scv_arrival", scv_arrival))
    p_wait, tail_mean = mmc_parts(lam, mean_s, c)
    return as_output(tail_quantile(q_a, p_wait, factor * tail_mean))
