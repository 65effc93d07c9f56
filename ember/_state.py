"""Process-wide switches of torch's top level, kept with torch's semantics and messages.

Determinism, float32 matmul precision, warn-always, inter-op threads, denormal flushing, the default tensor type
and autocast. ember computes with NumPy on the CPU, so most switches only record the user's choice (NumPy's
kernels are deterministic and always compute float32 products in float32); autocast is a no-op only where torch's
is (disabled, or a dtype torch refuses on the CPU) and an explicit error where it would need dtypes or kernels
ember does not have.
"""
from __future__ import annotations

import warnings

from . import _dtype as D

__all__ = [
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
    "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal", "set_default_tensor_type",
    "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
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


# ---------------------------------------------------------------- autocast
# device type -> [enabled, dtype]; torch's CPU default is bfloat16, which ember lacks: None stands for it
_AUTOCAST = {"cpu": [False, None], "cuda": [False, D.float16]}
_CPU_DEFAULT_NAME = "bfloat16"


def _device_key(device_type: str) -> str:
    if device_type not in _AUTOCAST:
        raise RuntimeError(f"Expected one of cpu, cuda, ... device type at start of device string: {device_type}")
    return device_type


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    return _AUTOCAST[_device_key(device_type)][0]


def set_autocast_enabled(device_type=None, enabled: bool | None = None) -> None:
    if enabled is None:  # the deprecated one-argument form (positional or enabled=) is about cuda
        device_type, enabled = "cuda", device_type
    elif device_type is None:
        device_type = "cuda"
    if enabled:
        _refuse_autocast(device_type, None)
    _AUTOCAST[_device_key(device_type)][0] = bool(enabled)


def get_autocast_dtype(device_type: str):
    """The autocast dtype of ``device_type`` (None for the CPU's default, bfloat16, which ember lacks)."""
    return _AUTOCAST[_device_key(device_type)][1]


def set_autocast_dtype(device_type: str, dtype) -> None:
    _AUTOCAST[_device_key(device_type)][1] = dtype


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return _S["autocast_cache"]


def set_autocast_cache_enabled(enabled: bool) -> None:
    _S["autocast_cache"] = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing is cached: ember never autocasts."""


def autocast_increment_nesting() -> int:
    _S["nesting"] += 1
    return _S["nesting"]


def autocast_decrement_nesting() -> int:
    _S["nesting"] -= 1
    return _S["nesting"]


def _refuse_autocast(device_type: str, dtype) -> None:
    if device_type != "cpu":
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}': ember computes on "
                           "the CPU only")
    name = _CPU_DEFAULT_NAME if dtype is None else getattr(dtype, "name", str(dtype))
    raise NotImplementedError(
        f"autocast to {name} is not implemented in ember (it has no bfloat16, and it does not cast ops to float16 "
        "automatically): run in float32, cast the model with .half() yourself, or pass enabled=False")


class autocast:  # noqa: N801 - torch's name
    """torch.autocast. ember does not autocast: entering with enabled=False is a no-op; a dtype torch itself
    refuses on the CPU (float32, float64 ...) warns and disables as torch does; bfloat16 (torch's CPU default)
    and float16 raise NotImplementedError with the alternatives."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cpu" and dtype is not None and dtype is not D.float16:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            _refuse_autocast(device_type, dtype)

    def __enter__(self):
        self._prev = _AUTOCAST[_device_key(self.device)][0]
        _AUTOCAST[self.device][0] = self._enabled
        autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _AUTOCAST[self.device][0] = self._prev
        autocast_decrement_nesting()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return run
