"""The one place ember.cuda asks a CUDA runtime anything (see NOTE [cuda seam]).

# NOTE [cuda seam]
ember.cuda's public functions are written once, with torch's checks and messages, against ``runtime``: an
object offering the calls a CUDA runtime answers (device count, current device, synchronize, allocator
statistics ...). This build has no GPU backend, so ``runtime`` is ``NotCompiled``, which stands for a CPU-only
torch build: ``compiled`` is False, so the functions that first initialise CUDA raise torch's AssertionError
("Torch not compiled with CUDA enabled"), and every call is missing, so the few public functions that reach
a runtime call without initialising (``set_device``, ``reset_peak_memory_stats`` ...) raise the
AttributeError a CPU-only torch raises for its missing binding (the binding's name is in ``_BINDINGS``).
A GPU backend (CuPy) becomes a second class with the same calls, chosen here; nothing else changes.
"""
from __future__ import annotations

__all__ = ["runtime", "NotCompiled"]

# runtime call -> the torch._C binding a CPU-only torch build lacks (named in its AttributeError)
_BINDINGS = {
    "device_count": "_cuda_getDeviceCount", "init": "_cuda_init", "current_device": "_cuda_getDevice",
    "set_device": "_cuda_setDevice", "exchange_device": "_cuda_exchangeDevice", "synchronize": "_cuda_synchronize",
    "memory_stats": "_cuda_memoryStats", "reset_peak_memory_stats": "_cuda_resetPeakMemoryStats",
    "reset_accumulated_memory_stats": "_cuda_resetAccumulatedMemoryStats",
    "host_memory_stats": "_cuda_hostMemoryStats",
    "reset_peak_host_memory_stats": "_cuda_resetPeakHostMemoryStats",
    "reset_accumulated_host_memory_stats": "_cuda_resetAccumulatedHostMemoryStats",
    "empty_cache": "_cuda_emptyCache", "raw_delete": "_cuda_cudaCachingAllocator_raw_delete",
    "allocator_enabled": "_cuda_cudaCachingAllocator_is_enabled",
    "enable_allocator": "_cuda_cudaCachingAllocator_enable",
    "change_current_allocator": "_cuda_changeCurrentAllocator", "allocator_backend": "_cuda_getAllocatorBackend",
    "memory_snapshot": "_cuda_memorySnapshot", "set_stream": "_cuda_setStream",
    "tunableop_is_enabled": "_cuda_tunableop_is_enabled", "nccl_version": "_nccl_version",
}


class NotCompiled:
    """The runtime of a build without CUDA: not compiled, and no call exists."""

    compiled = False

    def __getattr__(self, name: str):
        raise AttributeError(f"module 'torch._C' has no attribute '{_BINDINGS.get(name, name)}'")


runtime = NotCompiled()
