"""Binary arithmetic with torch's type promotion: add, sub, mul, div, pow, matmul and friends."""
from __future__ import annotations

import cmath
import math

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Tensor
from ._op import Op, silent, multilinear, linear, wrap_raw
from . import _inplace as _IP
from .. import _args
from .._args import tensor_arg as _tensor_arg

__all__ = ["add", "sub", "rsub", "mul", "div", "true_divide", "rdiv", "pow", "neg", "matmul", "mm"]

_nd = np.ndarray
_ARR = _B.ARRAYS  # array types of every device


def _meta(a):
    """A 0-d or 1-element host array standing for ``a``'s dtype and dimensionality in dtype promotion."""
    return np.empty((1,) * min(a.ndim, 1), a.dtype)
_float, _int, _bool = float, int, bool


def _kind_rank(x) -> int:
    t = type(x)
    if t is _bool:
        return 0
    if t is _int:
        return 1
    if t is _float:
        return 2
    return D.from_numpy_dtype(_B.asarray(x).dtype)._kind


def _rt(a, b):
    """torch.result_type of two raw operands (arrays or Python scalars) as a NumPy dtype."""
    ta, tb = type(a), type(b)
    if ta is _nd and tb is _nd:
        if a.dtype == b.dtype:
            return a.dtype
        da, db = D.from_numpy_dtype(a.dtype), D.from_numpy_dtype(b.dtype)
        if (a.ndim == 0) == (b.ndim == 0):
            return D.promote_types(da, db).np
        hi, lo = (da, db) if b.ndim == 0 else (db, da)
        return D._combine(hi, lo).np
    if ta is _nd:
        arr, s = a, b
    elif tb is _nd:
        arr, s = b, a
    elif ta in _ARR:  # arrays of another device (NOTE [device seam] in ember/_backend.py)
        if tb in _ARR:
            return _rt(_meta(a), _meta(b))
        arr, s = a, b
    elif tb in _ARR:
        arr, s = b, a
    else:
        return np.result_type(a, b)
    d = D._combine(D.from_numpy_dtype(arr.dtype), D._scalar_dtype(s))
    if d.np is None:  # float16 with a complex number: torch's complex32
        raise D._no_complex32()
    return d.np


def _prep(a, b, dt):
    """Cast array operands to the computation dtype ``dt`` (scalars stay weak)."""
    ta, tb = type(a), type(b)
    if ta is _nd or ta in _ARR:
        if a.dtype != dt:
            a = a.astype(dt)
    elif ta is _int and dt.kind in "iu":
        a = _wrap_int(a, dt)
    if tb is _nd or tb in _ARR:
        if b.dtype != dt:
            b = b.astype(dt)
    elif tb is _int and dt.kind in "iu":
        b = _wrap_int(b, dt)
    return a, b


_INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in (np.uint8, np.int8, np.int16,
                                                                                  np.int32, np.int64)}


def _wrap_int(s: int, dt):
    """A Python int in an integer computation dtype: wrapped modulo 2**bits as torch casts it (NumPy 2 refuses)."""
    lo, hi = _INT_RANGE[dt]
    if lo <= s <= hi:
        return s
    if not -2 ** 63 <= s < 2 ** 64:
        raise OverflowError("int too big to convert")
    return np.array(s % 2 ** 64, np.uint64).astype(dt)[()]


def _broadcast_error(a, b) -> RuntimeError:
    sa, sb = np.shape(a), np.shape(b)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                                f"at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast")


def _binary(ufunc):
    """forward(a, b) computing ``ufunc`` in the promoted dtype, with torch's broadcast error."""

    def compute(a, b):
        if type(a) is _nd and type(b) is _nd and a.dtype == b.dtype:  # same dtype: nothing to promote or cast
            try:
                out = ufunc(a, b)
            except ValueError:
                raise _broadcast_error(a, b) from None
            if type(out) is _nd and out.dtype == a.dtype:
                return out
            return _B.asarray(out, a.dtype)
        dt = _rt(a, b)
        a, b = _prep(a, b, dt)
        try:
            out = ufunc(a, b)
        except ValueError:
            raise _broadcast_error(a, b) from None
        if type(out) is not _nd:
            out = _B.asarray(out, dt)
        elif out.dtype != dt:
            out = out.astype(dt)
        return out

    return compute


