"""Kernels of the erf family on arrays: erf, erfc, erfinv, and the normal CDF inside exact GELU.

# NOTE [erf kernels]
Each kernel is a few dozen NumPy passes, with no loop over elements or series terms. The polynomials are Chebyshev
interpolants of smooth functions, fitted with mpmath at 40 digits (tests/ops/erf_fit.py makes them;
tests/ops/test_erf_kernels.py refits them and checks the kernels against mpmath):

- float32 erf(x) = tanh(x Q(|x|)) with Q(a) = atanh(erf(a)) / a (degree 13 on [0, 4.5]; |x| is clipped to 4.5, where
  float32's erf is 1): one polynomial and a tanh for every x, about 2 ulp. The Gaussian CDF of exact GELU is the same
  curve: Phi(x) = (1 + erf(x / sqrt 2)) / 2 = sigmoid(2 atanh(erf(x / sqrt 2))) = sigmoid(x sqrt 2 Q(|x| / sqrt 2)).
- erfc(a), a >= 0, = exp(-a^2) E(t) / (L + a) with t = (L - a) / (L + a) in [-1, 1] (Weideman's variable: E is
  smooth and slowly varying out to infinity); float32: L = 3, degree 9, a clipped to 10.5 where erfc underflows;
  float64: L = 4, degree 22, a clipped to 27.5. exp(-a^2) is formed without a's rounding error being squared
  (float64 for float32 inputs; the head/tail split ``exp_neg_sq`` for float64). erfc(-a) = 2 - erfc(a).
- float64 erf(x) = x P(x^2) for |x| < 0.5 (degree 11), else sign(x) (1 - erfc(|x|)); erfc(x) = 1 - erf(x) there.
- erfinv: Winitzki's closed form (relative error ~2e-3), then three Halley steps on erf(x) - y (on
  (1 - y) - erfc(x) above 0.5, so that the tails keep their relative accuracy), in float64.
float16 computes in float32. Each kernel keeps nan, maps +-inf to its limits and keeps the sign of zero.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "erfc", "erfinv", "normal_cdf", "exp_neg_sq", "erf64", "erfc64", "erfinv64"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

TANH_Q32 = (1.1283793242169242, -1.385236553329274e-05, 0.10298461441929882, -0.00132460485461986,
            0.004196128767159053, -0.008795716814663356, 0.010608734346635682, -0.009342770181876051,
            0.005184530793395102, -0.0018059791708554848, 0.0003989924330572328, -5.462990875969808e-05,
            4.247360833700324e-06, -1.4379847348741992e-07)
ERF_SMALL64 = (1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131242,
               0.005223977625441806, -0.0008548327023363943, 0.00012055332969230665, -1.4925649162903559e-05,
               1.6462038363970583e-06, -1.636264690374604e-07, 1.4721521176389801e-08, -1.0958654538847351e-09)
ERFC32 = (1.0740069058441986, 0.8833944637484836, 0.5902284472024083, 0.31046651801320224, 0.11952707769183597,
          0.026837425744763773, -0.0012172093228500463, -0.0030796321469769255, -0.0004971422377149683,
          0.00033315035514392625)
ERFC64 = (1.095995661000491, 0.9765487290808821, 0.7732087022652375, 0.5408538313132207, 0.3308515878779825,
          0.17401093724042524, 0.07638151491000642, 0.026370053332541235, 0.0061120556477607425,
          0.00028095893420234937, -0.00045505263527494783, -0.0001768131875167485, -3.635338935865469e-06,
          1.8862141788750368e-05, 4.694725890285188e-06, -1.4269062796438086e-06, -8.464456189715969e-07,
          7.912789673646787e-08, 1.2408010985923537e-07, -3.5265157733176998e-09, -1.5224847883687636e-08,
          6.973176548183894e-10, 8.892365082453874e-10)
ERFINV_CENTRAL64 = (0.886226925452758, 0.23201366653465125, 0.12755617530661215, 0.08655212911592704,
                    0.06495962598350377, 0.051730951114390904, 0.042845600431760174, 0.036297310540060225,
                    0.03404613272455681, 0.0030275576869176726, 0.22919027967512104, -1.2873837861578559,
                    6.676542529103628, -26.913167854141214, 86.96105534586911, -223.4221930057315,
                    454.04048890852016, -720.2795082505946, 873.6892775467288, -783.0429354285304,
                    489.3701313188116, -190.8028518654794, 35.109771658506155)
# (L, the largest |x| the fit covers) of the erfc fits
ERFC32_GEO = (3.0, 10.5)
ERFC64_GEO = (4.0, 27.5)
TANH_Q32_MAX = 4.5


def _horner(co: tuple, v: np.ndarray) -> np.ndarray:
    """sum co[k] v^k (lowest first), in v's dtype, into one fresh array."""
    dt = v.dtype.type
    p = v * dt(co[-1])
    p += dt(co[-2])
    for c in co[-3::-1]:
        p *= v
        p += dt(c)
    return p


def exp_neg_sq(x: np.ndarray) -> np.ndarray:
    """exp(-x*x) in float64 without the rounding error of forming x*x (x split into a short head and a tail)."""
    hi = np.round(x * 4096.0) / 4096.0
    return np.exp(-hi * hi) * np.exp(-(x - hi) * (x + hi))


