"""Comparisons and logical/bitwise operators (results carry no gradient)."""
from __future__ import annotations

import numpy as np

from .. import _args
from .. import _dtype as D
from . import _inplace as _IP
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor
from ._op import Op
from .arithmetic import _rt, _prep, _broadcast_error

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "equal", "allclose", "isclose"]


_ORDERED = frozenset(("Lt", "Le", "Gt", "Ge"))  # no order on complex numbers: torch has no complex kernels


def _make(name: str, ufunc, promote: bool = True):
    ordered = name in _ORDERED

    def forward(ctx, self, other):
        if promote:
            dt = _rt(self, other)
            if ordered and dt.kind == "c":
                raise NotImplementedError(f'"{name.lower()}_cpu" not implemented for \'{_IP._title(D.from_numpy_dtype(dt))}\'')
            self, other = _prep(self, other, dt)
        try:
            return np.asarray(ufunc(self, other))
        except ValueError:
            raise _broadcast_error(self, other) from None

    def backward(ctx, grad):
        return None, None

    return type(name, (Op,), {"__slots__": (), "forward": staticmethod(forward), "backward": backward,
                              "__doc__": f"{name} (not differentiable)"})


_TABLE = {
    "Eq": np.equal, "Ne": np.not_equal, "Lt": np.less, "Le": np.less_equal, "Gt": np.greater,
    "Ge": np.greater_equal, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or,
    "LogicalXor": np.logical_xor, "BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
}
_OPS = {n: _make(n, f) for n, f in _TABLE.items()}


def _check_int(a, name: str):
    if a.dtype.kind == "f":
        raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')


def eq(input, other):
    return _OPS["Eq"].apply(input, other)


def ne(input, other):
    return _OPS["Ne"].apply(input, other)


def lt(input, other):
    return _OPS["Lt"].apply(input, other)


def le(input, other):
    return _OPS["Le"].apply(input, other)


def gt(input, other):
    return _OPS["Gt"].apply(input, other)


def ge(input, other):
    return _OPS["Ge"].apply(input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_and(input, other):
    return _OPS["LogicalAnd"].apply(input, other)


def logical_or(input, other):
    return _OPS["LogicalOr"].apply(input, other)


def logical_xor(input, other):
    return _OPS["LogicalXor"].apply(input, other)


class LogicalNot(Op):
    """logical not (not differentiable)"""

    __slots__ = ()
    forward = staticmethod(lambda ctx, self: np.logical_not(self))

    def backward(ctx, grad):
        return None


class BitwiseNot(Op):
    """bitwise not on integers and bools (not differentiable)"""

    __slots__ = ()

    @staticmethod
    def forward(ctx, self):
        if self.dtype.kind in "fc":
            raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_IP._title(D.from_numpy_dtype(self.dtype))}\'')
        return np.invert(self)

    def backward(ctx, grad):
        return None


def logical_not(input):
    return LogicalNot.apply(input)


def _bitwise(name):
    kernel = "bitwise_" + name[7:].lower() + "_cpu"

    def fn(input, other):
        for x in (input, other):
            d = getattr(x, "_dtype", None)
            if (d is not None and (d.is_complex or d.is_floating_point)) or isinstance(x, (float, complex)):
                dt = _rt(input._data if isinstance(input, Tensor) else input,
                         other._data if isinstance(other, Tensor) else other)
                raise NotImplementedError(f'"{kernel}" not implemented for \'{_IP._title(D.from_numpy_dtype(dt))}\'')
        return _OPS[name].apply(input, other)
    return fn


bitwise_and = _bitwise("BitwiseAnd")
bitwise_or = _bitwise("BitwiseOr")
bitwise_xor = _bitwise("BitwiseXor")


def bitwise_not(input):
    return BitwiseNot.apply(input)


def equal(input, other) -> bool:
    """True when both tensors have the same shape and elements."""
    return input.equal(other)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Elementwise |input - other| <= atol + rtol * |other| (bool tensor)."""
    if input._dtype is not other._dtype:
        from ._inplace import _title

        raise RuntimeError(f"{_title(input._dtype)} did not match {_title(other._dtype)}")
    close = input == other  # equal values (infinities of one sign too) are close
    if input._dtype.name == "bool":
        return close
    if input._dtype.is_floating_point or rtol or atol:
        a = input if input._dtype.is_floating_point else input.double()
        b = other if other._dtype.is_floating_point else other.double()
        close = close | (b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs()))
    if equal_nan:
        close = close | (input.isnan() & other.isnan())
    return close


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True when every element of ``input`` is close to ``other``'s (see ``isclose``)."""
    return input.allclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)


# NOTE [foreign errors] (ember/_malloc.py)
_translate_errors_of(globals(), ("allclose", "isclose"))

_COMPARISONS = ("eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or logical_xor "
                "logical_not bitwise_and bitwise_or bitwise_xor bitwise_not").split()
_args.install(globals(), _COMPARISONS + ["equal", "allclose", "isclose"], out=_COMPARISONS)
_IP._KEEPS_TANGENT.update({logical_and, logical_or, logical_xor, logical_not})
