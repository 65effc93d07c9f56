"""ember.mps: torch.mps (Apple's Metal GPUs) as a build without MPS answers it."""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["compile_shader", "device_count", "get_rng_state", "manual_seed", "seed", "set_rng_state", "synchronize",
           "empty_cache", "set_per_process_memory_fraction", "current_allocated_memory", "driver_allocated_memory",
           "recommended_max_memory", "load_metallib", "is_available", "Event", "profiler"]


def _no_mps(call: str):
    raise RuntimeError(f"Cannot execute {call}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize() -> None:
    _no_mps("deviceSynchronize")


def get_rng_state(device="mps"):
    _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    _no_mps("getDefaultGenerator")


def manual_seed(seed: int) -> None:
    """Seed the MPS generator: a no-op without MPS, as torch's."""


def seed() -> None:
    _no_mps("getDefaultGenerator")


def empty_cache() -> None:
    _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction) -> None:
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    _no_mps("setMemoryFraction")


def current_allocated_memory() -> int:
    _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    _no_mps("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    _no_mps("getRecommendedMaxMemory")


def compile_shader(source: str):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    raise RuntimeError("MPS is not available")


class Event:
    """An MPS event (needs MPS)."""

    def __init__(self, enable_timing: bool = False) -> None:
        _no_mps("acquireEvent")


class profiler:  # noqa: N801 - torch.mps.profiler is a namespace
    """torch.mps.profiler: Metal signposts (need MPS)."""

    @staticmethod
    def start(mode: str = "interval", wait_until_completed: bool = False) -> None:
        _no_mps("profilerStartTrace")

    @staticmethod
    def stop() -> None:
        _no_mps("profilerStopTrace")

    @staticmethod
    def is_metal_capture_enabled() -> bool:
        raise AttributeError("module 'torch._C' has no attribute '_mps_isCaptureEnabled'")

    @staticmethod
    @contextmanager
    def profile(mode: str = "interval", wait_until_completed: bool = False):
        try:
            profiler.start(mode, wait_until_completed)
            yield
        finally:
            profiler.stop()
