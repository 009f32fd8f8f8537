"""Request length distributions: L = uncached input length in tokens (docs/model.md#routing-by-threshold).

Every distribution answers, vectorised over the threshold t (tokens):

- ``tail_prob(t)``  = p       = P(L > t)
- ``mean_above(t)`` = l_long  = E[L | L > t]
- ``mean_below(t)`` = l_short = E[L | L <= t]
- ``expect_above(f, t)`` = E[f(L) | L > t] and ``expect_below(f, t)`` = E[f(L) | L <= t], e.g.
  E[T_prefill(L) | L > t] for the ``exact`` throughput method;

and draws whole-token lengths for the simulator with ``sample(rng, n)``.

Conventions
-----------
- A scalar t gives a Python float, an array t an ndarray of t's shape.
- On a conditioning set of probability zero the answer is the limit at the support edge:
  ``mean_above(t >= hi) = hi``, ``mean_below(t < lo) = lo``, and ``f(hi)`` / ``f(lo)`` for the
  ``expect_*`` methods. No method returns NaN; the only infinite answer is ``mean_above(inf)`` of
  a distribution with unbounded support (its ``hi`` is inf).
- Parametric distributions are continuous (a length is a real number of tokens), so
  P(L <= t) = P(L < t); ``sample`` rounds to the nearest whole token (at least 1).
- ``Empirical`` is exact over its finite, weighted sample.
"""


from prfaas_plan.core.lengths.base import FloatOrArray, LengthDistribution, LengthFunction
from prfaas_plan.core.lengths.discrete import Empirical, Fixed
from prfaas_plan.core.lengths.parametric import Gamma, TruncatedLogNormal, Uniform

__all__ = ["Empirical", "Fixed", "FloatOrArray", "Gamma", "LengthDistribution", "LengthFunction",
           "TruncatedLogNormal", "Uniform"]
