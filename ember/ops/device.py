"""Moving a tensor between devices (NOTE [device seam] in ember/_backend.py)."""
from __future__ import annotations

from .. import _backend as B
from ._op import Op, linear

__all__ = ["ToDevice", "to_device"]


class ToDevice(Op):
    """d x.to(device) = grad.to(x.device)"""

    _name = "ToCopyBackward0"  # torch records a device move as ToCopy, as a dtype conversion
    _alias = True  # the registry's ToCopyBackward0 is the dtype conversion (ops/shape.py)
    __slots__ = ("src",)
    jvp = linear
    nattrs = 1
    reduced_native = True  # moves the stored 16-bit values as they are
    moves = True  # its result is on another device by design (NOTE [device check] in ops/_op.py)

    @staticmethod
    def forward(ctx, self, dev):
        if ctx is not None:
            ctx.src = B.device_of(self)
        return B.to_device(self, dev)

    def backward(ctx, grad):
        return ToDevice.apply(grad, ctx.src)


def to_device(t, dev):
    """``t`` on ``dev`` (itself when it is there already), recorded for autograd."""
    return ToDevice.apply(t, dev)
