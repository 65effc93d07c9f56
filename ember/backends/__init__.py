"""ember.backends: the switches torch code reads and sets to pick kernels (torch.backends).

ember computes with NumPy on the CPU, so no switch changes a result: they keep torch's defaults, type checks,
messages and context managers (``with torch.backends.cudnn.flags(enabled=False):``), and the availability
queries answer for ember itself (no cuDNN, MPS, oneDNN or MKL kernels here).

# NOTE [backend flag modules]
torch makes ``torch.backends.cudnn`` a module object whose attributes are properties, so that
``cudnn.benchmark = True`` runs a setter (with its type check) instead of rebinding a module global. Here each
backend is an instance of a ``_Backend`` subclass (a ``types.ModuleType``) whose flags are ``_Flag`` descriptors
over one dict of values; it is registered in ``sys.modules`` so ``import ember.backends.cudnn`` works. After
``disable_global_flags()`` flags can only change inside ``flags()`` blocks, as torch's.
"""
from __future__ import annotations

import enum
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from contextlib import contextmanager

from .. import _state

__all__ = ["cpu", "cuda", "cudnn", "cusparselt", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum",
           "disable_global_flags", "flags_frozen", "flags", "set_flags"]

_frozen = [False]


def disable_global_flags() -> None:
    """From now on, flags change only inside ``flags()`` context managers."""
    _frozen[0] = True


def flags_frozen() -> bool:
    return _frozen[0]


@contextmanager
def _unfrozen():
    old, _frozen[0] = _frozen[0], False
    try:
        yield
    finally:
        _frozen[0] = old


class _Flag:
    """A module property over ``module._values[key]``; ``check`` names torch's setter for its bool check."""

    def __init__(self, key: str, check: str | None = None, on_set=None) -> None:
        self.key, self.check, self.on_set = key, check, on_set

    def __get__(self, module, owner=None):
        return self if module is None else module._values[self.key]

    def __set__(self, module, value) -> None:
        if _frozen[0]:
            raise RuntimeError(f"not allowed to set {module.__name__} flags after disable_global_flags; please use "
                               f"flags() context manager instead")
        if self.check is not None and not isinstance(value, bool):
            raise RuntimeError(f"{self.check} expects a bool, but got {type(value).__name__}")
        if self.on_set is not None:
            self.on_set(value)
        module._values[self.key] = value


class _Computed:
    """A module property computed from other state (its getter and setter)."""

    def __init__(self, get, set_) -> None:
        self.get, self.set = get, set_

    def __get__(self, module, owner=None):
        return self if module is None else self.get()

    def __set__(self, module, value) -> None:
        self.set(value)


class _Backend(types.ModuleType):
    """A torch.backends.<name> module: functions, constants and ``_Flag`` properties."""

    _defaults: dict = {}

    def __init__(self, name: str) -> None:
        super().__init__(f"{__name__}.{name}")
        self._values = dict(self._defaults)
        self.__spec__ = importlib.machinery.ModuleSpec(self.__name__, None)  # importlib.util.find_spec needs one
        sys.modules[self.__name__] = self

    def __getattr__(self, name: str):
        raise AttributeError(f"module 'torch.backends.{self.__name__.rsplit('.', 1)[-1]}' has no attribute '{name}'")


def _false(*args, **kwargs) -> bool:
    return False


# ---------------------------------------------------------------- float32 precision (matmul / conv / rnn)
_TO_FP32 = {"highest": "none", "high": "tf32", "medium": "tf32"}


def _fp32_get() -> str:
    return _TO_FP32[_state.get_float32_matmul_precision()]


def _fp32_set(value: str) -> None:
    if value not in ("none", "ieee", "tf32", "bf16"):
        raise RuntimeError(f"Unknown precision: {value}")
    _state.set_float32_matmul_precision("high" if value == "tf32" else "medium" if value == "bf16" else "highest")


def _allow_tf32_set(value) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
    _state.set_float32_matmul_precision("high" if value else "highest")


class _FP32Precision:
    """``backends.<x>.<op>.fp32_precision``: the precision float32 products of one kind may use."""

    def __init__(self, default: str) -> None:
        object.__setattr__(self, "_value", default)

    def __getattr__(self, name: str):
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value) -> None:
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        if value not in ("none", "ieee", "tf32", "bf16"):
            raise RuntimeError(f"Unknown precision: {value}")
        object.__setattr__(self, "_value", value)

    @property
    def fp32_precision(self) -> str:
        return self._value