def _erfc_pos(a: np.ndarray, co: tuple, geo: tuple) -> np.ndarray:
    """erfc(a) for a >= 0 (nan kept) of the fit ``co`` (NOTE [erf kernels]), in a's dtype."""
    L, top = geo
    a = np.minimum(a, top)
    den = a + L
    t = L - a
    t /= den
    p = _horner(co, t)
    p /= den
    if a.dtype == _F32:
        a64 = a.astype(_F64)
        np.multiply(a64, a64, out=a64)
        np.negative(a64, out=a64)
        np.exp(a64, out=a64)
        a64 *= p
        return a64.astype(_F32)
    p *= exp_neg_sq(a)
    return p


def _erf32(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    np.minimum(a, TANH_Q32_MAX, out=a)
    q = _horner(TANH_Q32, a)
    q *= np.copysign(a, x, out=a)
    return np.tanh(q, out=q)


# NOTE [no data-dependent branches]: in this NumPy, np.where and boolean-mask indexing on masks that follow the data
# (signs, ranges) run ~7x slower than on regular masks (a branch per element, mispredicted: 320 µs for 64k floats
# against 36 µs for an arithmetic select), so these kernels compute every branch on every element (clipped into
# its range) and select by arithmetic.
def _select(cond: np.ndarray, yes: np.ndarray, no: np.ndarray) -> np.ndarray:
    """``np.where(cond, yes, no)`` for finite ``yes`` by arithmetic: yes * c + no * (1 - c) takes either operand
    exactly (nan in ``no`` stays); written into ``no``."""
    c = cond.astype(no.dtype)
    yes = yes * c
    np.subtract(1.0, c, out=c)
    no *= c
    no += yes
    return no


def _erfc_signed(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """erfc(x) from e = erfc(|x|): 2 - e for negative x (into e)."""
    return _select(x < 0.0, 2.0 - e, e)


def _erfc32(x: np.ndarray) -> np.ndarray:
    return _erfc_signed(x, _erfc_pos(np.abs(x), ERFC32, ERFC32_GEO))


def erfc64(x: np.ndarray) -> np.ndarray:
    return _erfc_signed(x, _erfc_pos(np.abs(x), ERFC64, ERFC64_GEO))


def erf64(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    xs = np.clip(x, -0.5, 0.5)
    small = xs * _horner(ERF_SMALL64, xs * xs)
    big = _erfc_pos(a, ERFC64, ERFC64_GEO)
    np.subtract(1.0, big, out=big)
    np.copysign(big, x, out=big)
    return _select(a < 0.5, small, big)


def erfinv64(y: np.ndarray) -> np.ndarray:
    """Central |y| <= 0.75: y A(y^2); tails: Winitzki's start and two Halley steps on (1 - |y|) - erfc(x)."""
    a = np.abs(y)
    c = np.minimum(a, 0.75)
    central = c * _horner(ERFINV_CENTRAL64, c * c)
    t = np.clip(a, 0.75, 1.0 - 2.0 ** -53)
    w = np.log1p(-t) + np.log1p(t)
    k = 2.0 / (math.pi * 0.147) + 0.5 * w
    x = np.sqrt(np.sqrt(k * k - w / 0.147) - k)
    rest = 1.0 - t
    L = ERFC64_GEO[0]
    for _ in range(2):
        e = exp_neg_sq(x)
        den = x + L
        r = _horner(ERFC64, (L - x) / den)
        r /= den
        r *= e
        np.subtract(rest, r, out=r)  # (1 - |y|) - erfc(x)
        x = x - r / (_TWO_OVER_SQRT_PI * e + x * r)
    out = _select(a <= 0.75, central, x)
    out[a == 1.0] = np.inf  # (two exact values; rare)
    out[~(a <= 1.0)] = np.nan
    return np.copysign(out, y, out=out)


def _any_rank(kernel):
    """``kernel`` (written for arrays of rank >= 1: masks, out=) on 0-d arrays too."""
    def run(x):
        return kernel(x.reshape(1)).reshape(()) if x.ndim == 0 else kernel(x)
    run.__name__ = kernel.__name__
    return run


erf64, erfc64, erfinv64 = _any_rank(erf64), _any_rank(erfc64), _any_rank(erfinv64)


def _by_dtype(f32, f64):
    """A kernel for any float dtype: float32 and float64 kernels, float16 through float32."""
    @_any_rank
    def run(x):
        with np.errstate(all="ignore"):
            dt = x.dtype
            if dt == _F64:
                return f64(x)
            if dt == _F32:
                return f32(x)
            return f32(x.astype(_F32)).astype(dt)
    return run


def _erfinv32(y):
    return erfinv64(y.astype(_F64)).astype(_F32)


def _normal_cdf32(x):
    """Phi(x) = sigmoid(x sqrt(2) Q(|x| / sqrt 2)) (NOTE [erf kernels]), x's |x| clipped where Phi is 0 or 1."""
    a = np.abs(x)
    a *= 1.0 / _SQRT2
    np.minimum(a, TANH_Q32_MAX, out=a)
    q = _horner(TANH_Q32, a)
    q *= np.copysign(a, x, out=a)
    q *= -2.0
    np.exp(q, out=q)
    q += 1.0
    return np.reciprocal(q, out=q)


def _normal_cdf64(x):
    return 0.5 * (1.0 + erf64(x * (1.0 / _SQRT2)))


erf = _by_dtype(_erf32, erf64)
erfc = _by_dtype(_erfc32, erfc64)
erfinv = _by_dtype(_erfinv32, erfinv64)
normal_cdf = _by_dtype(_normal_cdf32, _normal_cdf64)
