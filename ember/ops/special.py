"""torch.special's own elementwise ops (those with no torch.* counterpart): the normal distribution family (ndtr,
log_ndtr, ndtri), erfcx, entr, the exponentially scaled Bessel functions i0e/i1e and xlog1py.

Each is a table row fed to the elementwise factories (``elementwise._unary`` / ``_binary``): a float64 kernel on
arrays and a backward formula in ember ops, so second derivatives come free.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B
from .. import _args
from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap
from . import _special as _sp
from ._op import NOT_YET, silent, unsupported
from .arithmetic import _rt
from ._erf import erfc64 as _erfc64, erfinv64 as _erfinv64, exp_neg_sq as _exp_neg_sq
from .elementwise import (_ANY, _SO, _X, _R, _binary, _in_float64, _not_implemented,
                          _out, _renamed, _unary_function,
                          _safe, _to_float, _unary, exp, log, where)
from .piecewise import sign

__all__ = ["ndtr", "log_ndtr", "ndtri", "erfcx", "entr", "i0e", "i1e", "xlog1py"]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT1_2 = math.sqrt(0.5)


# ------------------------------------------------------------------ float64 kernels
def _erfcx64(x):
    """exp(x^2) erfc(x): Laplace's continued fraction 1 / (sqrt(pi) t) for x >= 1.5 (no overflow at any size)."""
    out = np.empty_like(x)
    big = x >= 1.5
    xb = x[big]
    t = xb.copy()
    for k in range(100, 0, -1):
        t = xb + (0.5 * k) / t
    out[big] = 1.0 / (_SQRT_PI * t)
    small = ~big
    xs = x[small]
    out[small] = np.where(xs < -27.0, np.inf, _erfc64(xs) / _exp_neg_sq(np.maximum(xs, -27.0)))  # 2 e^729 overflows
    return out


def _log_ndtr64(x):
    """log Phi(x): log1p(-Q) for x > 0; log(erfcx(-x/sqrt 2) / 2) - x^2/2 below (no underflow)."""
    out = np.empty_like(x)
    pos = x > 0
    out[pos] = np.log1p(-0.5 * _erfc64(x[pos] * _SQRT1_2))
    neg = ~pos
    xn = x[neg]
    out[neg] = np.log(0.5 * _erfcx64(-xn * _SQRT1_2)) - 0.5 * xn * xn
    return out


def _ndtr64(x):
    return 0.5 * _erfc64(-x * _SQRT1_2)


def _ndtri64(p):
    """Phi^-1(p): Newton's method on log Phi (concave, so it converges from either side) for p <= 1/2, from a
    tail expansion (p < 1e-3) or sqrt(2) erfinv(2p - 1); symmetry for p > 1/2 (1 - p is exact there)."""
    upper = p > 0.5
    q = np.where(upper, 1.0 - p, p)
    inside = (q > 0) & (q <= 0.5)
    qi = np.where(inside, q, 0.25)
    lq = np.log(qi)
    tail = np.sqrt(np.maximum(-2.0 * lq - np.log(-2.0 * lq) - 2 * _HALF_LOG_2PI, 0.0))
    x = np.where(qi < 1e-3, -tail, math.sqrt(2.0) * _erfinv64(2.0 * qi - 1.0))
    for _ in range(6):
        ln = _log_ndtr64(x)
        x = x - (ln - lq) * _SQRT_2PI * np.exp(0.5 * x * x + ln)
    x = np.where(inside, x, np.where(q == 0, -np.inf, np.nan))
    return np.where(upper, -x, x)


def _entr64(x):
    """-x log x for x > 0, 0 at 0, -inf below (NaN kept)."""
    xp = np.where(x > 0, x, 1.0)
    return np.where(x > 0, -xp * np.log(xp), np.where(x == 0, 0.0, np.where(x < 0, -np.inf, x)))


def _xlog1py(x, y):
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * np.log1p(y)))


def _kernel(fn, no_half: str = ""):
    """``fn`` (float64) on any input: integers compute in the default float dtype; ``no_half`` names torch's kernel
    when torch has no float16 one (its error is raised)."""
    run = _to_float(_in_float64(fn))
    if not no_half:
        return run

    def checked(x):
        if x.dtype in D._REDUCED_NP:
            raise _not_implemented(no_half, x.dtype)
        return run(x)
    checked.reduced_native = True  # its op sees the stored 16-bit arrays (NOTE [reduced precision] in ops/_op.py)
    return checked