class _Matmul:
    """``backends.cuda.matmul``: cuBLAS precision switches (allow_tf32 mirrors set_float32_matmul_precision)."""

    _KEYS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
             "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(zip(self._KEYS, (True, True, False))))

    allow_tf32 = property(lambda self: _state.get_float32_matmul_precision() != "highest",
                          lambda self, v: _allow_tf32_set(v))
    fp32_precision = property(lambda self: _fp32_get(), lambda self, v: _fp32_set(v))

    def __getattr__(self, name: str):
        if name in self._KEYS:
            return self._values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value) -> None:
        if name in ("allow_tf32", "fp32_precision"):
            object.__setattr__(self, name, value)
        elif name in self._KEYS:
            self._values[name] = bool(value[0] if isinstance(value, tuple) else value)
        else:
            raise AttributeError("Unknown attribute " + name)


# ---------------------------------------------------------------- cudnn
class _Cudnn(_Backend):
    _defaults = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True,
                 "fp32_precision": "none", "depthwise_kernel": "auto"}
    enabled = _Flag("enabled", "set_enabled_cudnn")
    benchmark = _Flag("benchmark", "set_benchmark_cudnn")
    deterministic = _Flag("deterministic", "set_deterministic_cudnn")
    allow_tf32 = _Flag("allow_tf32", "set_allow_tf32_cudnn")
    fp32_precision = _Flag("fp32_precision")
    depthwise_kernel = _Flag("depthwise_kernel")
    benchmark_limit = None  # cuDNN's limit exists only where cuDNN does
    conv = _FP32Precision("tf32")
    rnn = _FP32Precision("tf32")
    is_available = staticmethod(_false)

    @staticmethod
    def version():
        """cuDNN's version: None without cuDNN."""
        return None

    def is_acceptable(self, tensor) -> bool:
        """Whether cuDNN could run on ``tensor``: never without CUDA tensors."""
        if not self.enabled or tensor.device.type != "cuda":
            return False
        warnings.warn("PyTorch was compiled without cuDNN/MIOpen support. To use cuDNN/MIOpen, rebuild PyTorch making "
                      "sure the library is visible to the build system.", stacklevel=2)
        return False

    def set_flags(self, _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
                  _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None) -> tuple:
        """Set the given flags; returns the previous ones (in set_flags' argument order)."""
        v = self._values
        old = (v["enabled"], v["benchmark"], None, v["deterministic"], v["allow_tf32"], v["fp32_precision"],
               v["depthwise_kernel"])
        for name, value in (("enabled", _enabled), ("benchmark", _benchmark), ("deterministic", _deterministic),
                            ("allow_tf32", _allow_tf32), ("fp32_precision", _fp32_precision),
                            ("depthwise_kernel", _depthwise_kernel)):
            if value is not None:
                setattr(self, name, value)
        return old

    @contextmanager
    def flags(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
              fp32_precision="none", depthwise_kernel="auto"):
        """Set the cuDNN flags for the block (torch's defaults: cuDNN disabled), then restore them."""
        with _unfrozen():
            old = self.set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
                                 depthwise_kernel)
        try:
            yield
        finally:
            with _unfrozen():
                self.set_flags(*old)


# ---------------------------------------------------------------- cuda (cuBLAS, cuFFT, attention kernels)
class _Enum(enum.IntEnum):
    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class SDPBackend(_Enum):
    """The kernels scaled_dot_product_attention can use (torch.nn.attention.SDPBackend)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


class _LinalgBackend(_Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(_Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "fp16_bf16_reduction_math": False,
        "overrideable": True}  # (overrideable: switched by nn.attention.sdpa_kernel only)


def _sdp_switch(key: str, refusal: str):
    """The enable/query pair of one attention kernel switch; ``refusal`` starts torch's non-bool error."""
    def enable(enabled: bool) -> None:
        if not isinstance(enabled, bool):
            raise RuntimeError(f"{refusal}{type(enabled).__name__}")
        _SDP[key] = enabled

    def query() -> bool:
        return _SDP[key]

    enable.__doc__ = f"Allow or forbid the {key} attention kernel (ember always computes the math form)."
    return enable, query


