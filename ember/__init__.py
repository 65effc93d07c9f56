"""ember: PyTorch's programming model (tensors, autograd, nn) on NumPy.

``import ember as torch`` runs torch code unchanged where ember implements it.
"""
from __future__ import annotations

from . import _malloc  # noqa: F401 - first: glibc malloc thresholds for large NumPy buffers
from . import _lazy
from . import _dtype
from . import autograd  # first: it pulls in the Tensor and op modules in a cycle-safe order
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
                     get_default_dtype, set_default_dtype, finfo, iinfo)
from ._dtype import float16 as half, float32 as float, float64 as double  # noqa: A001
from ._dtype import int16 as short, int32 as int, int64 as long  # noqa: A001
from ._dtype import complex32, complex64, complex128  # complex dtypes
from ._dtype import complex32 as chalf, complex64 as cfloat, complex128 as cdouble
from ._device import device
from ._layout import (layout, strided, memory_format, contiguous_format, preserve_format, channels_last,
                      channels_last_3d)
from ._tensor import Tensor, Size
from ._tensor_str import set_printoptions, get_printoptions
from ._random import Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator
from ._factories import (tensor, as_tensor, asarray, from_numpy, zeros, ones, full, empty, eye, arange, range,
                         linspace, logspace, rand, randn, randint, randperm, zeros_like, ones_like, full_like,
                         empty_like, rand_like, randn_like, randint_like, scalar_tensor)
from .ops import *  # noqa: F401,F403 - the torch.* op surface
from . import backends, cuda, ops, nn, random
from . import return_types
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from ._device import _check_device
from ._device import device as _device_cls

from .torch_version import __version__  # noqa: E402 - "2.13.0+ember.0.1.0": torch's API, ember's release
from . import version, torch_version  # noqa: E402,F401

# torch.pi / e / inf / nan: Python floats, as torch's
from math import pi, e, inf, nan  # noqa: E402

# Loaded on first use, so `import ember` stays small: torch.linalg, torch.distributed (on MPI), torch.func,
# optim, utils, viz, save/load/from_dlpack and the convolution/pooling functions.
__getattr__, __dir__ = _lazy.attach(__name__, {
    "optim": ".optim", "utils": ".utils", "viz": ".viz", "linalg": ".linalg", "distributed": ".distributed",
    "func": ".func", "serialization": ".serialization", "save": ".serialization:save",
    "load": ".serialization:load", "from_dlpack": ".utils.dlpack:from_dlpack",
    # convolution / pooling / padding at the top level, as torch.conv2d, torch.max_pool2d ... (same functions)
    **{name: f".nn._functional_conv:{name}" for name in (
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d",
        "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle", "conv_tbc")},
    **{name: f".nn._functional_grid:{name}" for name in ("grid_sampler", "affine_grid_generator")},
    "_weight_norm": ".nn.utils.weight_norm:_weight_norm", "norm_except_dim": ".nn.utils.weight_norm:norm_except_dim",
    "constant_pad_nd": ".ops.resample:constant_pad_nd",
    "special": ".special", "testing": ".testing", "fft": ".fft", "stft": ".ops.stft:stft",
    "istft": ".ops.stft:istft", "accelerator": ".accelerator", "mps": ".mps",
    "storage": ".storage", "jit": ".jit", "futures": ".futures", "compiler": ".compiler", "_dynamo": "._dynamo",
    "_inductor": "._inductor", "_C": "._C", "profiler": ".profiler", "hub": ".hub", "vmap": ".func:vmap", "multiprocessing": ".multiprocessing",
    "sparse": ".sparse", "sparse_coo_tensor": ".sparse:sparse_coo_tensor", "sparse_coo": ".sparse:sparse_coo",
    "spmm": ".ops.linalg:mm",  # torch.spmm is torch.mm under its older name (sparse or dense first operand)
    "UntypedStorage": ".storage:UntypedStorage", "AcceleratorError": ".cuda:AcceleratorError", "TypedStorage": ".storage:TypedStorage",
    "distributions": ".distributions", "_standard_gamma": ".ops.random:_standard_gamma",
    "_standard_gamma_grad": ".ops.random:_standard_gamma_grad", "_sample_dirichlet": ".ops.random:_sample_dirichlet",
    # torch.amp / torch.cpu and torch.autocast (= torch.amp.autocast)
    "amp": ".amp", "cpu": ".cpu", "autocast": ".amp.autocast_mode:autocast", "GradScaler": ".amp.grad_scaler:GradScaler"})

from ._conversions import LEGACY_CLASSES as _LEGACY  # noqa: E402

# Legacy typed constructors: FloatTensor([1, 2]), LongTensor(3), isinstance(t, FloatTensor)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_LEGACY[n + "Tensor"] for n in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte",
                                                "Bool"))


def result_type(tensor, other) -> dtype:  # noqa: F811 - torch's parameter name
    """The dtype torch's promotion gives ``tensor op other``."""
    return _dtype.result_type(tensor, other)


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` can be cast to (torch's promotion lattice)."""
    _dtype._check_dtype_arg("promote_types", "type1", 1, type1)
    _dtype._check_dtype_arg("promote_types", "type2", 2, type2)
    return _dtype.promote_types(type1, type2)


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether torch's casting rules allow ``from_`` to ``to`` (no float to integer, no number to bool)."""
    _dtype._check_dtype_arg("can_cast", "from_", 1, from_)
    _dtype._check_dtype_arg("can_cast", "to", 2, to)
    return from_._kind <= to._kind


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.is_floating_point


def is_nonzero(input: Tensor) -> bool:
    return input.__bool__()


def numel(input: Tensor) -> int:
    return input.numel()


def set_default_device(device) -> None:
    """Where factories create tensors: "cpu", or "cuda" where available (others fail when a tensor is made, as
    torch's)."""
    from . import _factories

    _factories._default_device[0] = "cpu" if device is None else str(_device_cls(device))


def get_default_device() -> "device":
    from . import _factories

    return _device_cls(_factories._default_device[0])


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def typename(obj) -> str:
    """'torch.FloatTensor' ... for tensors, else the object's type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    qual = type(obj).__qualname__
    return qual if module in ("builtins", "__builtin__", None) else f"{module}.{qual}"


def is_signed(input: Tensor) -> bool:
    return input.is_signed()


def get_device(input: Tensor) -> int:
    """-1: the tensor is on the CPU."""
    _tensor_arg("get_device", input)
    return -1


def is_storage(obj) -> bool:
    from .storage import TypedStorage, UntypedStorage

    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_distributed(input: Tensor) -> bool:
    return False


def numel_(input: Tensor) -> int:  # pragma: no cover - alias kept private
    return input.numel()


_num_threads: list = []


def set_num_threads(num: int, /) -> None:
    """Record the intra-op thread count ``get_num_threads`` reports. NumPy's BLAS takes its thread count from
    OMP/OPENBLAS_NUM_THREADS when it loads, so this changes no kernel (documented in README)."""
    import builtins  # (``int`` and ``bool`` are ember's dtypes in this module)

    if isinstance(num, builtins.bool) or not isinstance(num, builtins.int):
        raise TypeError(f"set_num_threads(): argument 'num' (position 1) must be int, not {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _num_threads[:] = [num]


def get_num_threads() -> int:
    import builtins
    import os

    return _num_threads[0] if _num_threads else builtins.int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))


def init_num_threads() -> None:
    """Nothing to set up: NumPy's BLAS owns its threads."""


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    from .autograd import anomaly_mode

    anomaly_mode.set_detect_anomaly(enabled, check_nan)


def is_vulkan_available() -> bool:
    return False


def compiled_with_cxx11_abi() -> bool:
    return True


# torch.* names beyond the ops: ATen spellings, in-place and *_copy forms, queries, process-wide switches
from ._aten import *  # noqa: E402,F401,F403 - see _aten.__all__
from ._symbolic import *  # noqa: E402,F401,F403 - see _symbolic.__all__
from ._malloc import OutOfMemoryError  # noqa: E402,F401
from ._factories import empty_strided, empty_permuted, frombuffer  # noqa: E402,F401
from .ops.strided import as_strided, as_strided_  # noqa: E402,F401
from .ops.shape import ravel, narrow_copy, is_same_size  # noqa: E402,F401
from .ops.joining import (split_with_sizes, unsafe_split, unsafe_split_with_sizes,  # noqa: E402,F401
                          unsafe_chunk)
from .ops.arithmetic import positive  # noqa: E402,F401
from .ops.elementwise import angle  # noqa: E402,F401
from .ops.complex_numbers import adjoint  # noqa: E402,F401
from .ops.linalg import dist, frobenius_norm, nuclear_norm, chain_matmul  # noqa: E402,F401
from .ops.pixel_shuffle import channel_shuffle, native_channel_shuffle  # noqa: E402,F401
from .ops.indexing import nonzero_static  # noqa: E402,F401
from ._state import *  # noqa: E402,F401,F403 - see _state.__all__
from .ops.composites import *  # noqa: E402,F401,F403 - see ops/composites.__all__
from .ops.statistics import *  # noqa: E402,F401,F403 - see ops/statistics.__all__
from .ops.windows import *  # noqa: E402,F401,F403 - see ops/windows.__all__
from .ops.solve import *  # noqa: E402,F401,F403 - see ops/solve.__all__
from .ops.sorting import msort, isin, unique_consecutive  # noqa: E402,F401
from .ops.linalg import cdist, pdist, renorm, matrix_exp  # noqa: E402,F401

from . import _args as _args  # noqa: E402
from ._args import tensor_arg as _tensor_arg  # noqa: E402 - get_device

_args.install(globals(), ("detach", "is_floating_point", "is_inference", "is_nonzero", "numel", "result_type",
                          "is_signed", "get_device", "is_distributed", "init_num_threads",
                          "set_anomaly_enabled", "is_vulkan_available"))
