"""Special-function kernels on float64 arrays, NumPy only: lgamma, digamma, polygamma, i0, i1.

Each is written from its classical expansions:
- lgamma: Stirling's series for x >= 15; below, the Taylor series at 2 (coefficients from zeta values) after the
  recurrence Gamma(x+1) = x Gamma(x) moves x into [1.5, 2.5) (so the zeros at 1 and 2 keep full relative accuracy);
  the reflection formula for x < 0.5;
- digamma / polygamma: the recurrence psi^(n)(x) = psi^(n)(x+1) - (-1)^n n! / x^(n+1) up to x >= 15 + n, then the
  asymptotic series in Bernoulli numbers; psi uses reflection for negative x, polygamma sums the recurrence
  (exact for negative non-integers as well, as the Hurwitz zeta sum);
- i0 / i1: the power series of positive terms for |x| <= 30, the Hankel asymptotic expansion beyond.
Poles and infinities follow torch's values.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)
# Bernoulli numbers B_2 .. B_30
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
        854513 / 138, -236364091 / 2730, 8553103 / 6, -23749461029 / 870, 8615841276005 / 14322)
_STIRLING = tuple(b / ((2 * k + 1) * (2 * k + 2)) for k, b in enumerate(_B2K[:8]))  # B_2k / (2k (2k-1))
_SHIFT = 15.0


def _sinpi(x):
    """sin(pi x) with the argument reduced exactly first (no loss for large |x|)."""
    r = np.remainder(x, 2.0)  # in [0, 2)
    return np.sin(np.pi * r)


def _tanpi(x):
    r = np.remainder(x, 1.0)  # tan has period 1
    return np.tan(np.pi * r)


def _stirling_lgamma(x):
    """lgamma for x >= 15."""
    inv = 1.0 / x
    inv2 = inv * inv
    series = np.zeros_like(x)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series * inv


def _zeta_minus_one(k: int) -> float:
    """zeta(k) - 1 = sum_{n>=2} n^-k by Euler-Maclaurin after 200 terms (k >= 2)."""
    n = 200
    head = math.fsum(m ** -k for m in range(2, n))
    tail = n ** (1 - k) / (k - 1) + 0.5 * n ** -k + k * n ** (-k - 1) / 12 - k * (k + 1) * (k + 2) * n ** (-k - 3) / 720
    return head + tail


_EULER_GAMMA = 0.5772156649015329
# lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k, |z| <= 1/2: about 4^-k per term
_LG2 = (1.0 - _EULER_GAMMA,) + tuple((-1) ** k * _zeta_minus_one(k) / k for k in range(2, 30))


def _lgamma_near2(z):
    """lgamma(2 + z) for |z| <= 1/2 (no cancellation near its zeros at z = -1, 0)."""
    total = np.zeros_like(z)
    for c in reversed(_LG2):
        total = (total + c) * z
    return total


def _lgamma_pos(x):
    """lgamma for x >= 0.5 (finite): the series at 2 for x < 15, shifted into [1.5, 2.5) by the recurrence;
    Stirling's series beyond."""
    out = np.empty_like(x)
    big = x >= _SHIFT
    out[big] = _lgamma_big(x[big])
    xs = x[~big]
    m = np.floor(xs - 1.5)  # shifts: x - m in [1.5, 2.5); m = -1 for x in [0.5, 1.5)
    base = xs - m
    val = _lgamma_near2(base - 2.0)
    low = m < 0
    val[low] -= np.log(xs[low])  # lgamma(x) = lgamma(x + 1) - log(x)
    prod = np.ones_like(xs)
    for k in range(1, int(m.max()) + 1 if xs.size else 0):
        prod = np.where(k <= m, prod * (base + (k - 1)), prod)  # (x-1)(x-2)...(x-m), all factors >= 1.5
    out[~big] = val + np.log(prod)
    return out


def _lgamma_big(x):
    """lgamma for x >= 15."""
    return _stirling_lgamma(x)


def lgamma(x: np.ndarray) -> np.ndarray:
    x = _B.asarray(x, np.float64)
    out = np.full_like(x, np.inf)
    fin = np.isfinite(x)
    out[np.isnan(x)] = np.nan
    pos = fin & (x >= 0.5)
    out[pos] = _lgamma_pos(x[pos])
    neg = fin & (x < 0.5)
    if neg.any():
        xn = x[neg]
        s = np.abs(_sinpi(xn))
        pole = (s == 0) | (xn == np.floor(xn))
        with np.errstate(divide="ignore"):
            val = _LOG_PI - np.log(np.where(pole, 1.0, s)) - _lgamma_pos(1.0 - xn)
        out[neg] = np.where(pole, np.inf, val)
    return out


