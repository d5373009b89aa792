# R(a, x) = log Gamma(a + x) - log Gamma(a), the rising factorial's logarithm, which every
# conjugate predictive and evidence is made of: inline for the scoring kernels (_jll.pxi,
# _jll_gaussian.pxi), and over arrays for Python (_tables.log_rising, through _bayes.log_rising).
# Below a = 30 a difference of lgammas; from there Stirling's series differenced term by term,
# since the difference of the lgammas of a large a and a small x would lose about log10(a / x)
# digits (the series' terms to z**-9 leave an error below 1e-19 there).
from libc.math cimport lgamma, log1p


cdef inline double _stirling_tail(double t) noexcept nogil:
    """log Gamma(z) - [(z - 1/2) log z - z + log(2 pi) / 2] for z = 1 / t >= 30 (Abramowitz &
    Stegun 6.1.41): 1/(12 z) - 1/(360 z^3) + 1/(1260 z^5) - 1/(1680 z^7) + 1/(1188 z^9)."""
    cdef double t2 = t * t
    return t * (1.0 / 12 - t2 * (1.0 / 360 - t2 * (1.0 / 1260 - t2 * (1.0 / 1680 - t2 / 1188))))


cdef inline double _log_rising(double a, double log_a, double x) noexcept nogil:
    """R(a, x) = log Gamma(a + x) - log Gamma(a), for a > 0 (log_a its log) and x >= 0, to a
    few ulps of the result also when a is huge beside x."""
    cdef double inv_a
    if a < 30.0:
        return lgamma(a + x) - lgamma(a)
    # (a + x - 1/2) log(a + x) - (a - 1/2) log(a) - x with log(a + x) = log(a) + log1p(x / a):
    # no term of size a log(a) cancels, and one logarithm is computed
    inv_a = 1.0 / a
    return ((a + x - 0.5) * log1p(x * inv_a) + x * (log_a - 1.0)
            + (_stirling_tail(1.0 / (a + x)) - _stirling_tail(inv_a)))
