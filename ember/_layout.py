"""torch.layout and torch.memory_format values (only strided tensors exist here)."""
from __future__ import annotations

__all__ = ["layout", "strided", "memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class layout:
    """How a tensor's elements are stored; ember only has ``strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return self.name


class memory_format(layout):
    """The layout asked of a new tensor (``contiguous_format``, ``preserve_format`` ...)."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
