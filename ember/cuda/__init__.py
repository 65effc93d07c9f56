"""ember.cuda: torch.cuda as a CPU-only torch build answers it.

There is no GPU backend: every function gives what torch's CPU wheel gives (False, 0, an empty dict, or its
error with its message), written against the runtime seam (NOTE [cuda seam] in ``_runtime.py``) so that a GPU
backend can later answer instead.
"""
from __future__ import annotations

import importlib.util

from .. import _backend as _B
from .. import _dtype as D
from .._device import device as _device_cls
from .._malloc import OutOfMemoryError
from ..storage import _warn_typed_storage_removal
from . import _runtime
from ._runtime import runtime

__all__ = [
    "is_available", "device_count", "is_initialized", "init", "current_device", "set_device", "device", "device_of",
    "synchronize", "ipc_collect", "get_device_name", "get_device_capability", "get_device_properties",
    "can_device_access_peer", "is_bf16_supported", "is_tf32_supported", "get_arch_list", "get_gencode_flags",
    "current_stream", "default_stream", "get_stream_from_external", "set_stream", "stream", "StreamContext",
    "Stream", "Event", "ExternalStream", "current_blas_handle", "current_solver_handle", "set_sync_debug_mode",
    "get_sync_debug_mode", "cudart", "check_error", "cudaStatus", "CudaError", "DeferredCudaCallError",
    "OutOfMemoryError", "AcceleratorError", "has_half", "has_magma", "default_generators", "utilization",
    "memory_usage", "temperature", "power_draw", "clock_rate", "device_memory_used",
    "CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing",
    "nvtx", "profiler", "nccl", "memory", "random", "streams", "graphs",
]

_NO_CUDA = "Torch not compiled with CUDA enabled"
_cudart = None  # the CUDA runtime API module; None without CUDA (torch's message names its missing attributes)
_initialized = False
_queued_calls: list = []  # seeding calls made before initialisation run when CUDA initialises, as torch's

has_half = True
has_magma = False
default_generators: tuple = ()


class DeferredCudaCallError(Exception):
    """A call queued before CUDA initialised failed when it ran."""


class AcceleratorError(RuntimeError):
    """An error reported by an accelerator runtime (torch.AcceleratorError)."""


class cudaStatus:
    """CUDA runtime status codes torch names."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class CudaError(RuntimeError):
    """An error code of the CUDA runtime, with its text."""

    def __init__(self, code: int) -> None:
        msg = _cudart.cudaGetErrorString(_cudart.cudaError(code))
        super().__init__(f"{msg} ({code})")


def check_error(res: int) -> None:
    """Raise CudaError unless ``res`` is the runtime's success code."""
    if res != _cudart.cudaError.success:
        raise CudaError(res)


# ---------------------------------------------------------------- initialisation and devices
def _is_compiled() -> bool:
    return runtime.compiled


def is_available() -> bool:
    """Whether a CUDA device can be used: False without CUDA."""
    return _is_compiled() and runtime.device_count() > 0


def device_count() -> int:
    """The number of CUDA devices: 0 without CUDA."""
    return runtime.device_count() if _is_compiled() else 0


def is_initialized() -> bool:
    return _initialized


def _lazy_init() -> None:
    """Initialise CUDA once; torch's AssertionError without it."""
    global _initialized
    if _initialized:
        return
    if not _is_compiled():
        raise AssertionError(_NO_CUDA)
    runtime.init()
    _initialized = True
    for call in _queued_calls:
        try:
            call()
        except Exception as e:  # noqa: BLE001 - re-raised with the deferral named, as torch
            raise DeferredCudaCallError(f"CUDA call failed lazily at initialization with error: {e}") from e
    _queued_calls.clear()


def init() -> None:
    """Initialise CUDA (torch's AssertionError without it)."""
    _lazy_init()


def _lazy_call(call) -> None:
    if _initialized:
        call()
    else:
        _queued_calls.append(call)


def _current_index():
    """The current device's index, or None when there is no CUDA device (torch's optional default)."""
    return runtime.current_device() if is_available() else None


def _device_index(dev, optional: bool = False, allow_cpu: bool = False):
    """The CUDA device index ``dev`` names (an int, "cuda:1", a device, a ``cuda.device``), with torch's errors."""
    if isinstance(dev, int):
        return dev
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if allow_cpu:
            if dev.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {dev}")
        elif dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        index = -1 if dev.type == "cpu" else dev.index
    elif isinstance(dev, device):
        return dev.idx
    else:
        index = None
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{dev}")
        index = _current_index()
    return index


def _exchange_device(index: int) -> int:
    """Make ``index`` current and return the previous one (a negative index changes nothing)."""
    if index < 0:
        return -1
    if not _is_compiled():
        raise RuntimeError("PyTorch was compiled without CUDA support")
    return runtime.exchange_device(index)


class device:
    """Context manager selecting a CUDA device (a no-op for a negative index)."""

    def __init__(self, device) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc) -> bool:
        self.idx = _exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager selecting the device of a tensor (a no-op for a CPU tensor)."""

    def __init__(self, obj) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


_select = device  # for functions whose ``device`` parameter hides the class


def current_device() -> int:
    _lazy_init()
    return runtime.current_device()


def set_device(device) -> None:
    """Select the current CUDA device (a no-op for a negative index)."""
    index = _device_index(device)
    if index >= 0:
        runtime.set_device(index)


def synchronize(device=None) -> None:
    """Wait for the device's queued work."""
    _lazy_init()
    with _select(device):
        runtime.synchronize()
    _B.check_pending()  # NOTE [device-side asserts]


