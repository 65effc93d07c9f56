"""Padding layers: constant / zero / reflection / replication / circular, 1-d and 2-d (and 3-d)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * self._nd)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _make(base, mode: str | None, nd: int, name: str):
    attrs = {"_nd": nd, "__doc__": f"{name}: pads the last {nd} dim(s) of the input.", "__module__": __name__}
    if mode is not None:
        attrs["_mode"] = mode
    return type(name, (base,), attrs)


ConstantPad1d = _make(_ConstantPadNd, None, 1, "ConstantPad1d")
ConstantPad2d = _make(_ConstantPadNd, None, 2, "ConstantPad2d")
ConstantPad3d = _make(_ConstantPadNd, None, 3, "ConstantPad3d")
ZeroPad1d = _make(_ZeroPadNd, None, 1, "ZeroPad1d")
ZeroPad2d = _make(_ZeroPadNd, None, 2, "ZeroPad2d")
ZeroPad3d = _make(_ZeroPadNd, None, 3, "ZeroPad3d")
ReflectionPad1d = _make(_PadNd, "reflect", 1, "ReflectionPad1d")
ReflectionPad2d = _make(_PadNd, "reflect", 2, "ReflectionPad2d")
ReflectionPad3d = _make(_PadNd, "reflect", 3, "ReflectionPad3d")
ReplicationPad1d = _make(_PadNd, "replicate", 1, "ReplicationPad1d")
ReplicationPad2d = _make(_PadNd, "replicate", 2, "ReplicationPad2d")
ReplicationPad3d = _make(_PadNd, "replicate", 3, "ReplicationPad3d")
CircularPad1d = _make(_PadNd, "circular", 1, "CircularPad1d")
CircularPad2d = _make(_PadNd, "circular", 2, "CircularPad2d")
CircularPad3d = _make(_PadNd, "circular", 3, "CircularPad3d")