# ------------------------------------------------------------------ backward formulas
def _i1e_backward(g, x, r):
    """d i1e = i0e(x) - i1e(x) (sgn(x) + 1/x), 1/2 at 0 (torch has no float16 kernel for it)."""
    if x._dtype._reduced:
        raise _not_implemented("i1e_backward", x._data.dtype)
    return g * where(x == 0, 0.5, i0e(x) - r * (sign(x) + 1 / _safe(x)))


_XR = ("self", "result")

# public name: (Op name, forward, backward(grad, *saved), saved)
_UNARY = {
    "ndtr": ("SpecialNdtr", _kernel(_ndtr64), lambda g, x: g * (exp(-0.5 * (x * x)) / _SQRT_2PI), _X),
    "log_ndtr": ("SpecialLogNdtr", _kernel(_log_ndtr64, "log_ndtr_cpu"),
                 lambda g, x, r: g / _SQRT_2PI * exp(-(r + x * x / 2)), _XR),
    "ndtri": ("SpecialNdtri", _kernel(_ndtri64, "ndtri_cpu"), lambda g, r: g * (_SQRT_2PI * exp(r * r / 2)), _R),
    "erfcx": ("SpecialErfcx", _kernel(_erfcx64, "erfcx_cpu"), lambda g, x, r: g * (2 * x * r - 2 / _SQRT_PI), _XR),
    "entr": ("SpecialEntr", _kernel(_entr64), lambda g, x: g * -(1 + log(x)), _X),
    "i0e": ("SpecialI0E", _kernel(_sp.i0e), lambda g, x, r: g * (i1e(x) - sign(x) * r), _XR),
    "i1e": ("SpecialI1E", _kernel(_sp.i1e), _i1e_backward, _XR),
}
_UOPS = {pub: _unary(name, fwd, bwd, save) for pub, (name, fwd, bwd, save) in _UNARY.items()}
for _pub, _cls in _UOPS.items():
    _cls.__module__ = __name__
    _cls.reduced_native = getattr(_UNARY[_pub][1], "reduced_native", False)


ndtr, log_ndtr, ndtri, erfcx, entr, i0e, i1e = (_unary_function(n, _UOPS, "torch.special") for n in _UNARY)

# ------------------------------------------------------------------ xlog1py
_Xlog1py = _binary("SpecialXlog1Py", _xlog1py, _ANY, True, "xlog1py_cpu",
                   (lambda g, a, b: where((a == 0) & (b <= -1), 0.0, xlog1py(g, b)), lambda g, a, b: g * a / (b + 1)),
                   _SO, "")
_Xlog1py.__module__ = __name__
_Xlog1pyTensorScalar = _renamed(_Xlog1py, "SpecialXlog1PyBackward2")
_Xlog1pyScalarTensor = _renamed(_Xlog1py, "SpecialXlog1PyBackward1")


def _binary_function(pub: str, doc: str, cls: type, scalar_tensor: type, tensor_scalar: type):
    """torch.special.``pub`` of two operands, either of which (not both) may be a Python number."""
    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            if not isinstance(other, Tensor):
                raise TypeError(f"special_{pub}() received an invalid combination of arguments - got "
                                f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                                " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                                " * (Number self, Tensor other, *, Tensor out = None)\n"
                                " * (Tensor input, Number other, *, Tensor out = None)\n")
            return _out(scalar_tensor.apply(input, other), out)
        if not isinstance(other, Tensor):
            return _out(tensor_scalar.apply(input, other), out)
        return _out(cls.apply(input, other), out)

    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = doc
    return fn


xlog1py = _binary_function("xlog1py", "input * log1p(other), 0 where input is 0 (unless other is NaN); either may be a "
                           "Python number.", _Xlog1py, _Xlog1pyScalarTensor, _Xlog1pyTensorScalar)


# ------------------------------------------------------------------ functions torch does not differentiate
# (their results never require grad): orthogonal polynomials of integer degree n, Bessel functions
def _no_grad_result(arr: np.ndarray, dtype) -> Tensor:
    return _wrap(_B.ascontiguousarray(arr), D.from_numpy_dtype(dtype))


def _float_dtype(dt):
    return D.get_default_dtype().np if dt.kind in "biu" else dt


