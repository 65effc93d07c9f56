"""``Variable``: the pre-0.4 name of Tensor, kept for old code."""
from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: the engine's public hooks (final callbacks)."""

    @staticmethod
    def queue_callback(callback) -> None:
        """Call ``callback()`` once the running backward pass has finished."""
        from .engine import queue_callback  # noqa: PLC0415 - engine imports the Tensor layer

        queue_callback(callback)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)`` returns a Tensor (Variables and Tensors merged)."""

    _execution_engine = _ExecutionEngine()

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        t = data.detach()
        t.requires_grad_(requires_grad)
        return t
