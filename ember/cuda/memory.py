"""torch.cuda.memory: the CUDA caching allocator's statistics and controls.

Without CUDA nothing is allocated: the statistics are empty (0 bytes), and the controls raise what a CPU-only
torch raises (NOTE [cuda seam]).
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from contextlib import contextmanager

from . import _device_index, _lazy_init, _select, current_device, is_initialized, runtime

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_disabled",
           "caching_allocator_enable", "get_per_process_memory_fraction", "set_per_process_memory_fraction",
           "empty_cache", "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached", "host_memory_stats",
           "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
           "reset_peak_host_memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_snapshot", "memory_summary",
           "list_gpu_processes", "mem_get_info", "get_allocator_backend", "change_current_allocator", "MemPool",
           "use_mem_pool"]


def _flatten(nested: dict, prefix: str = "") -> OrderedDict:
    """{"a": {"b": 1}} -> {"a.b": 1}, keys sorted as torch's."""
    flat = []

    def walk(obj, key):
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{key}.{k}" if key else k)
        else:
            flat.append((key, obj))

    walk(nested, prefix)
    return OrderedDict(sorted(flat))


def memory_stats_as_nested_dict(device=None) -> dict:
    if not is_initialized():
        return {}
    return runtime.memory_stats(_device_index(device, optional=True))


def memory_stats(device=None) -> OrderedDict:
    """The allocator's counters ("allocated_bytes.all.current" ...): empty before CUDA initialises."""
    return _flatten(memory_stats_as_nested_dict(device))


def host_memory_stats_as_nested_dict() -> dict:
    if not is_initialized():
        return {}
    return runtime.host_memory_stats()


def host_memory_stats() -> OrderedDict:
    return _flatten(host_memory_stats_as_nested_dict())


def memory_allocated(device=None) -> int:
    """Bytes held by tensors on the device: 0 without CUDA."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None) -> int:
    """Deprecated name of memory_reserved."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of max_memory_reserved."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    index = _device_index(device, optional=True)
    return runtime.reset_peak_memory_stats(index)


def reset_accumulated_memory_stats(device=None) -> None:
    index = _device_index(device, optional=True)
    return runtime.reset_accumulated_memory_stats(index)


def reset_max_memory_allocated(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_accumulated_host_memory_stats() -> None:
    return runtime.reset_accumulated_host_memory_stats()


def reset_peak_host_memory_stats() -> None:
    return runtime.reset_peak_host_memory_stats()


def empty_cache() -> None:
    """Release cached blocks (nothing is cached without CUDA)."""
    if is_initialized():
        runtime.empty_cache()


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A printable table of the allocator's statistics."""
    stats = memory_stats(_device_index(device, optional=True))
    allocated = stats["allocated_bytes.all.current"]
    return runtime.memory_summary(allocated, stats, abbreviated)


def memory_snapshot(mempool_id=None, include_traces=True):
    return runtime.memory_snapshot((0, 0, include_traces) if mempool_id is None else mempool_id)["segments"]


def list_gpu_processes(device=None) -> str:
    """The processes using the device, as text (NVML's answer)."""
    try:
        import pynvml  # noqa: F401
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    return runtime.list_gpu_processes(device)


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the device."""
    _lazy_init()
    return runtime.mem_get_info(_device_index(device if device is not None else current_device()))


def caching_allocator_alloc(size, device=None, stream=None):
    _lazy_init()
    return runtime.raw_alloc(size, device, stream)


def caching_allocator_delete(mem_ptr) -> None:
    runtime.raw_delete(mem_ptr)


def caching_allocator_enable(value: bool = True) -> None:
    if is_initialized():
        runtime.enable_allocator(value)


@contextmanager
def caching_allocator_disabled():
    """Allocate without the cache inside the block."""
    previous = runtime.allocator_enabled()
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(previous)


def set_per_process_memory_fraction(fraction, device=None) -> None:
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    runtime.set_memory_fraction(fraction, _device_index(current_device() if device is None else device))


def get_per_process_memory_fraction(device=None) -> float:
    _lazy_init()
    return runtime.get_memory_fraction(_device_index(current_device() if device is None else device))


def get_allocator_backend() -> str:
    return runtime.allocator_backend()


def change_current_allocator(allocator) -> None:
    runtime.change_current_allocator(allocator)


class MemPool:
    """A private allocation pool (needs CUDA)."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Tried to instantiate dummy base class MemPool")


@contextmanager
def use_mem_pool(pool, device=None):
    """Route this thread's allocations to ``pool`` inside the block."""
    index = current_device() if device is None else _device_index(device)
    with _select(index):
        yield runtime.use_mem_pool(pool, index)