# the functions torch's schemas call their argument x (not self, i.e. input)
_X_NAMED = ("airy_ai", "spherical_bessel_j0", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")


def _no_grad_unary(pub: str, kernel):
    def compute(t: Tensor, out) -> Tensor:
        x = t._data
        if x.dtype.kind == "c":
            raise _not_implemented(pub + "_cpu", x.dtype)
        dt = _float_dtype(x.dtype)
        return _out(_no_grad_result(silent(kernel)(x.astype(np.float64)).astype(dt), dt), out)

    if pub in _X_NAMED:
        def fn(x: Tensor, *, out: Tensor | None = None) -> Tensor:
            return compute(x, out)
    else:
        def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
            return compute(input, out)
    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = f"Elementwise {pub} (torch.special.{pub}; not differentiable in torch)."
    return fn


def _spherical_j0(x):
    """sin(x) / x, by its Taylor series near 0; 0 at infinity."""
    small = np.abs(x) < 0.5
    x2 = x * x
    series = 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110 * (1 - x2 / 156)))))
    safe = np.where(small | np.isinf(x), 1.0, x)
    return np.where(small, series, np.where(np.isinf(x), 0.0, np.sin(safe) / safe))


modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", _sp.i0)
modified_bessel_i1 = _no_grad_unary("modified_bessel_i1", _sp.i1)
spherical_bessel_j0 = _no_grad_unary("spherical_bessel_j0", _spherical_j0)


def _three_term(x, n, p0, p1, step):
    """p_n(x) for integer degrees n >= 0 by p_{k+1} = step(k, x, p_k, p_{k-1}) from p_0, p_1 (elementwise n)."""
    p, q = (np.broadcast_to(v, x.shape).astype(np.float64) for v in (p0, p1))
    first = p
    for k in range(1, int(n.max(initial=1))):
        r = step(k, x, q, p)
        live = k + 1 <= n
        p, q = np.where(live, q, p), np.where(live, r, q)
    return np.where(n == 0, first, q)


def _trig_or(x, n, recurrence, trig, threshold: int):
    """recurrence(x, n) everywhere, except trig(x, theta, n) where |x| < 1 and n > threshold (as torch)."""
    use = (np.abs(x) < 1) & (n > threshold)
    out = recurrence(x, np.where(use, 0, n))
    theta = np.arccos(np.where(use, x, 0.0))
    return np.where(use, trig(x, theta, n), out)


def _poly(p0, p1, step):
    def run(x, n):
        x, n = np.broadcast_arrays(x, n)
        return _three_term(x, n, p0(x), p1(x), step)
    return run


_cheb_step = lambda k, x, q, p: (x + x) * q - p  # noqa: E731
_cheb_t = _poly(np.ones_like, lambda x: x, _cheb_step)
_cheb_u = _poly(np.ones_like, lambda x: x + x, _cheb_step)
_cheb_v = _poly(np.ones_like, lambda x: x + x - 1, _cheb_step)
_cheb_w = _poly(np.ones_like, lambda x: x + x + 1, _cheb_step)


def _chebyshev(kind: str):
    rec = {"t": _cheb_t, "u": _cheb_u, "v": _cheb_v, "w": _cheb_w}[kind]

    def at_one(x, n):
        """Values at x = +-1 (exact, as torch special-cases them)."""
        odd = n % 2 == 1
        plus = {"t": 1.0, "u": n + 1.0, "v": 1.0, "w": 2.0 * n + 1}[kind]
        minus = {"t": np.where(odd, -1.0, 1.0), "u": np.where(odd, -(n + 1.0), n + 1.0),
                 "v": np.where(odd, -(2.0 * n + 1), 2.0 * n + 1), "w": np.where(odd, -1.0, 1.0)}[kind]
        return np.where(x > 0, plus, minus)

    def trig(x, th, n):
        with np.errstate(all="ignore"):
            if kind == "t":
                return np.cos(n * th)
            if kind == "u":
                s = np.sin(th)
                return np.where(s != 0, np.sin((n + 1) * th) / np.where(s != 0, s, 1.0), (n + 1) * np.cos((n + 1) * th) * x)
            if kind == "v":
                return np.cos((n + 0.5) * th) / np.cos(th / 2)
            return np.sin((n + 0.5) * th) / np.sin(th / 2)

    def run(x, n):
        x, n = np.broadcast_arrays(x, n)
        out = _trig_or(x, n, rec, trig, 6 if kind == "t" else 8)
        return np.where(np.abs(x) == 1, at_one(x, n), out)
    return run