_add = _binary(silent(np.add))  # inf - inf, float16 overflow: nan/inf as torch, no NumPy warning
_sub = _binary(silent(np.subtract))
_mul = _binary(silent(np.multiply))
_true_divide = silent(np.true_divide)
_power = silent(np.power)
_log = silent(np.log)


def _to_float(a, b):
    if type(a) is _nd and a.dtype.kind == "f" and ((type(b) is _nd and b.dtype == a.dtype) or type(b) is _float):
        return a, b  # the common cases: already one floating dtype
    dt = _rt(a, b)
    if dt.kind in "biu":
        dt = D.get_default_dtype().np
    return _prep(a, b, dt)


class Add(Op):
    """d(self + alpha*other) = grad, alpha*grad"""

    __slots__ = ("alpha",)
    nattrs = 1
    reduced_attrs = (2,)  # alpha takes the 16-bit dtype, as torch's (NOTE [reduced precision] in _op.py)

    @staticmethod
    def forward(ctx, self, other, alpha):
        if ctx is not None:
            ctx.alpha = alpha
        return _add(self, other) if alpha == 1 else _add(*_scaled(self, other, alpha))

    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * _conj_number(ctx.alpha))

    @staticmethod
    def jvp(args, out, tangents):
        return _affine(tangents[0], tangents[1], 1, args[2])


def _scaled(self, other, alpha) -> tuple:
    """``self, alpha * other`` for add and sub: alpha multiplies in the result dtype (a 0-d float32 ``other`` of a
    float64 ``self`` goes up first)."""
    self, other = _prep(self, other, _rt(self, other))
    return self, _mul(other, alpha)


def _conj_number(c):
    """A Python number's conjugate (alpha of add/sub may be complex: NOTE [complex autograd])."""
    return c.conjugate() if type(c) is complex else c


def _affine(ta, tb, ca, cb):
    """ca*ta + cb*tb, a missing tangent counting as zero."""
    if tb is not None and cb != 1:
        tb = tb * cb
    if ta is not None and ca != 1:
        ta = ta * ca
    return ta if tb is None else (tb if ta is None else ta + tb)


def _is_bool(x) -> bool:
    return type(x) is _bool or (type(x) in _ARR and x.dtype == np.bool_)


def _check_bool_sub(a, b) -> None:
    """torch refuses subtraction with bool operands (tensors or Python bools)."""
    ba, bb = _is_bool(a), _is_bool(b)
    if ba and bb and type(a) in _ARR and type(b) in _ARR:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if ba or bb:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


class Sub(Add):
    """d(self - alpha*other) = grad, -alpha*grad"""

    __slots__ = ()

    @staticmethod
    def forward(ctx, self, other, alpha):
        if ctx is not None:
            ctx.alpha = alpha
        _check_bool_sub(self, other)
        return _sub(self, other) if alpha == 1 else _sub(*_scaled(self, other, alpha))

    def backward(ctx, grad):
        return grad, (-grad if ctx.alpha == 1 else grad * -_conj_number(ctx.alpha))

    def raw(ctx, grad):
        return grad, wrap_raw(_neg(grad._data) if ctx.alpha == 1 else _mul(grad._data, -_conj_number(ctx.alpha)))

    @staticmethod
    def jvp(args, out, tangents):
        return _affine(tangents[0], tangents[1], 1, -args[2])


class Rsub(Sub):
    """d(other - alpha*self) = -alpha*grad, grad (torch.rsub, ``scalar - tensor``)"""

    __slots__ = ()
    _name = "RsubBackward1"

    @staticmethod
    def forward(ctx, self, other, alpha):
        if ctx is not None:
            ctx.alpha = alpha
        _check_bool_sub(self, other)
        return _sub(other, self if alpha == 1 else _mul(self, alpha))

    def backward(ctx, grad):
        return (-grad if ctx.alpha == 1 else grad * -_conj_number(ctx.alpha)), grad

    def raw(ctx, grad):
        return wrap_raw(_neg(grad._data) if ctx.alpha == 1 else _mul(grad._data, -_conj_number(ctx.alpha))), grad

    @staticmethod
    def jvp(args, out, tangents):
        return _affine(tangents[0], tangents[1], -args[2], 1)


