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
import time
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

    # streams and events (ember/cuda/streams.py): the objects keep the backend's in ``_impl``
    _streams: dict = {}  # (stream_id, device_index) -> the torch.cuda.Stream made for it

    def _stream(self, cls, impl, index: int):
        from .streams import Stream

        key = (self._stream_id(impl), index)
        found = _Backed._streams.get(key)
        if found is None:
            found = object.__new__(cls or Stream)
            found._impl, found.device_index, found.device_type = impl, index, 1
            found.stream_id, found.cuda_stream = key[0], key[0]
            _Backed._streams[key] = found
        return found

    def new_stream(self, cls, priority: int = 0, **kwargs):
        return self._stream(cls, self._new_stream(priority, kwargs.get("stream_ptr")), self.current_device())

    def current_stream(self, index):
        return self._stream(None, self._current_stream(), self.current_device() if index is None else index)

    def default_stream(self, index):
        return self._stream(None, self._default_stream(), self.current_device() if index is None else index)

    def set_stream(self, stream_id: int, device_index: int, device_type: int) -> None:
        self._use_stream(_Backed._streams[(stream_id, device_index)]._impl)


class StandInRuntime(_Backed):
    """The stand-in cuda device: one device, nothing allocated on it (its arrays are host memory), all work done
    when it is queued (streams and events only keep order and time)."""

    _current_stream_impl = 0
    _next_stream = 1

    @staticmethod
    def _stream_id(impl) -> int:
        return impl

    def _new_stream(self, priority: int, ptr):
        if ptr is not None:
            return int(ptr)
        StandInRuntime._next_stream += 1
        return StandInRuntime._next_stream

    def _current_stream(self):
        return StandInRuntime._current_stream_impl

    def _default_stream(self):
        return 0

    def _use_stream(self, impl) -> None:
        StandInRuntime._current_stream_impl = impl

    def synchronize_stream(self, stream) -> None:
        return None

    def query_stream(self, stream) -> bool:
        return True

    def new_event(self, event, enable_timing: bool, blocking: bool, interprocess: bool, external: bool) -> None:
        event._impl, event._timing = None, enable_timing

    def record_event(self, event, stream) -> None:
        event._impl = time.perf_counter()

    def wait_event(self, event, stream) -> None:
        return None

    def query_event(self, event) -> bool:
        return True

    def synchronize_event(self, event) -> None:
        return None

    def elapsed_time(self, start, end) -> float:
        if not (start._timing and end._timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if start._impl is None or end._impl is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end._impl - start._impl) * 1e3

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

    @staticmethod
    def _stream_id(impl) -> int:
        return impl.ptr

    def _new_stream(self, priority: int, ptr):
        cp = self._cp()
        if ptr is not None:
            return cp.cuda.ExternalStream(int(ptr))
        return cp.cuda.Stream(non_blocking=False, priority=priority)

    def _current_stream(self):
        return self._cp().cuda.get_current_stream()

    def _default_stream(self):
        return self._cp().cuda.Stream.null

    def _use_stream(self, impl) -> None:
        impl.use()

    def synchronize_stream(self, stream) -> None:
        stream._impl.synchronize()

    def query_stream(self, stream) -> bool:
        return bool(stream._impl.done)

    def new_event(self, event, enable_timing: bool, blocking: bool, interprocess: bool, external: bool) -> None:
        event._impl = self._cp().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                            interprocess=interprocess)
        event._timing = enable_timing

    def record_event(self, event, stream) -> None:
        event._impl.record(stream._impl)

    def wait_event(self, event, stream) -> None:
        stream._impl.wait_event(event._impl)

    def query_event(self, event) -> bool:
        return bool(event._impl.done)

    def synchronize_event(self, event) -> None:
        event._impl.synchronize()

    def elapsed_time(self, start, end) -> float:
        return float(self._cp().cuda.get_elapsed_time(start._impl, end._impl))

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
        _Backed._streams.clear()
        cuda._initialized = False
        cuda._queued_calls.clear()