def ipc_collect() -> None:
    _lazy_init()
    return runtime.ipc_collect()


def get_device_properties(device=None):
    """The properties (name, memory, capability ...) of a CUDA device."""
    _lazy_init()
    index = _device_index(device, optional=True)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return runtime.device_properties(index)


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    props = get_device_properties(device)
    return props.major, props.minor


def can_device_access_peer(device, peer_device) -> bool:
    _lazy_init()
    index, peer = _device_index(device, optional=True), _device_index(peer_device)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    if peer < 0 or peer >= device_count():
        raise AssertionError("Invalid peer device id")
    return runtime.can_access_peer(index, peer)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device computes in bfloat16: False without CUDA."""
    if not is_available():
        return False
    return runtime.device_properties(current_device()).major >= 8 or bool(including_emulation)


def is_tf32_supported() -> bool:
    return is_bf16_supported(including_emulation=False)


def get_arch_list() -> list:
    """The CUDA architectures this build was compiled for: none."""
    return runtime.arch_list() if _is_compiled() else []


def get_gencode_flags() -> str:
    flags = [arch.split("_") for arch in get_arch_list()]
    return " ".join(f"-gencode compute=compute_{arch},code={kind}_{arch}" for kind, arch in flags)


def cudart():
    """The CUDA runtime API module."""
    _lazy_init()
    return _cudart


def current_blas_handle():
    _lazy_init()
    return runtime.current_blas_handle()


def current_solver_handle():
    _lazy_init()
    return runtime.current_solver_handle()


def set_sync_debug_mode(debug_mode) -> None:
    _lazy_init()
    if isinstance(debug_mode, str):
        if debug_mode not in ("default", "warn", "error"):
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = ("default", "warn", "error").index(debug_mode)
    runtime.set_sync_debug_mode(debug_mode)


def get_sync_debug_mode() -> int:
    _lazy_init()
    return runtime.get_sync_debug_mode()


# ---------------------------------------------------------------- NVML queries (need nvidia-ml-py and a driver)
def _nvml(device=None):
    if importlib.util.find_spec("pynvml") is None:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.")
    return runtime.nvml_handle(device)


def utilization(device=None) -> int:
    return _nvml(device).utilization


def memory_usage(device=None) -> int:
    return _nvml(device).memory_usage


def temperature(device=None) -> int:
    return _nvml(device).temperature


def power_draw(device=None) -> int:
    return _nvml(device).power_draw


def clock_rate(device=None) -> int:
    return _nvml(device).clock_rate


def device_memory_used(device=None) -> int:
    return _nvml(device).memory_used


# ---------------------------------------------------------------- legacy typed tensors and storages
class _CudaTensorType(type):
    """``torch.cuda.FloatTensor`` and friends: names whose construction fails without CUDA, as torch's."""

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. {_NO_CUDA}.")

    def __instancecheck__(cls, obj) -> bool:
        return False  # no tensor lives on a CUDA device here

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


class _CudaStorageType(type):
    def __call__(cls, *args, **kwargs):
        _warn_typed_storage_removal()
        _lazy_init()
        return runtime.storage(cls.dtype, *args, **kwargs)

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


_LEGACY = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
           "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool"}
for _name, _dt in _LEGACY.items():
    _attrs = {"dtype": getattr(D, _dt, None), "is_cuda": True, "__module__": __name__}
    globals()[_name + "Tensor"] = _CudaTensorType(_name + "Tensor", (), dict(_attrs))
    globals()[_name + "Storage"] = _CudaStorageType(_name + "Storage", (), dict(_attrs))
    __all__ += [_name + "Tensor", _name + "Storage"]
for _name, _dt in (("ComplexFloat", "complex64"), ("ComplexDouble", "complex128")):
    globals()[_name + "Storage"] = _CudaStorageType(_name + "Storage", (), {"dtype": getattr(D, _dt, None),
                                                                            "__module__": __name__})
    __all__.append(_name + "Storage")
del _name, _dt, _attrs

from .random import (manual_seed, manual_seed_all, seed, seed_all, initial_seed, get_rng_state,  # noqa: E402
                     get_rng_state_all, set_rng_state, set_rng_state_all)
from .memory import *  # noqa: E402,F401,F403 - torch.cuda re-exports its memory functions
from .memory import __all__ as _memory_all  # noqa: E402
from .streams import Stream, Event, ExternalStream, StreamContext, stream, set_stream  # noqa: E402
from .streams import current_stream, default_stream, get_stream_from_external  # noqa: E402
from .graphs import CUDAGraph, graph, graph_pool_handle, make_graphed_callables  # noqa: E402
from .graphs import is_current_stream_capturing  # noqa: E402
from . import graphs, memory, nccl, nvtx, profiler, random, streams  # noqa: E402
from . import amp  # noqa: E402,F401 - torch.cuda.amp (deprecated spellings of torch.amp)

__all__ += ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
            "get_rng_state_all", "set_rng_state", "set_rng_state_all", *_memory_all]

_runtime.select()