class Mul(Op):
    """d(self*other) = grad*other, grad*self"""

    __slots__ = ()
    reduced_exact = (1,)  # NOTE [reduced precision] (ops/_op.py)
    save = ("self", "other")
    holomorphic = True
    save_for = {"self": ("other",), "other": ("self",)}

    @staticmethod
    def forward(ctx, self, other):
        return _mul(self, other)

    def backward(ctx, grad):
        self, other = ctx.saved_tensors
        n0, n1 = ctx._next
        return (grad * other if n0[0] is not None else None,
                grad * self if n1[0] is not None else None)

    def raw(ctx, grad, self, other):
        n0, n1 = ctx._next
        g = grad._data
        return (wrap_raw(_mul(g, other)) if n0[0] is not None else None,
                wrap_raw(_mul(g, self)) if n1[0] is not None else None)

    jvp = multilinear


class Div(Op):
    """d(self/other) = grad/other, -grad*self/other**2"""

    __slots__ = ()
    reduced_exact = (1,)  # NOTE [reduced precision] (ops/_op.py)
    save = ("self", "other")
    holomorphic = True
    save_for = {"self": ("other",)}

    @staticmethod
    def forward(ctx, self, other):
        a, b = _to_float(self, other)
        try:
            return _true_divide(a, b)
        except ValueError:
            raise _broadcast_error(a, b) from None

    def backward(ctx, grad):
        self, other = ctx.saved_tensors
        n0, n1 = ctx._next
        ga = grad / other if n0[0] is not None else None
        gb = -grad * self / (other * other) if n1[0] is not None else None
        return ga, gb

    def raw(ctx, grad, self, other):
        n0, n1 = ctx._next
        g = grad._data
        div = Div.forward
        ga = wrap_raw(div(None, g, other)) if n0[0] is not None else None
        gb = wrap_raw(div(None, _mul(_neg(g), self), _mul(other, other))) if n1[0] is not None else None
        return ga, gb

    @staticmethod
    def jvp(args, out, tangents):
        ta, tb = tangents
        if tb is None:
            return ta / args[1]
        tb = tb * out
        return (-tb if ta is None else ta - tb) / args[1]


class Neg(Op):
    """d(-self) = -grad"""

    __slots__ = ()

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                               "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        return np.negative(self)

    def backward(ctx, grad):
        return -grad

    def raw(ctx, grad):
        return wrap_raw(_neg(grad._data))

    jvp = linear


def _neg(a):
    """``Neg``'s kernel (what ``-grad`` computes)."""
    return Neg.forward(None, a)


def _int_pow(base, exponent):
    """Integer power as torch computes it: negative exponents give 1 for base 1, +-1 for base -1, else 0."""
    neg = exponent < 0
    if not np.any(neg):
        return np.power(base, exponent)
    out = np.power(base, np.where(neg, 0, exponent))
    one = base == 1
    minus_one = base == -1
    odd = (exponent % 2) != 0
    repl = np.where(one, 1, np.where(minus_one, np.where(odd, -1, 1), 0))
    return np.where(neg, repl, out)


# NOTE [scalar powers]: torch computes x**e for a number e with cheaper kernels where one gives the same value:
# 2 -> x*x, 3 -> x*x*x, -2 -> 1/(x*x), 0.5 -> sqrt, -0.5 -> 1/sqrt, -1 -> 1/x, 1 -> a copy, 0 -> ones. NumPy's
# general power is also slow for negative bases (~50x: its vector loop falls back to scalar calls there), so the
# remaining exponents compute |x|**e and fix the sign (odd integers: -|x|**e where x's sign bit is set; other
# integers: |x|**e; non-integers: nan for finite x < 0, as pow's definition). Each path is tested against the
# general power (tests/ops/test_pow_fast_paths.py); the backward formulas call pow again, so they take them too.
# float16/bfloat16: the general power in float32, rounded once, as torch's 16-bit kernels.
_SCALAR_POW = {e: silent(f) for e, f in {
    2.0: lambda x: np.multiply(x, x),
    3.0: lambda x: np.multiply(np.multiply(x, x), x),
    -2.0: lambda x: np.reciprocal(np.multiply(x, x)),
    0.5: np.sqrt,
    -0.5: lambda x: np.reciprocal(np.sqrt(x)),
    -1.0: np.reciprocal,
    1.0: lambda x: x.copy(),
    0.0: np.ones_like,
}.items()}