class _Cuda(_Backend):
    matmul = _Matmul()
    SDPBackend = SDPBackend
    is_built = staticmethod(_false)
    is_flash_attention_available = staticmethod(_false)
    is_ck_sdpa_available = staticmethod(_false)
    # torch's own messages (three switches report the math setter; the cudnn one keeps a stray "%s")
    enable_flash_sdp, flash_sdp_enabled = map(staticmethod, _sdp_switch(
        "flash", "set_sdp_use_math expects a bool, but got "))
    enable_mem_efficient_sdp, mem_efficient_sdp_enabled = map(staticmethod, _sdp_switch(
        "mem_efficient", "set_sdp_use_math expects a bool, but got "))
    enable_math_sdp, math_sdp_enabled = map(staticmethod, _sdp_switch(
        "math", "set_sdp_use_math expects a bool, but got "))
    enable_cudnn_sdp, cudnn_sdp_enabled = map(staticmethod, _sdp_switch(
        "cudnn", "set_sdp_use_cudnn expects a bool, but got %s"))
    allow_fp16_bf16_reduction_math_sdp, fp16_bf16_reduction_math_sdp_allowed = map(staticmethod, _sdp_switch(
        "fp16_bf16_reduction_math", "set_sdp_allow_fp16_bf16_reduction_math expects a bool, but got "))

    @staticmethod
    @contextmanager
    def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
                   enable_cudnn: bool = True):
        """Deprecated: allow only the given attention kernels inside the block."""
        warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                      "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                      "updated signature.", FutureWarning, stacklevel=3)
        old = dict(_SDP)
        _SDP.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
        try:
            yield
        finally:
            _SDP.update(old)

    @staticmethod
    def preferred_linalg_library(backend=None):
        """The linear algebra library for CUDA tensors: the default (cuSOLVER and MAGMA are absent here)."""
        if backend is None or backend == "default" or backend is _LinalgBackend.Default:
            return _LinalgBackend.Default
        if not isinstance(backend, str):
            raise RuntimeError("Unknown input value type.")
        names = {"cusolver": "cuSOLVER", "magma": "MAGMA"}
        if backend not in names:
            raise RuntimeError("Unknown input value. Choose from: default, cusolver, magma.")
        raise RuntimeError(f"Cannot set preferred backend to {names[backend]} if PyTorch has not been compiled with "
                           f"{names[backend]}.")

    @staticmethod
    def preferred_blas_library(backend=None):
        return _BlasBackend.Cublas


# ---------------------------------------------------------------- CPU libraries
def _tf32_on_onednn(value) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"_set_onednn_allow_tf32 expects a bool, but got {type(value).__name__}")
    warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The current Torch version does "
                  "not have Intel GPU Support.", UserWarning, stacklevel=3)


class _Verbose:
    """``with backends.mkldnn.verbose(level):``: library call logging (ember calls no such library)."""

    def __init__(self, enable) -> None:
        self.enable = enable

    def __enter__(self):
        if self.enable not in (0, 1, 2):
            raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to disable this verbose "
                                 "scope.")
        return self

    def __exit__(self, *exc) -> bool:
        return False


