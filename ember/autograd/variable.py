"""``Variable``: the pre-0.4 name of Tensor, kept for old code."""
import warnings

import numpy as np

from .._tensor import Tensor, _wrap_any


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

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        t = _wrap_any(np.empty(0, np.float32)) if data is None else data.detach()
        t.requires_grad_(requires_grad)
        return t
