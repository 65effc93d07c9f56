"""What torch's multi-GPU helpers do on a machine without one: device indices and the missing collectives."""
from __future__ import annotations

from ..._device import device as _device_cls

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def device_index(dev, optional: bool = False) -> int | None:
    """A device's index as torch._utils._get_device_index reads it (a CPU device refused); an unindexed device
    or None reads as the current accelerator's, None here."""
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if dev.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {dev}")
        if dev.index is not None:
            return dev.index
    elif isinstance(dev, int):
        return dev
    if not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{dev}")
    return None


def no_collective(name: str) -> AttributeError:
    """The error torch's CPU build gives where a helper reaches its CUDA collective kernel (``torch._C._scatter``,
    ``_broadcast_coalesced`` ... are compiled into CUDA builds only)."""
    return AttributeError(f"module 'torch._C' has no attribute '_{name}'")


def cpu_tensors(what: str) -> AssertionError:
    """torch's refusal to broadcast or gather tensors that live on the CPU."""
    return AssertionError(f"{what} function not implemented for CPU tensors")