def _hermite_h(x, n):
    return _poly(np.ones_like, lambda x: x + x, lambda k, x, q, p: (x + x) * q - (2 * k) * p)(x, n)


def _hermite_he(x, n):
    return _poly(np.ones_like, lambda x: x, lambda k, x, q, p: x * q - k * p)(x, n)


def _laguerre(x, n):
    return _poly(np.ones_like, lambda x: 1 - x, lambda k, x, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1))(x, n)


def _legendre(x, n):
    out = _poly(np.ones_like, lambda x: x, lambda k, x, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))(x, n)
    return np.where(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)


def _shifted(kernel):
    return lambda x, n: kernel(x + x - 1, n)


_POLYNOMIALS = {
    "chebyshev_polynomial_t": _chebyshev("t"), "chebyshev_polynomial_u": _chebyshev("u"),
    "chebyshev_polynomial_v": _chebyshev("v"), "chebyshev_polynomial_w": _chebyshev("w"),
    "shifted_chebyshev_polynomial_t": _shifted(_chebyshev("t")),
    "shifted_chebyshev_polynomial_u": _shifted(_chebyshev("u")),
    "shifted_chebyshev_polynomial_v": _shifted(_chebyshev("v")),
    "shifted_chebyshev_polynomial_w": _shifted(_chebyshev("w")),
    "hermite_polynomial_h": _hermite_h, "hermite_polynomial_he": _hermite_he, "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


def _polynomial(pub: str):
    kernel = silent(_POLYNOMIALS[pub])

    def fn(x, n, *, out: Tensor | None = None) -> Tensor:
        input = x
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{pub}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__}), but expected one of:\n"
                            " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)\n")
        x = input._data if isinstance(input, Tensor) else input
        k = n._data if isinstance(n, Tensor) else n
        rt = np.dtype(_rt(x, k))
        if rt.kind == "c":
            raise _not_implemented(pub + "_cpu", rt)
        dt = _float_dtype(rt)
        with np.errstate(invalid="ignore"):
            degree = _B.asarray(k, np.float64)
            degree = np.where(np.isfinite(degree), np.trunc(degree), -1).astype(np.int64)
        xs = _B.asarray(x, np.float64)
        res = np.where(degree < 0, 0.0, kernel(xs, np.maximum(degree, 0)))
        return _out(_no_grad_result(_B.asarray(res).astype(dt), dt), out)

    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = f"The {pub.replace('_', ' ')} of integer degree ``n`` (truncated; 0 for n < 0) at ``input``."
    return fn


(chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
 shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
 shifted_chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
 legendre_polynomial_p) = (_polynomial(n) for n in _POLYNOMIALS)
__all__ += ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", *_POLYNOMIALS]


# ------------------------------------------------------------------ Hurwitz zeta
# Euler-Maclaurin correction coefficients (2j)! / B_2j, j = 1 .. 12
_EM = tuple(math.factorial(2 * j + 2) / b for j, b in enumerate(_sp._B2K[:12]))


def _zeta64(x, q):
    """zeta(x, q) = sum_k (q + k)^-x: the first terms directly (at least 9, until q + k > 9), then the
    Euler-Maclaurin tail; (1/(x-1) + 1/(2q)) q^(1-x) for q > 1e8. inf at x = 1 and at poles q = 0, -1, ...;
    NaN for x < 1 and for q <= 0 with non-integer x."""
    x, q = _B.asarray(x, np.float64), _B.asarray(q, np.float64)
    if type(x) is not type(q):  # a number (a 0-d host array) joins the other operand's device
        x, q = (_B.like(q, x), q) if type(x) is np.ndarray else (x, _B.like(x, q))
    x, q = np.broadcast_arrays(x, q)
    s = q ** -x
    a = q.copy()
    # direct terms needed: up to 9 - q (poles aside); non-integer q below -1e5 would need more: NaN there
    far_left = q < -1e5
    finite = q[np.isfinite(q) & (q != np.floor(q)) & ~far_left]
    steps = int(max(9, math.ceil(9.0 - finite.min(initial=9.0)) + 1))
    for i in range(1, steps + 1):
        live = (i - 1 < 9) | (a <= 9)
        a = np.where(live, a + 1, a)
        s = s + np.where(live, a ** -x, 0.0)
    w = a
    b = w ** -x
    s = s + b * w / (x - 1) - 0.5 * b
    rising = np.ones_like(x)
    k = 0.0
    for coeff in _EM:
        rising = rising * (x + k)
        b = b / w
        s = s + rising * b / coeff
        rising = rising * (x + k + 1)
        b = b / w
        k += 2.0
    far = (1 / (x - 1) + 1 / (2 * q)) * q ** (1 - x)
    s = np.where(q > 1e8, far, s)
    pole = (q <= 0) & (q == np.floor(q))
    s = np.where(((q <= 0) & (x != np.floor(x))) | far_left, np.nan, s)
    s = np.where(pole, np.inf, s)
    s = np.where((x < 1) | (q == np.inf), np.nan, s)  # torch: NaN at q = inf as well
    return np.where(x == 1, np.inf, s)