_to_reduced = silent(lambda a, dt: a.astype(dt))  # overflow to inf without a warning, as torch


def _float_pow_scalar(base, e):
    """``base ** e`` for a floating array and a finite Python real ``e`` (NOTE [scalar powers])."""
    if base.dtype.itemsize == 2:  # float16, bfloat16: torch's kernel is the general power, in float32
        return _to_reduced(_abs_pow(base.astype(np.float32), e), base.dtype)
    fast = _SCALAR_POW.get(e)
    return fast(base) if fast is not None else _abs_pow(base, e)


def _abs_pow(base, e):
    out = _B.asarray(_power(np.abs(base), e))
    if float(e).is_integer():
        if e % 2:
            np.negative(out, out=out, where=np.signbit(base))
    else:
        out[(base < 0) & (base > -np.inf)] = np.nan
    return out


def _pow_forward(base, exponent):
    dt = _rt(base, exponent)
    base, exponent = _prep(base, exponent, dt)
    te = type(exponent)
    if ((te is _int or (te is _float and math.isfinite(exponent))) and _B.is_array(base)
            and (dt.kind == "f" or dt in D._REDUCED_NP)):  # (any device: torch's CUDA kernel has the same paths)
        out = _float_pow_scalar(base, exponent)
        return out if type(out) is type(base) else _B.asarray(out, dt)
    try:
        if dt.kind in "iu":
            if type(exponent) not in _ARR and exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            out = _int_pow(base, exponent)
        else:
            out = _power(base, exponent)
    except ValueError:
        raise _broadcast_error(base, exponent) from None
    return _B.asarray(out, dt) if type(out) is not _nd or out.dtype != dt else out


class Pow(Op):
    """d(self**exponent) = grad*exponent*self**(exponent-1), grad*result*log(self) (0 where self == 0 <= exponent)"""

    __slots__ = ()
    _name = "PowBackward1"
    inputs = ("self", "exponent")
    save = ("self", "exponent", "result")
    holomorphic = True

    forward = staticmethod(lambda ctx, self, other: _pow_forward(self, other))

    def backward(ctx, grad):
        self, exponent, result = ctx.saved_tensors
        n0, n1 = ctx._next
        ga = _pow_self_grad(grad, self, exponent) if n0[0] is not None else None
        gb = _pow_exponent_grad(grad, self, exponent, result) if n1[0] is not None else None
        return ga, gb

    @staticmethod
    def jvp(args, out, tangents):  # elementwise: each input's term is its backward formula on the tangent
        self, exponent = args[0], args[1]
        ta, tb = tangents[0], tangents[1] if len(tangents) > 1 else None
        if ta is not None:
            ta = _pow_self_grad(ta, self, exponent)
        if tb is not None:
            tb = _pow_exponent_grad(tb, self, exponent, out)
        return ta if tb is None else (tb if ta is None else ta + tb)


def _nonneg(exponent):
    """exponent >= 0, for a complex exponent: real and >= 0 (torch's condition for a zero base)."""
    if exponent._dtype.is_complex:
        return (exponent.imag == 0) & (exponent.real >= 0)
    return exponent >= 0


def _pow_self_grad(grad, self, exponent):
    if isinstance(exponent, (int, float)):
        if exponent == 0:
            return grad * 0
        return grad * (exponent * self.pow(exponent - 1))
    from .indexing import where

    return where(exponent == 0, 0.0, grad * (exponent * self.pow(exponent - 1)))


