"""ember.accelerator: torch.accelerator, the device-generic accelerator API. Where cuda is available (CuPy, or the
test stand-in) the queries name it; otherwise they answer False/0/None and everything that needs a device raises
torch's error."""
from __future__ import annotations

import warnings

from . import _backend as _B
from ._device import device as _device_cls

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index", "get_device_capability",
           "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache", "get_memory_info",
           "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _no_accelerator(*args):
    raise RuntimeError(_NONE)


def _index(device, optional: bool = False) -> int:
    """The device index ``device`` names, with torch's errors (a device or string needs an accelerator)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device_cls(device)
    if isinstance(device, _device_cls):
        raise RuntimeError("Accelerator expected")
    if not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    return current_device_index()


def is_available() -> bool:
    return _B.cuda_available()  # cuda, where CuPy (or the test stand-in) provides it


def device_count() -> int:
    return _B.cuda_device_count() if _B.cuda_available() else 0


def current_accelerator(check_available: bool = False):
    """The accelerator's device (None: the CPU is the only device)."""
    return _device_cls("cuda") if _B.cuda_available() else None


def current_device_index() -> int:
    if _B.cuda_available():
        from . import cuda

        return cuda.current_device()
    _no_accelerator()


def current_device_idx() -> int:
    """Deprecated name of current_device_index."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    _no_accelerator(_index(device))


def set_device_idx(device, /) -> None:
    """Deprecated name of set_device_index."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def get_device_capability(device=None, /) -> dict:
    _no_accelerator(_index(device, optional=True))


def current_stream(device=None, /):
    _no_accelerator(_index(device, optional=True))


def set_stream(stream) -> None:
    raise TypeError(f"_accelerator_setStream(): incompatible function arguments. The following argument types are "
                    f"supported:\n    1. (arg0: torch.Stream) -> None\n\nInvoked with: {stream!r}")


def synchronize(device=None, /) -> None:
    if _B.cuda_available() and not isinstance(device, (str, _device_cls)):
        from . import cuda

        return cuda.synchronize(device)
    _no_accelerator(_index(device, optional=True))


def empty_cache() -> None:
    _no_accelerator()


def empty_host_cache() -> None:
    _no_accelerator()


def get_memory_info(device_index=None, /) -> tuple:
    _no_accelerator(_index(device_index, optional=True))


def memory_stats(device_index=None, /):
    _no_accelerator()  # asking whether the allocator is initialised already needs an accelerator


def memory_allocated(device_index=None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    _no_accelerator()  # asking whether the allocator is initialised already needs an accelerator


def reset_peak_memory_stats(device_index=None, /) -> None:
    _no_accelerator()  # asking whether the allocator is initialised already needs an accelerator


class device_index:  # noqa: N801 - torch's name
    """Context manager selecting an accelerator device index (None: no-op)."""

    def __init__(self, device, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is None:
            return
        if not isinstance(self.idx, int):
            raise TypeError(f"_accelerator_exchangeDevice(): incompatible function arguments. The following argument "
                            f"types are supported:\n    1. (arg0: typing.SupportsInt | typing.SupportsIndex) -> int"
                            f"\n\nInvoked with: {self.idx!r}")
        _no_accelerator()

    def __exit__(self, *exc) -> None:
        return None


class Graph:
    """A captured accelerator graph (needs an accelerator)."""

    def __init__(self, *args, **kwargs) -> None:
        _no_accelerator()