def _psi_series(x, n: int):
    """psi^(n)(x) for x >= 15 + n by the asymptotic series."""
    inv = 1.0 / x
    if n == 0:
        inv2 = inv * inv
        s = np.zeros_like(x)
        for k in range(len(_B2K[:10]), 0, -1):
            s = s * inv2 + _B2K[k - 1] / (2 * k)
        return np.log(x) - 0.5 * inv - s * inv2
    # (-1)^(n+1) [ (n-1)!/x^n + n!/(2 x^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! x^(2k+n)) ]
    total = math.factorial(n - 1) * inv ** n + math.factorial(n) * 0.5 * inv ** (n + 1)
    inv2 = inv * inv
    term_pow = inv ** n
    for k in range(1, len(_B2K) + 1):
        term_pow = term_pow * inv2
        coef = _B2K[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        total = total + coef * term_pow
    return total if n % 2 == 1 else -total


def _shifted(x, n: int):
    """psi^(n)(x) for finite x that is not a pole: recurrence up to 15 + n, then the series."""
    target = _SHIFT + n
    steps = np.maximum(np.ceil(target - x), 0.0)
    acc = np.zeros_like(x)
    sign = -1.0 if n == 0 else (1.0 if n % 2 == 1 else -1.0)  # psi(x) = psi(x+1) - 1/x; psi^(n): (-1)^(n+1) n!
    fact = math.factorial(n)
    xk = x.copy()
    for k in range(int(steps.max()) if steps.size else 0):
        live = k < steps
        acc = np.where(live, acc + 1.0 / xk ** (n + 1), acc)
        xk = np.where(live, xk + 1.0, xk)
    return _psi_series(xk, n) + sign * fact * acc


def digamma(x: np.ndarray) -> np.ndarray:
    x = _B.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    fin = np.isfinite(x)
    out[x == np.inf] = np.inf
    zero = x == 0
    out[zero] = np.where(np.signbit(x[zero]), np.inf, -np.inf)
    pos = fin & (x > 0)
    out[pos] = _shifted(x[pos], 0)
    neg = fin & (x < 0) & (x != np.floor(x))
    if neg.any():
        xn = x[neg]
        out[neg] = _shifted(1.0 - xn, 0) - np.pi / _tanpi(xn)
    return out


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    if n == 0:
        return digamma(x)
    x = _B.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    pole = np.isfinite(x) & (x <= 0) & (x == np.floor(x))
    out[pole] = np.inf if n % 2 == 1 else -np.inf
    out[x == np.inf] = 0.0 if n == 1 else np.nan
    out[x == -np.inf] = np.nan if n == 1 else np.inf
    ok = np.isfinite(x) & ~pole
    if n == 1:  # trigamma: reflection for negative x, psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
        neg = ok & (x < 0)
        xn = x[neg]
        out[neg] = (np.pi / _sinpi(xn)) ** 2 - _shifted(1.0 - xn, 1)
        ok &= ~neg
    out[ok] = _shifted(x[ok], n)
    return out


def _bessel_series(x, nu: int):
    """I_nu(x) = sum (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 30 (positive terms)."""
    h = 0.5 * x
    q = h * h
    term = h ** nu / math.factorial(nu)
    total = term.copy()
    for k in range(1, 80):
        term = term * q / (k * (k + nu))
        total += term
    return total


def _bessel_asymptotic(x, nu: int, scaled: bool = False):
    """I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4nu^2 - (2j-1)^2) / (k! (8x)^k), x > 30 (without the
    factor e^x when ``scaled``)."""
    mu = 4.0 * nu * nu
    inv8 = 1.0 / (8.0 * x)
    term = np.ones_like(x)
    total = term.copy()
    for k in range(1, 25):
        term = term * -(mu - (2 * k - 1) ** 2) * inv8 / k
        total += term
    if scaled:
        return total / np.sqrt(2.0 * np.pi * x)
    with np.errstate(over="ignore"):
        half = np.exp(0.5 * x)  # e^x as a product of halves: finite further
        return half * (total / np.sqrt(2.0 * np.pi * x)) * half


def _bessel(x, nu: int, scaled: bool = False):
    """I_nu(x), or e^-|x| I_nu(x) when ``scaled`` (0 at infinity)."""
    x = _B.asarray(x, np.float64)
    a = np.abs(x)
    out = np.full_like(x, 0.0 if scaled else np.nan)
    small = a <= 30.0
    out[small] = _bessel_series(a[small], nu) * np.exp(-a[small]) if scaled else _bessel_series(a[small], nu)
    big = (a > 30.0) & np.isfinite(a)
    out[big] = _bessel_asymptotic(a[big], nu, scaled)
    out[np.isnan(x)] = np.nan
    if nu % 2 == 1:
        out = np.where(x < 0, -out, out)
    return out


def i0(x: np.ndarray) -> np.ndarray:
    return _bessel(x, 0)


def i1(x: np.ndarray) -> np.ndarray:
    return _bessel(x, 1)


def i0e(x: np.ndarray) -> np.ndarray:
    return _bessel(x, 0, True)


def i1e(x: np.ndarray) -> np.ndarray:
    return _bessel(x, 1, True)


# ---------------------------------------------------------------- regularized incomplete gamma P(a, x), Q(a, x)
_TINY = 1e-300


def _gamma_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)), for x < a + 1."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    ap = a.copy()
    for _ in range(2000):
        ap += 1.0
        term *= x / ap
        total += term
        if np.all(np.abs(term) <= np.abs(total) * 1e-17):
            break
    return np.exp(a * np.log(x) - x - lgamma(a + 1.0)) * total