def _pow_exponent_grad(grad, base, exponent, result):
    from .indexing import where
    from .elementwise import log

    if isinstance(base, Tensor):
        mask = (base == 0) & _nonneg(exponent)
        return grad * where(mask, 0.0, result * log(base.to(result.dtype)))
    if base == 0:
        return grad * where(_nonneg(exponent), 0.0, result * -math.inf)
    if result._dtype.is_complex:  # the principal log of the base (a negative base has an imaginary part pi)
        return grad * (result * cmath.log(base))
    return grad * (result * float(_log(np.float64(base))))  # nan for a negative base, as torch


class PowScalar(Pow):
    """d(self**exponent) = grad*exponent*self**(exponent-1) (Python-number exponent)"""

    __slots__ = ()
    _name = "PowBackward0"
    nattrs = 1  # the exponent is an attribute, not an input: one edge, as torch's Tensor_Scalar overload
    reduced_native = True  # 16-bit bases: NOTE [scalar powers] decides (torch's half kernel is the general power)
    inputs = ("self", "exponent")
    save = ("self", "exponent")

    def backward(ctx, grad):
        self, exponent = ctx.saved_tensors
        return _pow_self_grad(grad, self, exponent)


class RPow(Pow):
    """d(base**self) = grad*result*log(base) (Python-number base)"""

    __slots__ = ()
    _name = "PowBackward2"


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    if type(alpha) is not int or alpha != 1:
        _alpha_check(input, other, alpha)
    return _out(Add.apply(input, other, alpha), out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if type(alpha) is not int or alpha != 1:
        _alpha_check(input, other, alpha)
    return _out(Sub.apply(input, other, alpha), out)


def _alpha_check(input, other, alpha) -> None:
    """torch's alpha_check: alpha must fit the result's kind (no complex alpha for real tensors, no floating alpha
    for integral ones)."""
    if isinstance(alpha, (complex, float)):
        dt = D.result_type(input, other)
        if isinstance(alpha, complex) and not dt.is_complex:
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
        if isinstance(alpha, float) and dt._kind < 2:
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def subtract(input, other, alpha=1, *, out=None):
    """``input - alpha * other`` (torch's subtract also takes ``alpha`` positionally)."""
    if type(alpha) is not int or alpha != 1:
        _alpha_check(input, other, alpha)
    return _out(Sub.apply(input, other, alpha), out)


def rsub(input, other, alpha=1):
    """``other - alpha * input``."""
    return Rsub.apply(input, other, alpha)


def mul(input, other, *, out=None):
    """Elementwise product."""
    return _out(Mul.apply(input, other), out)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """Elementwise true division (``rounding_mode`` 'trunc' / 'floor' round the quotient)."""
    if rounding_mode is None:
        return _out(Div.apply(input, other), out)
    from . import elementwise as _E

    return _out(_E.div_rounding(input, other, rounding_mode), out)


divide = div


def true_divide(input, other):
    return Div.apply(input, other)


def rdiv(input, other):
    """``other / input`` for a Python number ``other``: ``input.reciprocal() * other``, as torch records it."""
    from .elementwise import reciprocal

    return Mul.apply(reciprocal(input), other)


def neg(input):
    """Elementwise ``-input``."""
    return Neg.apply(input)


negative = neg


def pow(input, exponent, *, out=None):  # noqa: A001 - torch's name
    """Elementwise power; either argument may be a Python number."""
    if not isinstance(input, Tensor):
        return _out(RPow.apply(input, exponent), out)
    if not isinstance(exponent, Tensor):
        return _out(PowScalar.apply(input, exponent), out)
    return _out(Pow.apply(input, exponent), out)


def _out(result, out):
    if out is None:
        return result
    from ._inplace import copy_out

    return copy_out(out, result)


_args.install(globals(), ("add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "pow",
                          "neg", "negative"), out=("neg", "negative", "true_divide"))

# NOTE [in-place without a graph] (ops/_inplace.py)
_IP._IN_PLACE_UFUNCS.update({add: silent(np.add), sub: silent(np.subtract), mul: silent(np.multiply)})


# ---------------------------------------------------------------- unary plus
__all__ += ["positive"]


def positive(input: Tensor) -> Tensor:
    """``input`` itself (+x); bool tensors are refused as torch does."""
    _tensor_arg("positive", input)
    if input._dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


_args.install(globals(), ("positive",))


from .linalg import matmul, mm  # noqa: E402  (re-export; linalg imports nothing from here)
