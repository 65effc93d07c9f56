"""torch.cpu: the CPU device module (always available, one device) and its ``amp`` namespace."""
from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing runs asynchronously on the CPU."""