def _gamma_fraction(a, x):
    """Q(a, x) by Legendre's continued fraction, for x >= a + 1."""
    return np.exp(a * np.log(x) - x - lgamma(a)) * _gamma_cf(a, x)


def _gamma_cf(a, x, steps: int = 2000):
    """Legendre's continued fraction h with Q(a, x) = x^a e^-x h / Gamma(a) (modified Lentz), for x >= a + 1."""
    b = x + 1.0 - a
    c = np.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, steps):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1.0) <= 4.5e-16):  # two ulps: the product d * c rounds at 1
            break
    return h


def gammainc(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """The regularized lower (P) or upper (Q = 1 - P) incomplete gamma function, torch's values at the edges."""
    a, x = np.broadcast_arrays(_B.asarray(a, np.float64), _B.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    lower_val = np.full(a.shape, np.nan)
    lower_val[(a == 0) & (x > 0)] = 1.0
    lower_val[(x == 0) & (a > 0)] = 0.0
    lower_val[np.isinf(a) & np.isfinite(x) & (x >= 0)] = 0.0
    lower_val[np.isinf(x) & np.isfinite(a) & (a >= 0)] = 1.0
    edge = ~np.isnan(lower_val)
    out[edge] = (1.0 - lower_val[edge]) if upper else lower_val[edge]
    ok = np.isfinite(a) & np.isfinite(x) & (a > 0) & (x > 0)
    series = ok & (x < a + 1.0)
    frac = ok & ~series
    if series.any():
        p = _gamma_series(a[series], x[series])
        out[series] = 1.0 - p if upper else p
    if frac.any():
        q = _gamma_fraction(a[frac], x[frac])
        out[frac] = q if upper else 1.0 - q
    return out


# ---------------------------------------------------------------- implicit reparameterisation of Gamma samples
_WH_FROM = 1e4  # from this shape on, within 8 standard deviations, Wilson-Hilferty is exact to < 4e-6 relative
_WH_WITHIN = 8.0
_STEPS = 40000  # series / continued fraction terms: ~6 sqrt(a) are needed near the mode of a large shape


def gamma_sample_dlog(a: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """d log(x) / d a for a Gamma(a, 1) sample x held at a fixed CDF level: -(dP(a, x)/da) / (x p(a, x)).

    Written as ratios that never form P or the density, so it stays finite for samples far below the float range
    (``log_x`` of -1e4 with a tiny ``a``). Below x = a + 1 it differentiates P's power series term by term; above, it
    uses Q = x^a e^-x h / Gamma(a) with h Legendre's continued fraction, differentiated numerically (h is smooth
    and well conditioned in a). For a >= 1e4 and x within 8 standard deviations of the mode, where those need
    hundreds of terms, the Wilson-Hilferty transform held at a fixed normal quantile."""
    a, log_x = np.broadcast_arrays(_B.asarray(a, np.float64), _B.asarray(log_x, np.float64))
    out = _B.full(a.shape, np.nan, like=a)
    x = np.exp(log_x)
    ok = np.isfinite(a) & (a > 0) & np.isfinite(log_x)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.exp((log_x - np.log(a)) / 3.0)  # (x / a)^(1/3) = 1 - 1/(9a) + z / (3 sqrt(a))
        z = (w - 1.0 + 1.0 / (9.0 * a)) * 3.0 * np.sqrt(a)
    big = ok & (a >= _WH_FROM) & (np.abs(z) <= _WH_WITHIN)
    lower = ok & ~big & (x < a + 1.0)
    upper = ok & ~big & ~lower
    if lower.any():
        al, xl = a[lower], x[lower]
        term, s0, s1, harmonic, n = np.ones_like(al), np.ones_like(al), np.zeros_like(al), np.zeros_like(al), 0.0
        while True:  # s0 = sum r_n, s1 = sum r_n H_n with r_n = x^n / ((a+1)...(a+n)), H_n = sum_k<=n 1/(a+k)
            n += 1.0
            term = term * xl / (al + n)
            harmonic = harmonic + 1.0 / (al + n)
            s0 = s0 + term
            s1 = s1 + term * harmonic
            if np.all(term * (1.0 + harmonic) <= 1e-17 * s1 + 1e-17 * s0) or n > _STEPS:
                break
        out[lower] = -((log_x[lower] - digamma(al + 1.0)) * s0 - s1) / al
    if upper.any():
        au, xu = a[upper], x[upper]
        step = 1e-5 * np.maximum(au, 1.0)
        dlog_h = (np.log(_gamma_cf(au + step, xu, _STEPS)) - np.log(_gamma_cf(au - step, xu, _STEPS))) / (2.0 * step)
        out[upper] = _gamma_cf(au, xu, _STEPS) * (log_x[upper] - digamma(au) + dlog_h)
    if big.any():
        ab, wb, zb = a[big], w[big], z[big]
        dw = 1.0 / (9.0 * ab * ab) - zb / (6.0 * ab * np.sqrt(ab))
        out[big] = 1.0 / ab + 3.0 * dw / wb
    return out
