"""Process-wide switches of torch's top level, kept with torch's semantics and messages.

Determinism, float32 matmul precision, warn-always, inter-op threads, denormal flushing, the default tensor type
and autocast's thread-local state. ember computes with NumPy on the CPU, so most switches only record the user's
choice (NumPy's kernels are deterministic and always compute float32 products in float32). Autocast regions and
the op policies that read this state are in ember/amp.
"""
from __future__ import annotations

import threading
import warnings

from . import _dtype as D

__all__ = [
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
    "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal", "set_default_tensor_type",
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
]

_S = {"deterministic": False, "warn_only": False, "matmul_precision": "highest", "warn_always": False,
      "interop_threads": 2, "autocast_cache": True, "nesting": 0}
_DEBUG_MODES = ("default", "warn", "error")


def _expect_bool(fname: str, value, arg: str = "mode") -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (ember's NumPy kernels always are); recorded for the queries."""
    _expect_bool("_set_deterministic_algorithms", mode)
    _S["deterministic"], _S["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return _S["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _S["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """'default'/0: off, 'warn'/1: deterministic with warn_only, 'error'/2: deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    _S["deterministic"], _S["warn_only"] = debug_mode > 0, debug_mode == 1


def get_deterministic_debug_mode() -> int:
    if not _S["deterministic"]:
        return 0
    return 1 if _S["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium'; ember's float32 products always use full float32 ('highest' accuracy)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _S["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _S["matmul_precision"]


def set_warn_always(b: bool) -> None:
    """Warn every time instead of once for warnings torch issues only once."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _S["warn_always"] = b


def is_warn_always_enabled() -> bool:
    return _S["warn_always"]


def get_num_interop_threads() -> int:
    return _S["interop_threads"]


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _S["interop_threads"] = num


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal flushing could be set: False, NumPy gives no control over the FPU's denormal mode."""
    return False


def set_default_tensor_type(t) -> None:
    """Deprecated in torch for set_default_dtype: accepts torch.FloatTensor/DoubleTensor/HalfTensor or their names."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if isinstance(t, str) and not t.startswith("torch."):
        raise ModuleNotFoundError(f"No module named '{t.split('.')[0]}'")
    short = (name or "").rsplit(".", 1)[-1]
    if isinstance(t, str) and t.count(".") > 1:
        raise TypeError(f"type {t} not available: ember tensors live on the CPU")
    by_name = {d._scalar_name + "Tensor": d for d in D.ALL}
    dtype = by_name.get(short)
    if dtype is None:
        raise TypeError(f"invalid type: '{t}'")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)


# ---------------------------------------------------------------- autocast state
# (thread-local, as torch's; the regions and op policies are in ember/amp)
# torch's device types (the order of its error message) and the default autocast dtype of those that have one
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                 "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16, "hip": D.float16, "xla": D.bfloat16, "xpu": D.float16,
                   "mps": D.float16, "hpu": D.bfloat16, "ipu": D.float16, "privateuseone": D.float16,
                   "mtia": D.float16, "maia": D.float16}
_AVAILABLE = ("cpu", "cuda", "xpu", "ipu", "hpu", "xla", "mps", "mtia", "maia", "privateuseone")


class _AutocastState(threading.local):
    """Per thread, as torch's: a new thread starts with autocast off and the default dtypes."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, D.dtype] = {}
        self.cache_enabled = True
        self.nesting = 0
        # ``cpu``: CPU autocast is on and no autocast-listed op is running (what the op wrappers test, one read)
        self.cpu = False
        self.cpu_dtype = D.bfloat16


_tls = _AutocastState()
# fp32 leaf weight (by id) -> (weak reference to it, its cast), torch's cache of lower-precision weight casts;
# process-wide and locked, as torch's
_cache: dict = {}
_cache_lock = threading.Lock()


def _device(device_type) -> str:
    if not isinstance(device_type, str) or device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether torch has autocast for ``device_type`` (the answer of CPU torch's build)."""
    return _device(device_type) in _AVAILABLE


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: cuda, as torch)."""
    return _tls.enabled.get("cuda" if device_type is None else _device(device_type), False)


def set_autocast_enabled(device_type=None, enabled=None) -> None:
    """Switch autocast for ``device_type`` in this thread (the one-argument form, positional or ``enabled=``, is
    cuda's, deprecated in torch)."""
    if enabled is None or device_type is None:
        warnings.warn("torch.set_autocast_enabled(enabled) is deprecated. Please use "
                      "torch.set_autocast_enabled(dev_type, enabled) instead.", DeprecationWarning, stacklevel=2)
        device_type, enabled = "cuda", (device_type if enabled is None else enabled)
    _tls.enabled[_device(device_type)] = bool(enabled)
    if device_type == "cpu":
        _refresh_cpu()


def get_autocast_dtype(device_type: str) -> D.dtype | None:
    """The dtype autocast casts to on ``device_type`` (CPU: bfloat16 unless set)."""
    device_type = _device(device_type)
    return _tls.dtype.get(device_type, _DEFAULT_DTYPES.get(device_type))


def set_autocast_dtype(device_type: str, dtype) -> None:
    _tls.dtype[_device(device_type)] = D.to_dtype(dtype)
    if device_type == "cpu":
        _refresh_cpu()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return _tls.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _tls.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the cached lower-precision casts of weights (autocast does this on leaving its outermost region)."""
    with _cache_lock:
        _cache.clear()


def autocast_increment_nesting() -> int:
    _tls.nesting += 1
    return _tls.nesting


def autocast_decrement_nesting() -> int:
    _tls.nesting -= 1
    return _tls.nesting


class _cpu_autocast_off:
    """Run a block as inside an autocast-listed op: CPU autocast casts nothing there (restored after)."""

    def __enter__(self):
        self.prev, _tls.cpu = _tls.cpu, False

    def __exit__(self, *exc) -> None:
        _tls.cpu = self.prev


def _refresh_cpu() -> None:
    """Recompute the flag the op wrappers read, loading and installing the CPU op policies on first use."""
    on = _tls.enabled.get("cpu", False)
    if on:
        from .amp import _policy

        _policy.install()
    _tls.cpu_dtype = get_autocast_dtype("cpu")
    _tls.cpu = on
