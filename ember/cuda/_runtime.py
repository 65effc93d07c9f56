"""The one place ember.cuda asks a CUDA runtime anything (see NOTE [cuda seam]).

# NOTE [cuda seam]
ember.cuda's public functions are written once, with torch's checks and messages, against ``runtime``: an
object offering the calls a CUDA runtime answers (device count, current device, synchronize, allocator
statistics ...). This build has no GPU backend, so ``runtime`` is ``NotCompiled``, which stands for a CPU-only
torch build: ``compiled`` is False, so the functions that first initialise CUDA raise torch's AssertionError
("Torch not compiled with CUDA enabled"), and every call is missing, so the few public functions that reach
a runtime call without initialising (``set_device``, ``reset_peak_memory_stats`` ...) raise the
AttributeError a CPU-only torch raises for its missing binding (the binding's name is in ``_BINDINGS``).
A GPU backend is a subclass with those calls: ``CuPyRuntime`` where CuPy sees a GPU, ``StandInRuntime`` for the
NumPy-backed test device (NOTE [cuda stand-in] in ember/_backend.py). ``select()`` picks one by switching the
class of the one ``runtime`` object (modules keep their reference to it); calls a backend lacks still raise the
missing binding's AttributeError.
"""
from __future__ import annotations

import importlib.util
import random as _pyrandom
from types import SimpleNamespace

__all__ = ["runtime", "NotCompiled", "StandInRuntime", "CuPyRuntime", "select"]

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


class _Backed(NotCompiled):
    """The calls every backend answers the same way; subclasses give the device-specific ones."""

    compiled = True
    _current = 0
    _seed = 67280421310721  # torch's default CUDA seed
    _peak = 0

    def init(self) -> None:
        return None

    def current_device(self) -> int:
        return type(self)._current

    def set_device(self, index: int) -> None:
        if index >= self.device_count():
            raise RuntimeError("CUDA error: invalid device ordinal")
        type(self)._current = index

    def exchange_device(self, index: int) -> int:
        prev = self.current_device()
        self.set_device(index)
        return prev

    def ipc_collect(self) -> None:
        return None

    def can_access_peer(self, index: int, peer: int) -> bool:
        return index != peer

    def arch_list(self) -> list:
        return ["sm_90"]

    def manual_seed(self, seed: int, all_devices: bool) -> None:
        type(self)._seed = seed

    def seed(self, all_devices: bool) -> None:
        type(self)._seed = _pyrandom.getrandbits(63)

    def initial_seed(self) -> int:
        return type(self)._seed

    def _stats(self, used: int, held: int) -> dict:
        cls = type(self)
        cls._peak = max(cls._peak, used)
        return {"allocated_bytes": {"all": {"current": used, "peak": cls._peak}},
                "reserved_bytes": {"all": {"current": held, "peak": max(held, cls._peak)}}}

    def reset_peak_memory_stats(self, index) -> None:
        type(self)._peak = 0

    def reset_accumulated_memory_stats(self, index) -> None:
        return None

    def host_memory_stats(self) -> dict:
        return {}


class StandInRuntime(_Backed):
    """The stand-in cuda device: one device, nothing allocated on it (its arrays are host memory)."""

    def device_count(self) -> int:
        return 1

    def synchronize(self) -> None:
        return None

    def memory_stats(self, index) -> dict:
        return self._stats(0, 0) if index in (None, 0) else {}

    def empty_cache(self) -> None:
        return None

    def device_properties(self, index: int):
        return SimpleNamespace(name=f"ember stand-in {index} (NumPy)", major=9, minor=0, total_memory=0,
                               multi_processor_count=1, is_integrated=False, uuid="stand-in")


class CuPyRuntime(_Backed):
    """CUDA through CuPy: its runtime, its default memory pool and its RNG."""

    @staticmethod
    def _cp():
        from .._backend import cupy

        return cupy()

    def device_count(self) -> int:
        cp = self._cp()
        return 0 if cp is None else cp.cuda.runtime.getDeviceCount()

    def current_device(self) -> int:
        return self._cp().cuda.runtime.getDevice()

    def set_device(self, index: int) -> None:
        self._cp().cuda.runtime.setDevice(index)

    def synchronize(self) -> None:
        self._cp().cuda.runtime.deviceSynchronize()

    def memory_stats(self, index) -> dict:
        cp = self._cp()
        with cp.cuda.Device(cp.cuda.runtime.getDevice() if index is None else index):
            pool = cp.get_default_memory_pool()  # (one pool per device)
            return self._stats(pool.used_bytes(), pool.total_bytes())

    def empty_cache(self) -> None:
        self._cp().get_default_memory_pool().free_all_blocks()

    def manual_seed(self, seed: int, all_devices: bool) -> None:
        super().manual_seed(seed, all_devices)
        self._cp().random.seed(seed)

    def device_properties(self, index: int):
        p = self._cp().cuda.runtime.getDeviceProperties(index)
        name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
        return SimpleNamespace(name=name, major=p["major"], minor=p["minor"], total_memory=p["totalGlobalMem"],
                               multi_processor_count=p["multiProcessorCount"], is_integrated=bool(p["integrated"]),
                               uuid="")


def select() -> None:
    """Point ``runtime`` at the backend the device seam provides now (stand-in, CuPy or none)."""
    from .. import _backend
    from .. import cuda

    if _backend.stand_in_enabled():
        cls = StandInRuntime
    elif importlib.util.find_spec("cupy") is not None:  # imported when first asked (NOTE [device seam])
        cls = CuPyRuntime
    else:
        cls = NotCompiled
    if type(runtime) is not cls:
        runtime.__class__ = cls
        cuda._initialized = False
        cuda._queued_calls.clear()
