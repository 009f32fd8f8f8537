"""Exact queueing results: utilisation, Erlang C, M/M/c waits (mean and quantiles), M/G/1 mean
wait (Pollaczek-Khinchine); the argument checks shared with :mod:`.approx`. Conventions, symbols
(λ, μ, c, a = λ/μ, ρ = a/c, C(c, a), W_q) and sources in :mod:`prfaas_plan.core.queueing`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["erlang_c", "mg1_wait", "mmc_wait", "mmc_wait_quantile", "utilisation"]

FloatOrArray = float | NDArray[np.float64]

# Relative slack when checking E[S²] >= E[S]² (Jensen), so a deterministic service time whose
# second moment was computed as mean*mean is not rejected for a rounding error.
_JENSEN_RTOL = 1e-9


def as_output(x: NDArray[np.float64]) -> FloatOrArray:
    """0-d arrays become Python floats (the numpy-financial convention)."""
    return float(x) if x.ndim == 0 else x


def _servers(c: ArrayLike) -> NDArray[np.float64]:
    c_arr = np.asarray(c, dtype=np.float64)
    if not np.all((c_arr >= 1) & (c_arr == np.floor(c_arr))):
        raise ValueError(f"number of servers must be a whole number >= 1, got {c!r}")
    return c_arr


def nonnegative(name: str, x: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(arr >= 0):  # also rejects NaN
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return arr


def _positive(name: str, x: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return arr


def checked_probability(q: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(q, dtype=np.float64)
    if not np.all((arr >= 0) & (arr < 1)):
        raise ValueError(f"quantile level q must lie in [0, 1), got {q!r}")
    return arr


def _check_stable(rho: NDArray[np.float64]) -> None:
    if rho.size and np.max(rho) >= 1:
        raise ValueError(f"unstable: utilisation {float(np.max(rho)):.3g} >= 1")


def utilisation(lam: ArrayLike, mean_s: ArrayLike, c: ArrayLike = 1) -> FloatOrArray:
    """Server utilisation ρ = λ E[S] / c of a c-server queue.

    Parameters
    ----------
    lam : float or array
        Arrival rate λ, requests/s (>= 0).
    mean_s : float or array
        Mean service time E[S] = 1/μ, seconds (> 0).
    c : int or array of int
        Number of identical servers (>= 1).

    Returns
    -------
    float or array
        ρ, dimensionless. The queue is stable (finite waits) iff ρ < 1; the wait functions of
        this module raise ``ValueError`` otherwise, so check this first. Never raises for ρ >= 1.

    Examples
    --------
    >>> utilisation(3.0, 1.0, 4)
    0.75
    """
    lam_a = nonnegative("arrival rate", lam)
    mean_a = _positive("mean service time", mean_s)
    return as_output(np.asarray(lam_a * mean_a / _servers(c)))


def _erlang_c_scalar(c: int, a: float) -> float:
    b = 1.0
    for k in range(1, c + 1):
        ab = a * b
        b = ab / (k + ab)
    return min(1.0, max(0.0, c * b / (c - a * (1.0 - b))))


def _erlang_c_array(c: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray[np.float64]:
    b = np.ones_like(a)
    for k in range(1, int(np.max(c)) + 1 if c.size else 1):
        ab = a * b
        b = np.where(k <= c, ab / (k + ab), b)
    return np.clip(c * b / (c - a * (1.0 - b)), 0.0, 1.0)


def erlang_c(c: ArrayLike, offered_load: ArrayLike) -> FloatOrArray:
    """Erlang C: probability that an arrival to an M/M/c queue has to wait.

    Parameters
    ----------
    c : int or array of int
        Number of servers (>= 1).
    offered_load : float or array
        Offered load a = λ/μ = λ E[S] in Erlangs (>= 0); must satisfy ρ = a/c < 1.

    Returns
    -------
    float or array
        C(c, a) in [0, 1].

    Raises
    ------
    ValueError
        If a/c >= 1 (unstable), c is not a whole number >= 1, or a < 0.

    Notes
    -----
    Computed from the Erlang B recursion, which is numerically stable for hundreds of servers
    (no factorials, no powers):

        B(0, a) = 1,   B(k, a) = a B(k-1, a) / (k + a B(k-1, a)),
        C(c, a) = c B(c, a) / (c - a (1 - B(c, a))).

    It equals the textbook form (a^c/c!)(c/(c-a)) / (Σ_{k<c} a^k/k! + (a^c/c!)(c/(c-a)))
    (Erlang's C formula, Kleinrock 1975, §3.5). The loop runs max(c) times over the broadcast arrays.

    Examples
    --------
    M/M/2 at λ = 1.5, μ = 1: C = 4.5/7.

    >>> round(erlang_c(2, 1.5), 9)
    0.642857143
    """
    c_arr = _servers(c)
    a_arr = nonnegative("offered load", offered_load)
    c_arr, a_arr = np.broadcast_arrays(c_arr, a_arr)
    _check_stable(a_arr / c_arr)
    if c_arr.ndim == 0:
        return _erlang_c_scalar(int(c_arr), float(a_arr))
    return _erlang_c_array(c_arr, a_arr)


def mmc_parts(lam: ArrayLike, mean_s: ArrayLike, c: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(C, 1/(cμ - λ)) of M/M/c, broadcast; raises when unstable."""
    lam_a = nonnegative("arrival rate", lam)
    mean_a = _positive("mean service time", mean_s)
    c_a = _servers(c)
    lam_a, mean_a, c_a = np.broadcast_arrays(lam_a, mean_a, c_a)
    a = lam_a * mean_a
    p_wait = np.asarray(erlang_c(c_a, a), dtype=np.float64)
    # 1/(cμ - λ) written without dividing by E[S], so it is exact as E[S] varies.
    return p_wait, mean_a / (c_a - a)


def mmc_wait(lam: ArrayLike, mean_service_s: ArrayLike, c: ArrayLike = 1) -> FloatOrArray:
    """Mean wait in queue W_q of an M/M/c queue, seconds.

    Parameters
    ----------
    lam : float or array
        Poisson arrival rate λ, requests/s.
    mean_service_s : float or array
        Mean of the exponential service time, E[S] = 1/μ, seconds.
    c : int or array of int
        Number of servers.

    Returns
    -------
    float or array
        W_q = C(c, a) / (cμ - λ), seconds (time from arrival to start of service, averaged over
        all arrivals, including those that do not wait).

    Raises
    ------
    ValueError
        If ρ >= 1 (see the module's stability contract) or an input is out of range.

    Examples
    --------
    M/M/1 at λ = 0.5, μ = 1 has W_q = ρ/(μ - λ) = 1 s; M/M/2 at λ = 1.5 has W_q = C/0.5.

    >>> mmc_wait(0.5, 1.0, 1)
    1.0
    >>> round(mmc_wait(1.5, 1.0, 2), 6)
    1.285714
    """
    p_wait, tail_mean = mmc_parts(lam, mean_service_s, c)
    return as_output(np.asarray(p_wait * tail_mean))


def tail_quantile(
    q: NDArray[np.float64], p_wait: NDArray[np.float64], tail_mean: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Quantile of W with P(W > x) = p_wait exp(-x / tail_mean)."""
    ratio = np.divide(p_wait, 1.0 - q)
    return np.asarray(tail_mean * np.log(np.maximum(ratio, 1.0)))


def mmc_wait_quantile(q: ArrayLike, lam: ArrayLike, mean_service_s: ArrayLike, c: ArrayLike = 1) -> FloatOrArray:
    """q-quantile of the waiting time in queue of an M/M/c (FCFS) queue, seconds.

    Parameters
    ----------
    q : float or array
        Quantile level in [0, 1), e.g. 0.9 for P90.
    lam, mean_service_s, c
        As in :func:`mmc_wait`.

    Returns
    -------
    float or array
        x_q with P(W_q <= x_q) = q; 0 when q <= 1 - C (that share of arrivals does not wait).

    Notes
    -----
    The FCFS M/M/c wait has an atom 1 - C at zero and an exponential tail (Gross & Harris 2008,
    §2.3): P(W_q > x) = C exp(-(cμ - λ) x), hence

        x_q = ln(C / (1 - q)) / (cμ - λ)   for q > 1 - C, else 0.

    Examples
    --------
    M/M/1, λ = 0.5, μ = 1: C = ρ = 0.5, so the median is 0 and P90 = ln(5)/0.5.

    >>> mmc_wait_quantile(0.5, 0.5, 1.0, 1)
    0.0
    >>> round(mmc_wait_quantile(0.9, 0.5, 1.0, 1), 6)
    3.218876
    """
    q_a = checked_probability(q)
    p_wait, tail_mean = mmc_parts(lam, mean_service_s, c)
    return as_output(tail_quantile(q_a, p_wait, tail_mean))


def mg1_wait(lam: ArrayLike, mean_s: ArrayLike, second_moment_s2: ArrayLike) -> FloatOrArray:
    """Mean wait in queue of an M/G/1 queue (Pollaczek-Khinchine), seconds.

    Parameters
    ----------
    lam : float or array
        Poisson arrival rate λ, requests/s.
    mean_s : float or array
        Mean service time E[S], seconds.
    second_moment_s2 : float or array
        Second moment of the service time E[S²], s² (not the variance: E[S²] = Var S + E[S]²).

    Returns
    -------
    float or array
        W_q = λ E[S²] / (2 (1 - ρ)), ρ = λ E[S].

    Raises
    ------
    ValueError
        If ρ >= 1, or E[S²] < E[S]² (impossible, usually a variance passed by mistake).

    Notes
    -----
    Exact for any service distribution (Kleinrock 1975, ch. 5; Gross & Harris 2008, §3.2).
    Equivalently W_q = ρ E[S] (1 + c_s²) / (2 (1 - ρ)).

    Examples
    --------
    M/D/1 with λ = 0.7, D = 1 s: W_q = 0.7 / (2 x 0.3).

    >>> round(mg1_wait(0.7, 1.0, 1.0), 9)
    1.166666667
    """
    lam_a = nonnegative("arrival rate", lam)
    mean_a = _positive("mean service time", mean_s)
    m2 = nonnegative("second moment of service time", second_moment_s2)
    if not np.all(m2 >= mean_a * mean_a * (1.0 - _JENSEN_RTOL)):
        raise ValueError("second moment E[S^2] is below E[S]^2 (was a variance passed?)")
    rho = np.asarray(lam_a * mean_a)
    _check_stable(rho)
    return as_output(np.asarray(lam_a * m2 / (2.0 * (1.0 - rho))))
