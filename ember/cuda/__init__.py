"""ember.cuda: there is no GPU backend; the queries answer as torch does on a CPU-only build."""
from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "current_device", "empty_cache"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """No-op without CUDA (as torch's)."""


def manual_seed_all(seed: int) -> None:
    """No-op without CUDA (as torch's)."""


def synchronize(device=None) -> None:
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device() -> int:
    raise AssertionError("Torch not compiled with CUDA enabled")


def empty_cache() -> None:
    """Nothing to free without CUDA."""


def is_initialized() -> bool:
    return False