def _zeta_no_x_derivative(g, x, q):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


_zeta_no_x_derivative.jvp = unsupported("special_zeta", NOT_YET)

def _zeta_kernel(x, q):
    for v in (x, q):  # no 16-bit kernel in torch (the op sees the stored arrays: ``reduced_native`` below)
        if _B.is_array(v) and v.dtype in D._REDUCED_NP:
            raise _not_implemented("zeta_cpu", v.dtype)
    dt = np.result_type(x, q)
    return _zeta64(x, q).astype(dt, copy=False)


_Zeta = _binary("SpecialZeta", _zeta_kernel, _ANY, True,
                "zeta_cpu", (_zeta_no_x_derivative, lambda g, x, q: g * -x * zeta(x + 1, q)), _SO, "")
_Zeta.__module__ = __name__
_Zeta.reduced_native = True
_ZetaScalarTensor = _renamed(_Zeta, "SpecialZetaBackward1")
_ZetaTensorScalar = _renamed(_Zeta, "SpecialZetaBackward2")


zeta = _binary_function("zeta", "The Hurwitz zeta function sum_k (other + k)^-input; either may be a Python number.",
                        _Zeta, _ZetaScalarTensor, _ZetaTensorScalar)


__all__ += ["zeta"]


# ------------------------------------------------------------------ modified Bessel functions of the second kind
def _bessel_terms(term, q, nu: int, n: int):
    """The first ``n`` terms of a Bessel series in powers of ``q`` with their harmonic numbers: (term_k, H_k,
    H_{k+nu}), where term_k = term_{k-1} * q / (k (k + nu)) from ``term`` (k = 0)."""
    h_k, h_kn = 0.0, float(nu)
    for k in range(n):
        if k:
            term = term * q / (k * (k + nu))
            h_k += 1.0 / k
            h_kn += 1.0 / (k + nu)
        yield term, h_k, h_kn


def _k_series(x, nu: int):
    """K_0, K_1 for 0 < x <= 2 from their power series around 0 (logarithmic terms with I_0, I_1)."""
    q = 0.25 * x * x
    log_half = np.log(0.5 * x)
    euler = _sp._EULER_GAMMA
    total = np.zeros_like(x)
    for term, h_k, h_kn in _bessel_terms(np.ones_like(x), q, nu, 40):  # term_k = q^k / (k! (k + nu)!)
        if nu == 0:
            total += term * (h_k - euler - log_half)
        else:
            total += term * (log_half + euler - 0.5 * (h_k + h_kn))
    return total if nu == 0 else 1.0 / x + 0.5 * x * total


def _k_integral_scaled(x, nu: int):
    """e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the trapezoid rule (2 <= x <= 30)."""
    t = np.arange(0.0, 4.5, 0.03125)
    w = np.full(t.shape, 0.03125)
    w[0] = 0.015625
    f = np.exp(-x[..., None] * (np.cosh(t) - 1.0)) * np.cosh(nu * t)
    return f @ w


def _k_asymptotic_scaled(x, nu: int):
    """e^x K_nu(x) ~ sqrt(pi / (2x)) sum_k prod_j (4 nu^2 - (2j-1)^2) / (k! (8x)^k), x > 30."""
    mu = 4.0 * nu * nu
    term = np.ones_like(x)
    total = term.copy()
    for k in range(1, 25):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total += term
    return np.sqrt(np.pi / (2.0 * x)) * total


