"""ember: PyTorch's programming model (tensors, autograd, nn) on NumPy.

``import ember as torch`` runs torch code unchanged where ember implements it.
"""
from __future__ import annotations

from . import _dtype
from . import autograd  # first: it pulls in the Tensor and op modules in a cycle-safe order
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, float32, float64,
                     get_default_dtype, set_default_dtype, promote_types)
from ._dtype import float16 as half, float32 as float, float64 as double  # noqa: A001
from ._dtype import int16 as short, int32 as int, int64 as long  # noqa: A001
from ._device import device
from ._tensor import Tensor, Size
from ._tensor_str import set_printoptions, get_printoptions
from ._random import Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator
from ._factories import (tensor, as_tensor, asarray, from_numpy, zeros, ones, full, empty, eye, arange, range,
                         linspace, logspace, rand, randn, randint, randperm, zeros_like, ones_like, full_like,
                         empty_like, rand_like, randn_like, randint_like, scalar_tensor)
from .ops import *  # noqa: F401,F403 - the torch.* op surface
from . import autograd, cuda, ops, nn, utils
from . import return_types
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from ._device import _check_device
from .serialization import save, load

__version__ = "0.1.0"

FloatTensor = DoubleTensor = LongTensor = Tensor  # legacy names: isinstance checks only


def result_type(tensor1, tensor2) -> dtype:
    """The dtype torch's promotion gives ``tensor1 op tensor2``."""
    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_: dtype, to: dtype) -> bool:
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
    """Only "cpu" exists here; other devices give torch's error."""
    from . import _factories

    _check_device(device)
    _factories._default_device[0] = "cpu" if device is None else str(device)


def get_default_device() -> device:
    return device("cpu")


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def numel_(input: Tensor) -> int:  # pragma: no cover - alias kept private
    return input.numel()


def set_num_threads(n: int) -> None:
    """Threads used by NumPy's BLAS are set by OMP/OPENBLAS_NUM_THREADS; kept for compatibility."""


def get_num_threads() -> int:
    import os

    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))

# convolution / pooling / padding at the top level, as torch.conv2d, torch.max_pool2d ... (same functions)
from .nn._functional_conv import (conv1d, conv2d, conv_transpose1d, conv_transpose2d, max_pool1d,  # noqa: E402
                                  max_pool2d, avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool1d, pixel_shuffle,
                                  pixel_unshuffle)
from .ops.resample import constant_pad_nd  # noqa: E402
