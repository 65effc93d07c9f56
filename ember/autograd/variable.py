"""``Variable``: the pre-0.4 name of Tensor, kept for old code."""
from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)`` returns a Tensor (Variables and Tensors merged)."""

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        t = data.detach()
        t.requires_grad_(requires_grad)
        return t