def _k(nu: int, scaled: bool):
    def kernel(x):
        out = np.full_like(x, np.nan)
        small = (x > 0) & (x <= 2)
        mid = (x > 2) & (x <= 30)
        big = x > 30
        xs = x[small]
        out[small] = _k_series(xs, nu) * (np.exp(xs) if scaled else 1.0)
        xm = x[mid]
        out[mid] = _k_integral_scaled(xm, nu) * (1.0 if scaled else np.exp(-xm))
        xb = x[big]
        with np.errstate(under="ignore"):
            out[big] = _k_asymptotic_scaled(xb, nu) * (1.0 if scaled else np.exp(-xb))
        out[x == 0] = np.inf
        out[x == np.inf] = 0.0
        return out
    return kernel


modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", _k(0, False))
modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", _k(1, False))
scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0", _k(0, True))
scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1", _k(1, True))
__all__ += ["modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]


# ------------------------------------------------------------------ Bessel functions of the first kind
def _j_integral(x, nu: int):
    """J_nu(x) = (1/pi) int_0^pi cos(nu t - x sin t) dt by the trapezoid rule (periodic: exponentially accurate
    with 96 nodes for |x| <= 25)."""
    n = 96
    t = np.arange(n + 1) * (np.pi / n)
    w = np.full(n + 1, 1.0 / n)
    w[0] = w[-1] = 0.5 / n
    return np.cos(nu * t - x[..., None] * np.sin(t)) @ w


def _j_asymptotic(x, nu: int):
    """Hankel's expansions for x > 25: J_nu, Y_nu = sqrt(2/(pi x)) (P cos chi - Q sin chi, P sin chi + Q cos chi),
    chi = x - (nu/2 + 1/4) pi."""
    mu = 4.0 * nu * nu
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 30):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q += sign * term
        else:
            p += sign * term
    phase = (0.5 * nu + 0.25) * np.pi  # cos/sin of chi = x - phase, from those of x (exact argument reduction)
    c, s = np.cos(x), np.sin(x)
    cos_chi, sin_chi = c * math.cos(phase) + s * math.sin(phase), s * math.cos(phase) - c * math.sin(phase)
    amp = np.sqrt(2.0 / (np.pi * x))
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)  # J_nu, Y_nu


def _j_series(x, nu: int):
    """sum_k (-1)^k (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 2 (full relative accuracy near 0)."""
    h = 0.5 * x
    q = -h * h
    term = h ** nu
    total = term.copy()
    for k in range(1, 25):
        term = term * q / (k * (k + nu))
        total += term
    return total


def _j(nu: int):
    def kernel(x):
        a = np.abs(x)
        out = np.full_like(x, np.nan)
        tiny = a <= 2
        out[tiny] = _j_series(a[tiny], nu)
        small = (a > 2) & (a <= 25)
        out[small] = _j_integral(a[small], nu)
        big = (a > 25) & np.isfinite(a)
        out[big] = _j_asymptotic(a[big], nu)[0]
        return np.where(x < 0, -out, out) if nu % 2 else out  # NaN at +-inf, as torch
    return kernel


# Bessel functions of the second kind (x > 0; -inf at 0, NaN below)
_GL_T, _GL_W = np.polynomial.legendre.leggauss(80)


def _gauss(f, lo: float, hi: float):
    """int_lo^hi f(t) dt by 80-point Gauss-Legendre (f maps nodes of shape (m,) to (..., m))."""
    half = 0.5 * (hi - lo)
    return f(lo + half * (_GL_T + 1.0)) @ (_GL_W * half)


def _y_integral(x, nu: int):
    """Y_nu(x) = (1/pi) int_0^pi sin(x sin t - nu t) dt - (1/pi) int_0^inf (e^(nu t) + (-1)^nu e^(-nu t)) e^(-x sinh t)
    dt, for 2 < x <= 25."""
    xe = x[..., None]
    first = _gauss(lambda t: np.sin(xe * np.sin(t) - nu * t), 0.0, np.pi)
    second = _gauss(lambda t: (np.exp(nu * t) + (-1) ** nu * np.exp(-nu * t)) * np.exp(-xe * np.sinh(t)), 0.0, 4.5)
    return (first - second) / np.pi


