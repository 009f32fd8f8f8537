"""The root finders, in one place: Illinois regula falsi for a sign change of a smooth function
(the Eq. 7 crossing), and bisection of a monotone predicate (the largest rate meeting a TTFT
bound, the quantile of a mixture law)."""

from __future__ import annotations

from collections.abc import Callable


def illinois(f, a: float, b: float, fa: float, fb: float, *, xtol: float = 1e-3, maxiter: int = 100) -> float:
    """Root of f in [a, b] with f(a) f(b) < 0: regula falsi with the Illinois modification.

    Superlinear like Brent's method on smooth f, never leaves the bracket; written here because
    importing scipy.optimize costs more than the whole search.
    """
    side = 0
    for _ in range(maxiter):
        c = b - fb * (b - a) / (fb - fa)
        if not a < c < b and not b < c < a:
            c = 0.5 * (a + b)
        fc = f(c)
        if fc == 0.0 or abs(b - a) < xtol:
            return c
        if fc * fb < 0:
            a, fa = b, fb
            side = 0
        else:
            fa = fa / 2 if side == -1 else fa
            side = -1
        b, fb = c, fc
    return b


def bisect(holds: Callable[[float], bool], lo: float, hi: float, *, iterations: int,
           rtol: float = 0.0) -> tuple[float, float]:
    """Halve [lo, hi] ``iterations`` times (or until hi - lo <= rtol x hi), keeping ``holds`` true
    at lo and false at hi for a predicate that holds below some point and fails above it;
    returns the final (lo, hi)."""
    for _ in range(iterations):
        if hi - lo <= rtol * hi:
            break
        mid = 0.5 * (lo + hi)
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi
