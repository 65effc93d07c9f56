"""nn.functional's activations (relu family, ELU/SELU/CELU, GELU, SiLU, softplus, hard* ...), the softmax family,
glu, gumbel_softmax, log-sigmoid, the shrinks and rrelu. Re-exported by ember.nn.functional."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _args
from .. import _dtype as _D
from .. import _factories as _F
from .._tensor import Tensor, _wrap, _wrap_dim as _tensor_wrap_dim
from ..ops import _inplace as _IP
from ..ops import nn_ops as _N
from ..ops import indexing as _I, piecewise as _U, elementwise as _E
from ..ops.random import uniform_value as _uniform_value

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_", "selu", "celu", "gelu", "silu",
    "mish", "softplus", "softsign", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "sigmoid", "tanh",
    "tanhshrink", "threshold", "threshold_", "softmax", "log_softmax", "softmin", "glu", "gumbel_softmax",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _act(name: str, input: Tensor, inplace: bool, *attrs) -> Tensor:
    if inplace:
        return _IP.inplace(input, lambda x: _N.activation(name, x, *attrs))
    return _N.activation(name, input, *attrs)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _IP.inplace(input, _U.relu) if inplace else _U.relu(input)


def relu_(input: Tensor) -> Tensor:
    return relu(input, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return _act("LeakyRelu", input, inplace, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


def _no_complex(spec: str, *tensors) -> None:
    """torch's error (a kernel name, or "!" and a RuntimeError's message) for functions without complex kernels."""
    for t in tensors:
        if isinstance(t, Tensor) and t._dtype.is_complex:
            from ..ops.reduction import complex_refused

            raise complex_refused(spec, t._data.dtype)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """leaky_relu with a learned slope per channel (dim 1) or one shared slope."""
    _no_complex("prelu_cpu", input, weight)
    if weight.numel() != 1:
        ch = input.shape[1] if input.dim() >= 2 else (input.shape[0] if input.dim() == 1 else 1)
        if weight.numel() != ch:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {ch}.")
        if input.dim() >= 2:
            weight = weight.reshape((ch,) + (1,) * (input.dim() - 2))
    return _I.where(input > 0, input, weight * input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _act("Elu", input, inplace, alpha, 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _act("Elu", input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return _act("Celu", input, inplace, alpha, 1.0, 1.0 / alpha)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """x * Phi(x) (approximate='tanh': the tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _N.activation("Gelu", input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _act("Silu", input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _act("Mish", input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return _N.activation("Softplus", input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped into [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act("Hardtanh", input, inplace, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clamp(x / 6 + 1/2, 0, 1)."""
    return _act("Hardsigmoid", input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x)."""
    return _act("Hardswish", input, inplace)


def sigmoid(input: Tensor) -> Tensor:
    return _E.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _E.tanh(input)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    return _act("Threshold", input, inplace, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _act("Threshold", input, True, threshold, value)


def _implicit_dim_warning(name: str, dim):
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=3)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``."""
    _implicit_dim_warning("softmax", dim)
    return _N.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    _implicit_dim_warning("log_softmax", dim)
    return _N.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``."""
    _implicit_dim_warning("softmin", dim)
    if dtype is not None:
        input = input.to(dtype)
    return _N.softmax(-input, dim, None)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    _no_complex("glu_cpu", input)
    a, b = input.split(n // 2, dim)
    return a * b.sigmoid()


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); hard=True: one-hot forward, soft gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    gumbels = -(-(_F.rand_like(logits).clamp(min=1e-30)).log()).log()  # -log(Exp(1)) noise
    y = _N.softmax((logits + gumbels) / tau, dim, None)
    if not hard:
        return y
    idx = y.argmax(dim, keepdim=True)
    onehot = _wrap(np.zeros(y.shape, y._data.dtype), y._dtype)
    if y.dim() == 0:  # a 0-d input is its own one-hot
        onehot._data[...] = 1
    else:
        np.put_along_axis(onehot._data, idx._data, 1, _wrap_dim(dim, y.dim()))
    return onehot - y.detach() + y


def _wrap_dim(dim: int, n: int) -> int:
    return _tensor_wrap_dim(dim, max(n, 1))


# ---------------------------------------------------------------- log-sigmoid, shrinks, rrelu

__all__ += ["logsigmoid", "hardshrink", "softshrink", "rrelu", "rrelu_"]


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), finite for any finite input."""
    return _N.activation("LogSigmoid", input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _N.activation("Hardshrink", input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    if input._dtype.is_floating_point:
        fmax = _D.finfo(input._dtype).max
        if not 0 <= lambd <= fmax:
            raise RuntimeError(f"lambda must be in range [0, {fmax:g}] for input dtype {_IP._title(input._dtype)}, "
                               f"but found {lambd:g}")
    return _N.activation("Softshrink", input, lambd)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, inplace: bool, generator=None) -> Tensor:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not input._dtype.is_floating_point:
        kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_IP._title(input._dtype)}\'')
    if training:  # one slope drawn from U(lower, upper) per element, used where x <= 0
        slope = _uniform_value(input.detach(), lower, upper, generator=generator)._data
    else:
        slope = (lower + upper) / 2
    if inplace:
        return _IP.inplace(input, lambda x: _N._ACT["RreluWithNoise"].apply(x, slope))
    return _N._ACT["RreluWithNoise"].apply(input, slope)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """leaky_relu whose negative slope is drawn from U(lower, upper) per element when training, else their mean."""
    return _rrelu(input, lower, upper, training, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return _rrelu(input, lower, upper, training, True, generator)


# the functions torch's nn.functional takes from its C++ builtins (the rest are Python functions in torch too)
_args.install(globals(), ("gelu", "logsigmoid", "softplus", "softshrink", "hardshrink", "elu_", "leaky_relu_", "hardtanh_",
                          "relu_", "rrelu_", "threshold_", "prelu"), out=("hardshrink",))