def _y_series(x, nu: int):
    """Y_0, Y_1 for 0 < x <= 2 from their series (a logarithm times J plus a power series)."""
    h = 0.5 * x
    q = -h * h
    euler = _sp._EULER_GAMMA
    j = _j_series(x, nu)
    total = np.zeros_like(x)
    for term, h_k, h_kn in _bessel_terms(h ** nu, q, nu, 25):  # term_k = (-1)^k (x/2)^(2k+nu) / (k! (k+nu)!)
        total += term * (h_k + h_kn)  # psi(k+1) + psi(k+nu+1) + 2 gamma
    series = (2.0 / np.pi) * (np.log(h) + euler) * j - total / np.pi
    return series - 2.0 / (np.pi * x) if nu else series


def _y(nu: int):
    def kernel(x):
        out = np.full_like(x, np.nan)
        tiny = (x > 0) & (x <= 2)
        out[tiny] = _y_series(x[tiny], nu)
        mid = (x > 2) & (x <= 25)
        out[mid] = _y_integral(x[mid], nu)
        big = (x > 25) & np.isfinite(x)
        out[big] = _j_asymptotic(x[big], nu)[1]
        out[x == 0] = -np.inf
        return out
    return kernel


bessel_y0 = _no_grad_unary("bessel_y0", _y(0))
bessel_y1 = _no_grad_unary("bessel_y1", _y(1))
bessel_j0 = _no_grad_unary("bessel_j0", _j(0))
bessel_j1 = _no_grad_unary("bessel_j1", _j(1))
__all__ += ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]


# ------------------------------------------------------------------ Airy function Ai
_AI0 = 0.355028053887817239  # Ai(0) = 1 / (3^(2/3) Gamma(2/3))
_DAI0 = 0.258819403792806798  # -Ai'(0) = 1 / (3^(1/3) Gamma(1/3))


def _airy_series(x):
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x) from the Maclaurin series of f and g (-7 <= x <= 2)."""
    x3 = x * x * x
    f, g = np.ones_like(x), x.copy()
    tf, tg = np.ones_like(x), x.copy()
    for k in range(1, 60):
        tf = tf * x3 / ((3 * k - 1) * (3 * k))
        tg = tg * x3 / ((3 * k) * (3 * k + 1))
        f += tf
        g += tg
    return _AI0 * f - _DAI0 * g


def _airy_positive(x):
    """Ai(x) = sqrt(x/3) / pi K_(1/3)(zeta), zeta = 2/3 x^(3/2), for x > 2 (K from its integral or expansion)."""
    zeta = (2.0 / 3.0) * x * np.sqrt(x)
    scaled = np.where(zeta <= 30, _k_integral_scaled(np.minimum(zeta, 30.0), 1.0 / 3.0),
                      _k_asymptotic_scaled(np.maximum(zeta, 30.0), 1.0 / 3.0))
    with np.errstate(under="ignore"):
        return np.sqrt(x / 3.0) / np.pi * scaled * np.exp(-zeta)


def _airy_negative(x):
    """Ai(-y) ~ (pi^2 y)^(-1/4) (sin(zeta + pi/4) P - cos(zeta + pi/4) Q), zeta = 2/3 y^(3/2), for y > 7."""
    y = -x
    zeta = (2.0 / 3.0) * y * np.sqrt(y)
    u, p, q = 1.0, np.ones_like(y), np.zeros_like(y)
    power = np.ones_like(y)
    for k in range(1, 30):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / zeta
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q += sign * u * power
        else:
            p += sign * u * power
    phase = zeta + 0.25 * np.pi
    return (np.sin(phase) * p - np.cos(phase) * q) / (np.sqrt(np.pi) * np.sqrt(np.sqrt(y)))


def _airy(x):
    out = np.full_like(x, np.nan)
    mid = (x >= -7) & (x <= 2)
    out[mid] = _airy_series(x[mid])
    pos = (x > 2) & np.isfinite(x)
    out[pos] = _airy_positive(x[pos])
    neg = (x < -7) & np.isfinite(x)
    out[neg] = _airy_negative(x[neg])
    return out


airy_ai = _no_grad_unary("airy_ai", _airy)
__all__ += ["airy_ai"]


# NOTE [foreign errors] (ember/_malloc.py): the non-differentiable functions compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), __all__)
