"""How the coefficients of ember/ops/_erf.py were made (NOTE [erf kernels]): Chebyshev interpolation, at 40 digits
with mpmath, of the smooth functions the kernels evaluate, converted to powers of the kernel's variable.

``python tests/ops/erf_fit.py`` prints the tables; tests/ops/test_erf_kernels.py refits them and compares.
"""
from __future__ import annotations

import mpmath as mp
import numpy as np


def chebfit(f, lo: float, hi: float, n: int) -> np.ndarray:
    """Power-series coefficients (lowest first) of the degree-``n`` interpolant of ``f`` at the Chebyshev points
    of [lo, hi]."""
    k = np.arange(n + 1)
    nodes = [mp.cos(mp.pi * (mp.mpf(int(i)) + mp.mpf(0.5)) / (n + 1)) for i in k]
    mid, half = (mp.mpf(hi) + lo) / 2, (mp.mpf(hi) - lo) / 2
    vals = [f(mid + half * t) for t in nodes]
    cheb = []
    for j in range(n + 1):
        acc = mp.fsum(vals[i] * mp.cos(mp.pi * j * (mp.mpf(int(i)) + mp.mpf(0.5)) / (n + 1)) for i in range(n + 1))
        cheb.append(acc * (2 if j else 1) / (n + 1))
    # the power series in t = (v - mid) / half, then in v, in mpmath (the conversion loses nothing)
    t_series = [mp.mpf(0)] * (n + 1)
    basis = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    for _ in range(2, n + 1):
        prev, prev2 = basis[-1], basis[-2]
        nxt = [mp.mpf(0)] + [2 * c for c in prev]
        for i, c in enumerate(prev2):
            nxt[i] -= c
        basis.append(nxt)
    for j, cj in enumerate(cheb):
        for i, b in enumerate(basis[j]):
            t_series[i] += cj * b
    out = [mp.mpf(0)] * (n + 1)
    for i, ci in enumerate(t_series):  # (v - mid)^i / half^i expanded
        for m in range(i + 1):
            out[m] += ci * mp.binomial(i, m) * (-mid) ** (i - m) / half ** i
    return np.array([float(c) for c in out])


def _tanh_q(x):
    """erf(x) = tanh(x Q(|x|)): Q(x) = atanh(erf(x)) / x."""
    return 2 / mp.sqrt(mp.pi) if x == 0 else mp.atanh(mp.erf(x)) / x


def _erf_over_x(s):
    """erf(x) = x P(x^2): P(s) = erf(sqrt(s)) / sqrt(s)."""
    return 2 / mp.sqrt(mp.pi) if s == 0 else mp.erf(mp.sqrt(s)) / mp.sqrt(s)


def _erfinv_over_y(s):
    """erfinv(y) = y A(y^2): A(s) = erfinv(sqrt(s)) / sqrt(s)."""
    return mp.sqrt(mp.pi) / 2 if s == 0 else mp.erfinv(mp.sqrt(s)) / mp.sqrt(s)


def _scaled_erfcx(L):
    """erfc(a) = exp(-a^2) E(t) / (L + a) with t = (L - a) / (L + a): E as a function of t."""
    def f(t):
        a = L * (1 - t) / (1 + t)
        return mp.erfc(a) * mp.exp(a * a) * (L + a)
    return f


# name -> (function, lo, hi, degree); the ranges are those of the kernels' variables
FITS = {
    "TANH_Q32": (_tanh_q, 0.0, 4.5, 13),
    "ERF_SMALL64": (_erf_over_x, 0.0, 0.25, 11),
    "ERFC32": (_scaled_erfcx(3.0), (3.0 - 10.5) / (3.0 + 10.5), 1.0, 9),
    "ERFC64": (_scaled_erfcx(4.0), (4.0 - 27.5) / (4.0 + 27.5), 1.0, 22),
    "ERFINV_CENTRAL64": (_erfinv_over_y, 0.0, 0.5625, 22),
}


def fitted() -> dict:
    with mp.workdps(40):
        return {name: chebfit(f, lo, hi, n) for name, (f, lo, hi, n) in FITS.items()}


if __name__ == "__main__":
    np.set_printoptions(precision=17)
    for name, co in fitted().items():
        print(name, "=", tuple(float(c) for c in co))
