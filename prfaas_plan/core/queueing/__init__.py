"""Queueing formulas for waits in front of prefill instances and links.

M/M/c (Erlang C) exactly, M/G/1 exactly (Pollaczek-Khinchine), M/G/c and G/G/c by the
Lee-Longton / Allen-Cunneen / Kingman two-moment approximations. All times are seconds, all
rates requests/s. Every function broadcasts its array arguments (numpy rules) and returns a
Python ``float`` when all inputs are scalars.

Stability contract: the waits of an open queue are finite only when the utilisation
ρ = λ E[S] / c is below 1. No function here returns ``inf`` or NaN for an overloaded queue;
each one raises ``ValueError("unstable: utilisation 1.05 >= 1")`` instead (for array input, the
largest offending ρ is named). Callers that may be overloaded compute :func:`utilisation` first
and mask (or report) the unstable candidates before asking for waits.

Symbols: λ arrival rate, μ = 1/E[S] service rate, c servers, a = λ/μ offered load (Erlangs),
ρ = a/c utilisation, C(c, a) Erlang C (probability an arrival waits), W_q mean wait in queue,
c_s² and c_a² the squared coefficients of variation (SCV) of service and inter-arrival times.

Sources: L. Kleinrock, *Queueing Systems Vol. 1* (1975), ch. 3.5 (M/M/c) and 5 (M/G/1);
D. Gross, C. Harris et al., *Fundamentals of Queueing Theory* (4th ed., 2008), §2.3 (M/M/c wait
distribution) and §3.2 (Pollaczek-Khinchine); A. M. Lee and P. A. Longton, "Queueing processes
associated with airline passenger check-in", Oper. Res. Q. 10 (1959) 56-71; A. O. Allen,
*Probability, Statistics and Queueing Theory* (2nd ed., 1990), Allen-Cunneen formula;
J. F. C. Kingman, "The single server queue in heavy traffic", Proc. Camb. Phil. Soc. 57 (1961)
902-904; W. Whitt, "Approximations for the GI/G/m queue", Prod. Oper. Manag. 2 (1993) 114-161.
"""

from prfaas_plan.core.queueing.approx import ggc_wait, ggc_wait_quantile, mgc_wait, mgc_wait_quantile
from prfaas_plan.core.queueing.exact import erlang_c, mg1_wait, mmc_wait, mmc_wait_quantile, utilisation

__all__ = [
    "erlang_c",
    "ggc_wait",
    "ggc_wait_quantile",
    "mg1_wait",
    "mgc_wait",
    "mgc_wait_quantile",
    "mmc_wait",
    "mmc_wait_quantile",
    "utilisation",
]
