"""torch.nn.attention: choosing the scaled_dot_product_attention kernels (``sdpa_kernel``, ``SDPBackend``) and
attention biases (``bias``). ember computes attention one way (the math form); the switches are recorded with
torch's state and refusals (turning off every kernel a CPU can run makes attention raise, as torch)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterable

from ..._lazy import attach
from ...backends import SDPBackend, _SDP

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False
SDPBackend.__module__ = __name__  # (torch re-homes its enum here too)

# switch name -> backend, in torch's listing order
_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "mem_efficient": "EFFICIENT_ATTENTION",
                  "math": "MATH", "overrideable": "OVERRIDEABLE"}
_priority = [1, 2, 0, 3, 4]  # torch's default order of preference (backend values)


def _backend_from_string(name: str) -> SDPBackend:
    return getattr(SDPBackend, name)


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list:
    """The enabled backends (in torch's listing order, or by priority)."""
    backends = [getattr(SDPBackend, val) for name, val in _backend_names.items() if _SDP.get(name, True)]
    if with_priority:
        backends.sort(key=lambda b: _priority.index(int(b)))
    return backends


def _sdpa_kernel(backends: Iterable, set_priority: bool = False) -> None:
    for name, val in _backend_names.items():
        _SDP[name] = getattr(SDPBackend, val) in backends
    if set_priority:
        order = [int(b) for b in backends]
        _priority[:] = order + [b for b in _priority if b not in order]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Inside the block, scaled_dot_product_attention may use only ``backends`` (``set_priority``: in that order
    of preference)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


@contextlib.contextmanager
def _sdpa_kernel_variadic(*backends: SDPBackend):
    with sdpa_kernel(list(backends)):
        yield


__getattr__, __dir__ = attach(__name__, {"bias": ".bias"})
