"""Comparisons and logical/bitwise operators (results carry no gradient)."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _args
from .. import _dtype as D
from . import _inplace as _IP
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor
from ._op import Op
from ._table import Comparison, Names, export
from .arithmetic import _rt, _prep, _broadcast_error


_ORDERED = frozenset(("Lt", "Le", "Gt", "Ge"))  # no order on complex numbers: torch has no complex kernels


def _make(row: Comparison):
    """The Op of a row of ``_COMPARISONS``."""
    name, ufunc = row.node, row.kernel
    ordered = name in _ORDERED

    def forward(ctx, self, other):
        dt = _rt(self, other)
        if ordered and dt.kind == "c":
            raise NotImplementedError(f'"{name.lower()}_cpu" not implemented for \'{_IP._title(D.from_numpy_dtype(dt))}\'')
        self, other = _prep(self, other, dt)
        try:
            return _B.asarray(ufunc(self, other))
        except ValueError:
            raise _broadcast_error(self, other) from None

    def backward(ctx, grad):
        return None, None

    return type(name, (Op,), {"__slots__": (), "forward": staticmethod(forward), "backward": backward,
                              "__doc__": f"{name} (not differentiable)"})


# public name: its row (NOTE [one row per op] in ops/_table.py); ``integers``: bitwise ops, refusing floating and
# complex operands with torch's error
_COMPARISONS = {
    "eq": Comparison("Eq", np.equal), "ne": Comparison("Ne", np.not_equal, aliases=("not_equal",)),
    "lt": Comparison("Lt", np.less, aliases=("less",)), "le": Comparison("Le", np.less_equal, aliases=("less_equal",)),
    "gt": Comparison("Gt", np.greater, aliases=("greater",)),
    "ge": Comparison("Ge", np.greater_equal, aliases=("greater_equal",)),
    "logical_and": Comparison("LogicalAnd", np.logical_and), "logical_or": Comparison("LogicalOr", np.logical_or),
    "logical_xor": Comparison("LogicalXor", np.logical_xor),
    "bitwise_and": Comparison("BitwiseAnd", np.bitwise_and, integers=True),
    "bitwise_or": Comparison("BitwiseOr", np.bitwise_or, integers=True),
    "bitwise_xor": Comparison("BitwiseXor", np.bitwise_xor, integers=True),
}
_OPS = {row.node: _make(row) for row in _COMPARISONS.values()}


def _comparison_function(name: str, row: Comparison, alias: str = ""):
    """The public function of a row of ``_COMPARISONS`` (an alias is the same function: torch.greater is gt)."""
    if alias:
        return globals()[name]
    op = _OPS[row.node]
    if not row.integers:
        def fn(input, other):
            return op.apply(input, other)
    else:
        kernel = name + "_cpu"

        def fn(input, other):
            for x in (input, other):
                d = getattr(x, "_dtype", None)
                if (d is not None and (d.is_complex or d.is_floating_point)) or isinstance(x, (float, complex)):
                    dt = _rt(input._data if isinstance(input, Tensor) else input,
                             other._data if isinstance(other, Tensor) else other)
                    raise NotImplementedError(f'"{kernel}" not implemented for \'{_IP._title(D.from_numpy_dtype(dt))}\'')
            return op.apply(input, other)
    fn.__name__ = fn.__qualname__ = name
    return fn


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

# functions written by hand with no row of their own (NOTE [one row per op]: the names they declare); equal and
# allclose are methods of Tensor's own
_WRITTEN = {"logical_not": Names(function="written"), "bitwise_not": Names(function="written"),
            "isclose": Names(inplace=False, function="written"),
            **{n: Names(method=False, inplace=False, function="written") for n in ("equal", "allclose")}}
EXPORTS = export(globals(), (_COMPARISONS, _WRITTEN), {Comparison: _comparison_function})
__all__ = EXPORTS.public
_args.install(globals(), __all__, out=[n for n in __all__ if n not in ("equal", "allclose", "isclose")])
_IP._KEEPS_TANGENT.update(globals()[n] for n in ("logical_and", "logical_or", "logical_xor", "logical_not"))
