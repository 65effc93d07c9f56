"""torch.special's own elementwise ops (those with no torch.* counterpart): the normal distribution family (ndtr,
log_ndtr, ndtri), erfcx, entr, the exponentially scaled Bessel functions i0e/i1e and xlog1py.

Each is a table row fed to the elementwise factories (``elementwise._unary`` / ``_binary``): a float64 kernel on
arrays and a backward formula in ember ops, so second derivatives come free.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from . import _special as _sp
from .elementwise import (_ANY, _SO, _X, _R, _binary, _erfc64, _erfinv64, _exp_neg_sq, _in_float64, _not_implemented,
                          _out, _renamed,
                          _safe, _to_float, _unary, exp, log, where)
from .unary import sign

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
        if x.dtype == np.float16:
            raise _not_implemented(no_half, x.dtype)
        return run(x)
    return checked


# ------------------------------------------------------------------ backward formulas
def _i1e_backward(g, x, r):
    """d i1e = i0e(x) - i1e(x) (sgn(x) + 1/x), 1/2 at 0 (torch has no float16 kernel for it)."""
    if x._data.dtype == np.float16:
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
for _cls in _UOPS.values():
    _cls.__module__ = __name__


def _unary_function(pub: str):
    cls = _UOPS[pub]

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _out(cls.apply(input), out)

    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = f"Elementwise {pub} (torch.special.{pub})."
    return fn


ndtr, log_ndtr, ndtri, erfcx, entr, i0e, i1e = (_unary_function(n) for n in _UNARY)

# ------------------------------------------------------------------ xlog1py
_Xlog1py = _binary("SpecialXlog1Py", _xlog1py, _ANY, True, "xlog1py_cpu",
                   (lambda g, a, b: where((a == 0) & (b <= -1), 0.0, xlog1py(g, b)), lambda g, a, b: g * a / (b + 1)),
                   _SO, "")
_Xlog1py.__module__ = __name__
_Xlog1pyTensorScalar = _renamed(_Xlog1py, "SpecialXlog1PyBackward2")
_Xlog1pyScalarTensor = _renamed(_Xlog1py, "SpecialXlog1PyBackward1")


def xlog1py(input, other, *, out: Tensor | None = None) -> Tensor:
    """input * log1p(other), 0 where input is 0 (unless other is NaN); either may be a Python number."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"special_xlog1py() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                            " * (Number self, Tensor other, *, Tensor out = None)\n"
                            " * (Tensor input, Number other, *, Tensor out = None)\n")
        return _out(_Xlog1pyScalarTensor.apply(input, other), out)
    if not isinstance(other, Tensor):
        return _out(_Xlog1pyTensorScalar.apply(input, other), out)
    return _out(_Xlog1py.apply(input, other), out)
