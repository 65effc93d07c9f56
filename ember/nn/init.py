"""Parameter initialisation (in place, without recording a graph), with torch's distributions."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._backend import like as _like
from .._random import _rng
from .._tensor import Tensor
from .parameter import _refuse, is_lazy

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
           # deprecated spellings (FutureWarning, as torch)
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "orthogonal", "sparse"]


def _not_lazy(tensor, where: str) -> None:
    """torch's refusal of an uninitialized parameter at the first tensor call ``where`` an initializer makes."""
    if is_lazy(tensor):
        if where == "shape":
            tensor.shape  # noqa: B018 - raises torch's RuntimeError
        raise _refuse(type(tensor).__name__, where)


def _fill(tensor: Tensor, values) -> Tensor:
    """Write ``values`` into ``tensor`` in place (a leaf parameter is allowed: init runs without grad)."""
    tensor._data[...] = _like(tensor._data, values)  # values drawn on the host (NOTE [factories on cuda])
    tensor._bump()
    return tensor


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dim = tensor.dim()
    if dim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return num_input_fmaps * receptive, num_output_fmaps * receptive


_calculate_fan_in_and_fan_out = _fan_in_and_fan_out


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b)."""
    _not_lazy(tensor, "<function uniform_>")
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std**2)."""
    _not_lazy(tensor, "<function normal_>")
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with N(mean, std**2) samples truncated to [a, b] (inverse-CDF method)."""
    _not_lazy(tensor, "<method 'new_tensor' of 'torch._C.TensorBase' objects>")
    from ..ops._erf import erfinv64 as _erfinv64  # noqa: PLC0415 - rare

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    u = _rng(generator).uniform(2 * lo - 1, 2 * hi - 1, tensor.shape)
    vals = np.clip(_erfinv64(u) * std * math.sqrt(2.0) + mean, a, b)
    return _fill(tensor, vals)


def constant_(tensor: Tensor, val: float) -> Tensor:
    _not_lazy(tensor, "<function constant_>")
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    _not_lazy(tensor, "<method 'fill_' of 'torch._C.TensorBase' objects>")
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    _not_lazy(tensor, "<method 'zero_' of 'torch._C.TensorBase' objects>")
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per = sizes[0] // groups
    min_dim = min(out_per, sizes[1])
    vals = np.zeros(sizes)
    for g in range(groups):
        for d in range(min_dim):
            idx = (g * out_per + d, d) + tuple(s // 2 for s in sizes[2:])
            vals[idx] = 1
    return _fill(tensor, vals)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_gain_and_fan(tensor: Tensor, a: float, mode: str, nonlinearity: str, where: str):
    """The kaiming initialisers' gain and fan, or None (after torch's warning) when ``tensor`` has no elements
    (``where``: as for _not_lazy)."""
    _not_lazy(tensor, where)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a), _fan(tensor, mode)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    gain_fan = _kaiming_gain_and_fan(tensor, a, mode, nonlinearity, "<function kaiming_uniform_>")
    if gain_fan is None:
        return tensor
    bound = math.sqrt(3.0) * gain_fan[0] / math.sqrt(gain_fan[1])
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """N(0, std) with std = gain / sqrt(fan)."""
    gain_fan = _kaiming_gain_and_fan(tensor, a, mode, nonlinearity, "shape")
    if gain_fan is None:
        return tensor
    return normal_(tensor, 0.0, gain_fan[0] / math.sqrt(gain_fan[1]), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR of a Gaussian one, sign-corrected."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-d tensor of N(0, std**2) samples with ``ceil(sparsity * rows)`` random zeros in every column."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    rng = _rng(generator)
    vals = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):  # over columns (each its own random rows)
        vals[rng.permutation(rows)[:num_zeros], col] = 0
    return _fill(tensor, vals)


def _deprecated(new):
    """torch's deprecated spelling of an initializer: warns, then calls ``new``."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"{old}(...): deprecated in favor of nn.init.{new.__name__}."
    return deprecated_init


uniform, normal, constant, eye, dirac, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal, orthogonal, \
    sparse = map(_deprecated, (uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_, xavier_normal_,
                               kaiming_uniform_, kaiming_normal_, orthogonal_, sparse_))
