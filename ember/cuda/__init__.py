"""ember.cuda: there is no GPU backend; the queries answer as torch's CPU-only build does."""
from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed", "seed_all", "synchronize",
           "current_device", "empty_cache", "is_initialized", "get_device_name", "get_device_properties",
           "get_device_capability", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "is_bf16_supported", "get_arch_list", "get_rng_state", "get_rng_state_all", "initial_seed",
           "current_stream", "mem_get_info", "ipc_collect", "device"]

_NO_CUDA = "Torch not compiled with CUDA enabled"


def _unavailable(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def get_arch_list() -> list:
    return []


def get_rng_state_all() -> list:
    return []


def manual_seed(seed: int) -> None:
    """No-op without CUDA (as torch's)."""


def manual_seed_all(seed: int) -> None:
    """No-op without CUDA (as torch's)."""


def seed() -> None:
    """No-op without CUDA (as torch's)."""


def seed_all() -> None:
    """No-op without CUDA (as torch's)."""


def empty_cache() -> None:
    """Nothing to free without CUDA."""


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


# Everything that needs a GPU raises torch's AssertionError.
synchronize = current_device = get_device_name = get_device_properties = get_device_capability = _unavailable
get_rng_state = initial_seed = current_stream = mem_get_info = ipc_collect = _unavailable


class device:
    """``with ember.cuda.device(i):`` parses; nothing runs on a GPU here."""

    def __init__(self, device) -> None:
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

from . import amp  # noqa: E402,F401 - torch.cuda.amp (deprecated spellings of torch.amp)