class _Mkldnn(_Backend):
    _defaults = {"enabled": True, "deterministic": False, "fp32_precision": "none"}
    VERBOSE_OFF, VERBOSE_ON, VERBOSE_ON_CREATION = 0, 1, 2
    enabled = _Flag("enabled", "set_enabled_mkldnn")
    deterministic = _Flag("deterministic", "set_deterministic_mkldnn")
    allow_tf32 = _Computed(lambda: None, _tf32_on_onednn)  # torch's getter answers None whatever was set
    fp32_precision = _Flag("fp32_precision")
    matmul = _FP32Precision("none")
    conv = _FP32Precision("none")
    rnn = _FP32Precision("none")
    is_available = staticmethod(_false)  # ember has no oneDNN kernels (mkldnn tensors do not exist here)
    is_acl_available = staticmethod(_false)
    verbose = _Verbose

    def set_flags(self, _enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none") -> tuple:
        v = self._values
        old = (v["enabled"], v["deterministic"], None, v["fp32_precision"])
        for name, value in (("enabled", _enabled), ("deterministic", _deterministic), ("allow_tf32", _allow_tf32),
                            ("fp32_precision", _fp32_precision)):
            if value is not None:
                setattr(self, name, value)
        return old

    @contextmanager
    def flags(self, enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
        with _unfrozen():
            old = self.set_flags(enabled, deterministic, allow_tf32, fp32_precision)
        try:
            yield
        finally:
            with _unfrozen():
                self.set_flags(*old)


class _Mkl(_Backend):
    VERBOSE_OFF, VERBOSE_ON = 0, 1
    is_available = staticmethod(_false)  # ember's kernels are NumPy's, not MKL's
    verbose = _Verbose


class _OpenMP(_Backend):
    is_available = staticmethod(_false)


class _Cpu(_Backend):
    @staticmethod
    def get_cpu_capability() -> str:
        """The widest SIMD instruction set NumPy's kernels use here ("AVX512", "AVX2" or "DEFAULT")."""
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as feats
        except ImportError:  # NumPy 1.x
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        if feats.get("AVX512F") and feats.get("AVX512BW"):
            return "AVX512"
        return "AVX2" if feats.get("AVX2") else "DEFAULT"


class _Mps(_Backend):
    is_built = staticmethod(_false)
    is_available = staticmethod(_false)

    @staticmethod
    def is_macos_or_newer(major: int, minor: int) -> bool:
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")

    @staticmethod
    def is_macos13_or_newer(minor: int = 0) -> bool:
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")

    @staticmethod
    def get_name() -> str:
        raise AttributeError("module 'torch._C' has no attribute '_mps_get_name'")

    @staticmethod
    def get_core_count() -> int:
        raise AttributeError("module 'torch._C' has no attribute '_mps_get_core_count'")


class _Mha(_Backend):
    _defaults = {"fastpath": True}

    def get_fastpath_enabled(self) -> bool:
        """Whether nn.MultiheadAttention may take torch's fused inference path (ember computes one path)."""
        return self._values["fastpath"]

    def set_fastpath_enabled(self, value: bool) -> None:
        self._values["fastpath"] = bool(value)


class _OptEinsum(_Backend):
    _defaults = {"enabled": importlib.util.find_spec("opt_einsum") is not None}
    enabled = _Flag("enabled")

    @staticmethod
    def is_available() -> bool:
        return importlib.util.find_spec("opt_einsum") is not None

    @staticmethod
    def get_opt_einsum():
        return importlib.import_module("opt_einsum") if _OptEinsum.is_available() else None

    @property
    def strategy(self):
        return self._values.get("strategy", "auto") if self.is_available() else None

    def set_flags(self, _enabled=None, _strategy=None) -> tuple:
        old = (self.enabled, self.strategy)
        if _enabled is not None:
            self.enabled = _enabled
        if _strategy is not None and self.is_available():
            self._values["strategy"] = _strategy
        return old

    @contextmanager
    def flags(self, enabled=None, strategy=None):
        """Set whether and how opt_einsum orders einsum contractions for the block (NumPy orders ember's)."""
        with _unfrozen():
            old = self.set_flags(enabled, strategy)
        try:
            yield
        finally:
            with _unfrozen():
                self.set_flags(*old)


class _Cusparselt(_Backend):
    is_available = staticmethod(_false)
    version = staticmethod(lambda: None)
    get_max_alg_id = staticmethod(lambda: None)


cudnn = _Cudnn("cudnn")
cuda = _Cuda("cuda")
mkldnn = _Mkldnn("mkldnn")
mkl = _Mkl("mkl")
openmp = _OpenMP("openmp")
cpu = _Cpu("cpu")
mps = _Mps("mps")
mha = _Mha("mha")
opt_einsum = _OptEinsum("opt_einsum")
cusparselt = _Cusparselt("cusparselt")
fp32_precision = "none"


def set_flags(_fp32_precision="none") -> tuple:
    global fp32_precision
    old, fp32_precision = (fp32_precision,), _fp32_precision if _fp32_precision is not None else fp32_precision
    return old


@contextmanager
def flags(fp32_precision="none"):
    """Set the generic float32 precision for the block."""
    old = set_flags(fp32_precision)
    try:
        yield
    finally:
        set_flags(*old)
