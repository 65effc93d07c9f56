"""ember.nn.functional: stateless forms of the layers."""
from __future__ import annotations

from .. import _args
from .._tensor import Tensor
from ..ops import linalg as _linalg

__all__ = ["linear"]
_addmm = _linalg.addmm  # torch's node for 2-d linear with bias is AddmmBackward0


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    if input.shape[-1] != weight.shape[-1]:
        a = "x".join(map(str, (input.numel() // max(input.shape[-1], 1), input.shape[-1]))) if input.dim() else ""
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a} and {weight.shape[-1]}x{weight.shape[0]})")
    if bias is not None and input.dim() >= 2:
        if input.dim() == 2:
            return _addmm(bias, input, weight.t())
        if input.is_contiguous():  # torch's graph: the rows as one matrix, one addmm, the result viewed back
            k = input.shape[-1]
            out = _addmm(bias, input.view(input.numel() // k if k else -1, k), weight.t())
            return out.view(*input.shape[:-1], weight.shape[0])
    out = input @ weight.t()
    return out if bias is None else out + bias


# ---------------------------------------------------------------------------------------------------------------
# Activations, softmax family, distances, normalization, dropout, embedding and losses.
# ---------------------------------------------------------------------------------------------------------------
import math  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from .. import _dtype as _D  # noqa: E402
from .. import _kernels  # noqa: E402
from .. import _factories as _F  # noqa: E402
from .._tensor import _all_examples, _wrap, _wrap_dim as _tensor_wrap_dim  # noqa: E402
from ..ops import _inplace as _IP  # noqa: E402
from ..ops import nn_ops as _N  # noqa: E402
from ..ops import norms as _NORM  # noqa: E402
from ..autograd.grad_mode import _mode, is_grad_enabled as _is_grad_enabled  # noqa: E402
from ..ops import indexing as _I, unary as _U, elementwise as _E  # noqa: E402
from ._reduction import legacy_get_string as _legacy_reduction  # noqa: E402

__all__ += [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_", "selu", "celu", "gelu", "silu",
    "mish", "softplus", "softsign", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "sigmoid", "tanh",
    "tanhshrink", "threshold", "threshold_", "softmax", "log_softmax", "softmin", "glu", "gumbel_softmax",
    "normalize", "cosine_similarity", "pairwise_distance", "one_hot", "batch_norm", "layer_norm", "group_norm",
    "instance_norm", "rms_norm", "dropout", "dropout2d", "alpha_dropout", "embedding", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
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


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    res = input / denom
    return res if out is None else _args.write_out(out, res, "normalize")


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / max(||x1|| * ||x2||, eps) along ``dim`` (broadcasting)."""
    for x in (x1, x2):
        if x._dtype.is_complex:
            raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                               f"{_D.promote_types(x1._dtype, x2._dtype)._scalar_name}")
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim."""
    d = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, d - 1 if d else None, keepdim=keepdim) if d else (x1 - x2 + eps).abs()


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding of class indices along a new last dim."""
    tensor = input
    if tensor._dtype != _D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor._data
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if a.size and a.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _wrap((a[..., None] == np.arange(num_classes)).astype(np.int64), _D.int64)


# ------------------------------------------------------------------------------------------------ normalization
def _size(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _normalized(x: Tensor, dims: tuple, eps: float) -> tuple:
    """(x - mean) / sqrt(biased var + eps) over ``dims``, with the mean and biased variance."""
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(dims, keepdim=True)
    return xc * (var + eps).rsqrt(), mean, var


def _fused_norm(input: Tensor, *params) -> bool:
    """Whether a norm runs as one fused node (NOTE [fused norms] in ember/ops/norms.py): a non-empty floating input
    outside forward-AD / vmap levels, parameters (given or None) of its dtype."""
    return (_mode.interpose is None and input._dtype.is_floating_point and input.numel() > 0
            and type(input._data) is np.ndarray
            and all(p is None or (p._dtype is input._dtype and type(p._data) is np.ndarray) for p in params))


def _channel_shape(input: Tensor) -> tuple:
    return (1, input.shape[1]) + (1,) * (input.dim() - 2)


def _update_running(running: Tensor | None, value: Tensor, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * value, in place, outside autograd."""
    if running is not None:
        v = value._data.reshape(running.shape)
        running._data[...] = (1 - momentum) * running._data + momentum * v
        running._bump()


def _mixed_norm(input: Tensor, *params) -> bool:
    """torch's mixed-dtype norm kernels: a 16-bit input with float32 parameters (an autocast region's activations in
    a float32 model) computes in float32 and returns the input's dtype."""
    return input._dtype._reduced and any(p is not None and p._dtype is _D.float32 for p in params)


def _f32(t: Tensor | None) -> Tensor | None:
    return t if t is None or t._dtype is _D.float32 else t.float()


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training) or the running ones (eval)."""
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    _check_channel_params(input.shape[1] if input.dim() > 1 else 0, 1, running_mean=running_mean,
                          running_var=running_var, weight=weight, bias=bias)
    _no_complex("batch_norm", input)
    if _mixed_norm(input, weight, bias, running_mean):
        return batch_norm(input.float(), running_mean, running_var, _f32(weight), _f32(bias), training, momentum,
                          eps).to(input._dtype)
    if training:
        count = input.numel() // max(input.shape[1], 1) if input.dim() >= 2 else 1
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size(input.shape)}")
    dims = (0,) + tuple(range(2, input.dim()))
    shape = _channel_shape(input)
    c = input.shape[1] if input.dim() > 1 else 0
    if input.dim() >= 2 and _fused_norm(input, weight, bias) and all(
            p is None or p.numel() == c for p in (weight, bias, running_mean, running_var)):
        batch = training or running_mean is None
        layout, axes, wshape = _NORM.norm_layout("batch", tuple(input.shape), 0)
        running = None if batch else (running_mean._data, running_var._data)
        out, mean, var = _NORM.NativeBatchNorm.apply(input, weight, bias, layout, axes, wshape, eps, running)
        if training:
            n = input.numel() / c
            _update_running(running_mean, mean, momentum)
            _update_running(running_var, var * (n / max(n - 1, 1)), momentum)
        return out
    if training or running_mean is None:
        out, mean, var = _normalized(input, dims, eps)
        if training:
            n = input.numel() / input.shape[1]
            _update_running(running_mean, mean, momentum)
            _update_running(running_var, var * (n / max(n - 1, 1)), momentum)
    else:
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


def _check_channel_params(channels: int, repeat: int, **params) -> None:
    """torch's check that per-channel statistics and affine parameters have one element per channel (instance norm
    repeats them over the batch, and so does its message)."""
    for name, t in params.items():
        if t is not None and t.numel() * repeat != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel() * repeat}")


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple) -> Tensor:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims."""
    if input.dim() >= 2:
        n = input.shape[0]
        _check_channel_params(n * input.shape[1], n, running_mean=running_mean, running_var=running_var,
                              weight=weight, bias=bias)
    _no_complex("batch_norm", input)
    dims = tuple(range(2, input.dim()))
    shape = _channel_shape(input)
    n, c = (input.shape[0], input.shape[1]) if input.dim() >= 2 else (0, 0)
    if input.dim() >= 3 and _fused_norm(input, weight, bias, running_mean, running_var):
        # as torch: batch norm of the (1, N*C, ...) view with the parameters repeated per sample, viewed back
        batch = use_input_stats or running_mean is None
        x = input.reshape(1, n * c, *input.shape[2:])
        layout, axes, wshape = _NORM.norm_layout("batch", tuple(x.shape), 0)
        running = None if batch else (np.tile(running_mean._data, n), np.tile(running_var._data, n))
        out, mean, var = _NORM.NativeBatchNorm.apply(x, None if weight is None else weight.repeat(n),
                                                     None if bias is None else bias.repeat(n), layout, axes, wshape,
                                                     eps, running)
        if batch:
            m = math.prod(input.shape[2:])
            _update_running(running_mean, _wrap(mean._data.reshape(n, c).mean(0), mean._dtype), momentum)
            _update_running(running_var, _wrap((var._data * (m / max(m - 1, 1))).reshape(n, c).mean(0), var._dtype),
                            momentum)
        return out.view(input.shape)
    if use_input_stats or running_mean is None:
        out, mean, var = _normalized(input, dims, eps)
        n = math.prod(input.shape[2:])
        _update_running(running_mean, mean.mean(0), momentum)
        _update_running(running_var, (var * (n / max(n - 1, 1))).mean(0), momentum)
    else:
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


def _check_normalized_shape(input: Tensor, normalized_shape) -> tuple:
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input.dim() < len(ns) or tuple(input.shape[input.dim() - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    return tuple(range(input.dim() - len(ns), input.dim()))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift elementwise."""
    _no_complex("LayerNormKernelImpl", input)
    if _mixed_norm(input, weight, bias):
        return layer_norm(input.float(), normalized_shape, _f32(weight), _f32(bias), eps).to(input._dtype)
    dims = _check_normalized_shape(input, normalized_shape)
    ns = tuple(input.shape[dims[0]:]) if dims else ()
    if dims and _fused_norm(input, weight, bias) and all(p is None or tuple(p.shape) == ns for p in (weight, bias)):
        layout, axes, wshape = _NORM.norm_layout("layer", tuple(input.shape), math.prod(ns))
        return _NORM.NativeLayerNorm.apply(input, weight, bias, layout, axes, wshape, eps, None)[0]
    out = _normalized(input, dims, eps)[0]
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x**2) + eps) over the trailing dims (eps: the dtype's machine epsilon by default)."""
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{_IP._title(input._dtype)}\'')
    if eps is None:
        eps = _D.finfo(input._dtype).eps
    if _mixed_norm(input, weight):
        return rms_norm(input.float(), normalized_shape, weight, eps).to(input._dtype)
    dims = _check_normalized_shape(input, normalized_shape)
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels of each sample."""
    _no_complex("GroupNormKernelImpl", input)
    if _mixed_norm(input, weight, bias):
        return group_norm(input.float(), num_groups, _f32(weight), _f32(bias), eps).to(input._dtype)
    if input.dim() < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    if _fused_norm(input, weight, bias) and all(p is None or p.numel() == input.shape[1] for p in (weight, bias)):
        layout, axes, wshape = _NORM.norm_layout("group", tuple(input.shape), num_groups)
        return _NORM.NativeGroupNorm.apply(input, weight, bias, layout, axes, wshape, eps, None)[0]
    n = input.shape[0]
    x = input.reshape(n, num_groups, -1)
    out = _normalized(x, (2,), eps)[0].reshape(input.shape)
    return _affine(out, weight, bias, _channel_shape(input))


from ..ops.shape import cat as _cat  # noqa: E402


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x**2 over a window of ``size`` neighbouring channels) ** beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    c, sq = input.shape[1], input * input
    rest = tuple(input.shape[2:])
    parts = [sq.new_zeros((input.shape[0], n) + rest) for n in (size // 2, (size - 1) // 2)]
    padded = _cat([parts[0], sq, parts[1]], 1)
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    return input / (window * (alpha / size) + k).pow(beta)


__all__ += ["local_response_norm"]


# ------------------------------------------------------------------------------------------------ dropout
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input: Tensor, p: float, shape: tuple) -> np.ndarray:
    return (_F.rand(shape, dtype=input._dtype)._data >= p).astype(input._data.dtype)


def _masked(input: Tensor, mask: np.ndarray, scale: float, inplace: bool) -> Tensor:
    m = _wrap(mask * input._data.dtype.type(scale), input._dtype)
    return input.mul_(m) if inplace else input * m


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (identity unless training)."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    return _masked(input, _keep_mask(input, p, tuple(input.shape)), 1 / (1 - p), inplace)


_CHANNEL_WARN = ("{name}: Received a {d}-D input to {name}, which is deprecated and will result in an error in a "
                 "future release. To retain the behavior and silence this warning, please use dropout instead. "
                 "Note that {name} exists to provide channel-wise dropout on inputs with {k} spatial "
                 "dimension{s}, a channel dimension, and an optional batch dimension (i.e. {lo}D or {hi}D inputs).")


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, k: int) -> Tensor:
    """dropout{k}d: zero whole channels of (N, C, *spatial) inputs with k spatial dims (or unbatched (C, *spatial))."""
    _check_p(p)
    d, lo, hi = input.dim(), k + 1, k + 2
    if d not in (lo, hi):
        if k == 1:
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that "
                               "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                               "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
        warnings.warn(_CHANNEL_WARN.format(name=f"dropout{k}d", d=d, k=k, s="s" if k > 1 else "", lo=lo, hi=hi),
                      stacklevel=3)
    elif k == 2 and d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                      "dim. This behavior will change in a future release to interpret the input as one without "
                      "a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=3)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    # dropout2d samples dims 0 and 1 at every rank (torch's historical reading of 3-D input as (N, C, L)); 1d/3d
    # treat any rank but the batched one as unbatched (torch adds a batch dim of one)
    lead = 2 if k == 2 or d == hi else 1
    shape = tuple(input.shape[:lead]) + (1,) * (d - lead)
    return _masked(input, _keep_mask(input, p, shape), 1 / (1 - p), inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability p, scale the rest by 1 / (1 - p)."""
    return _channel_dropout(input, p, training, inplace, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) inputs with probability p, scale the rest by 1 / (1 - p)."""
    return _channel_dropout(input, p, training, inplace, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p."""
    return _channel_dropout(input, p, training, inplace, 3)


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, lead: int | None) -> Tensor:
    """alpha dropout with one draw per element (lead=None) or per index of the first ``lead`` dims."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    alpha = _SELU_ALPHA * _SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    shape = tuple(input.shape) if lead is None else tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    keep = _keep_mask(input, p, shape)
    b = _wrap(((keep - 1) * (alpha * a) + alpha * a * p).astype(input._data.dtype), input._dtype)
    m = _wrap((keep * a).astype(input._data.dtype), input._dtype)
    if inplace:
        return input.mul_(m).add_(b)
    return input * m + b


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps a SELU network's zero mean and unit variance (dropped values go to SELU's low value)."""
    return _alpha_dropout(input, p, training, inplace, None)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels: one draw per (sample, channel) pair."""
    return _alpha_dropout(input, p, training, inplace, 2)


__all__ += ["dropout1d", "dropout3d", "feature_alpha_dropout"]


# ------------------------------------------------------------------------------------------------ embedding
def _embedding_renorm(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    rows = np.unique(idx)
    w = weight._data
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1) if rows.size else np.zeros(0)
    big = norms > max_norm
    scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
    w[rows[big]] *= scale[:, None]
    if big.any():
        weight._bump()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the indices in ``input``; the padding row gets no gradient. ``sparse`` is accepted but
    the gradient is always dense."""
    if input._dtype not in (_D.int64, _D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    idx = input._data  # (under vmap a placeholder the embedding's batching rule recognises)
    every = _all_examples(input)
    if every.size and (every.min() < 0 or every.max() >= n):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    return _N.Embedding.apply(weight, idx, padding_idx, False, scale_grad_by_freq)


# ------------------------------------------------------------------------------------------------ losses
def _reduction(size_average, reduce, reduction: str) -> str:
    """The reduction named by torch's legacy size_average/reduce flags (with its deprecation warning), if given."""
    if size_average is None and reduce is None:
        return reduction
    legacy = _legacy_reduction(size_average, reduce, emit_warning=False)
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{legacy}' instead.",
                  stacklevel=3)
    return legacy


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                      f"({_size(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast_pair(input: Tensor, target: Tensor) -> None:
    """torch's broadcast_tensors error for an input and target that do not broadcast (not NumPy's)."""
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        from ..ops.arithmetic import _broadcast_error

        raise _broadcast_error(input._data, target._data) from None


def _pointwise_loss(fn):
    def loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             **kwargs) -> Tensor:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        _warn_size(input, target)
        _broadcast_pair(input, target)
        return fn(input, target, reduction, **kwargs)
    return loss


def _mse(input, target, reduction, weight=None):
    if weight is None:
        return _N.MseLoss.apply(input, target, reduction)
    return _reduce(_N.MseLoss.apply(input, target, "none") * weight, reduction)


def _l1(input, target, reduction):
    return _reduce((input - target).abs(), reduction)


def _smooth_l1(input, target, reduction, beta=1.0):
    if beta == 0:  # torch's l1_loss
        return _l1(input, target, reduction)
    return _N.SmoothL1Loss.apply(input, target, beta, reduction)


def _huber(input, target, reduction, delta=1.0, weight=None):
    if weight is None:
        return _N.HuberLoss.apply(input, target, delta, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _reduce(_N.HuberLoss.apply(input, target, delta, "none") * weight, reduction)


_mse_loss, _l1_loss, _smooth_l1_loss, _huber_loss = map(_pointwise_loss, (_mse, _l1, _smooth_l1, _huber))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """(input - target)**2, reduced."""
    return _mse_loss(input, target, size_average, reduce, reduction, weight=weight)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced; with ``weight`` (input's shape) each term weighted, the mean by the weights' sum."""
    if weight is None:
        return _l1_loss(input, target, size_average, reduce, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    reduction = _reduction(size_average, reduce, reduction)
    terms = (input - target).abs() * weight
    if reduction == "none":
        return terms
    if reduction == "sum":
        return terms.sum()
    if reduction == "mean":
        return terms.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - beta / 2."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth_l1_loss(input, target, size_average, reduce, reduction, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta * (|d| - delta / 2)."""
    return _huber_loss(input, target, None, None, reduction, delta=delta, weight=weight)


def _class_targets(input: Tensor, target: Tensor, ignore_index: int) -> tuple:
    """(C, targets moved to (N, 1, d1, ...), mask of counted elements); torch's shape and range errors."""
    t = target._data
    nd = input.dim()
    if nd < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    # torch's nll_loss_nd: the batch first, then the checks of the kernel the input's rank selects
    if nd > 1 and input.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if nd == 1:
        if t.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 2:
        if t.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 4:
        if t.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                               f"{t.ndim}")
        if tuple(t.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(t.shape)}")
    elif tuple(t.shape) != (input.shape[0], *input.shape[2:]):
        want = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {want}, got {list(t.shape)}")
    if target._dtype not in (_D.int64, _D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_IP._title(target._dtype)}")
    c = input.shape[1] if input.dim() > 1 else input.shape[0]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    return c, valid


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str) -> Tensor:
    _check_reduction(reduction)
    if type(target._data) is not np.ndarray or type(input._data) is not np.ndarray:
        return _nll_composite(input, target, weight, ignore_index, reduction)
    c, valid = _class_targets(input, target, ignore_index)
    t = target._data
    every = bool(valid.all())  # the common case: no target is ignored
    tt = t.astype(np.int64) if every else np.where(valid, t, 0).astype(np.int64)  # a copy: later changes of t stay out
    w = valid.astype(input._data.dtype)
    if weight is not None:
        w = w * weight._data[tt]
    if reduction == "mean":
        if every and weight is None and w.size:
            w /= w.sum()  # (a positive count: nothing to silence)
        else:
            # ignored targets keep a coefficient of exactly 0 (no gradient, as torch's kernel skips them) even when
            # the total is 0; counted targets of weight 0 over a total of 0 get 0/0 = nan, as torch's
            with np.errstate(invalid="ignore", divide="ignore"):
                w = np.where(valid, w / w.sum(), 0).astype(w.dtype, copy=False)
    if input.dim() <= 2:
        return _N.NllLoss.apply(input, tt[:, None] if input.dim() > 1 else tt[None], w, reduction)
    if input.dim() == 4:
        return _N.NllLoss2D.apply(input, tt[:, None], w, reduction)
    # other K-dim inputs go through the 4-d kernel as torch's do: (N, C, d1*...*dk, 1), the result viewed back
    n, c = input.shape[:2]
    flat = (n, -1, 1)
    out = _N.NllLoss2D.apply(input.reshape(n, c, -1, 1), tt.reshape(flat)[:, None], w.reshape(flat), reduction)
    return out.view(target.shape) if reduction == "none" else out


def _nll_composite(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str):
    """nll_loss through gather/where/sum, for values that cannot be read here (batched tensors under vmap)."""
    if input.dim() < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = 1 if input.dim() > 1 else 0
    valid = target != ignore_index
    tt = _I.where(valid, target, 0)
    picked = input.gather(cdim, tt.unsqueeze(cdim)).squeeze(cdim)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.gather(0, tt.reshape(-1)).reshape(tt.shape)
    loss = -picked * w
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w.sum()


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-weight[t] * input[n, t[n]] over samples (and extra dims), ignoring ``ignore_index``, reduced."""
    return _nll(input, target, weight, ignore_index, _reduction(size_average, reduce, reduction))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices; -sum(p * log_softmax) for probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape) and not target._dtype.is_floating_point:
        # as torch: a target of the input's shape holds class probabilities, checked before any kernel runs
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{target._dtype._scalar_name}")
    if _fused_ce(input, target, weight):
        return _fused_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)
    cdim = 1 if input.dim() > 1 else 0
    logp = _N.log_softmax(input, cdim, None)
    c = input.shape[cdim] if input.dim() else 1
    wshape = (c,) + (1,) * (input.dim() - cdim - 1)
    if target._dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(wshape)
        loss = -terms.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c if input.numel() else 0)
        return _reduce(loss, reduction)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    kept = target != ignore_index  # (ember ops: under vmap the target's values cannot be read here)
    terms = logp if weight is None else logp * weight.reshape(wshape)
    smooth = _I.where(kept, -terms.sum(cdim), 0.0)  # masked, not multiplied: no 0 * inf = nan
    if reduction == "mean":
        if weight is None:
            total = kept.sum()
        else:
            tt = _I.where(kept, target, 0)
            total = _I.where(kept, weight.gather(0, tt.reshape(-1)).reshape(tt.shape), 0.0).sum()
        smooth = smooth.sum() / total  # every target ignored: 0 / 0 = nan, gradient 0 (the mask above)
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def _fused_ce(input: Tensor, target: Tensor, weight: Tensor | None) -> bool:
    """Whether cross_entropy runs as one node (NOTE [fused cross-entropy] in ember/ops/nn_ops.py): outside forward-AD
    / vmap levels, a non-empty floating input, targets and weights that need no gradient."""
    return (_mode.interpose is None and input.dim() >= 1 and input.numel() > 0 and input._dtype.is_floating_point
            and type(input._data) is np.ndarray and type(target._data) is np.ndarray and not target._requires_grad
            and (weight is None or (not weight._requires_grad and weight._dtype is input._dtype and weight.dim() == 1
                                    and weight.numel() == input.shape[1 if input.dim() > 1 else 0])))


def _fused_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                         eps: float) -> Tensor:
    """cross_entropy as one fused node: the target weights of NOTE [fused cross-entropy], then the op."""
    cdim = 1 if input.dim() > 1 else 0
    c = input.shape[cdim]
    acc = np.float32 if input._dtype._reduced else input._data.dtype  # 16-bit floats: float32 (torch)
    w = None if weight is None else weight._data.astype(acc, copy=False)
    idx = pick = smooth = q = None
    if target._dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):  # class probabilities
        q = target._data.astype(acc)  # (a copy: later changes of the target stay out)
        if eps > 0:
            q = q * (1 - eps) + eps / c
        if w is not None:
            q = q * _N._class_row(w, cdim, input.dim())
        s = _kernels.fsum(q, (cdim,))
        scale = 1.0 / (input.numel() // c) if reduction == "mean" else 1.0
        name = "DivBackward1" if reduction == "mean" else "NegBackward0"
    else:
        _, valid = _class_targets(input, target, ignore_index)
        t = target._data
        tt = t.astype(np.int64) if valid.all() else np.where(valid, t, 0).astype(np.int64)
        wt = valid.astype(acc) if w is None else w[tt] * valid
        pick = wt * (1 - eps) if eps else wt
        s = pick
        if eps > 0:
            smooth = valid * np.asarray(eps / c, acc)
            s = pick + smooth * (c if w is None else w.sum())
        idx = np.expand_dims(tt, 1) if input.dim() > 1 else tt[None]
        total = float(wt.sum()) if reduction == "mean" else 1.0
        scale = 1.0 / total if total else math.nan
        name = "AddBackward0" if eps > 0 else "NllLoss2DBackward0" if input.dim() >= 3 else "NllLossBackward0"
    spec = (cdim, idx, pick, smooth, w if smooth is not None else None, q, s, scale, reduction)
    out = _N.cross_entropy_node(name).apply(input, spec)
    if reduction == "none" and input.dim() in (3, 5, 6, 7, 8) and q is None and eps == 0:
        out = out.view(target.shape)  # torch's nll_loss of K-d inputs views its 4-d result back: ViewBackward0
    return out


# NOTE [linear_cross_entropy's options]: torch 2.13's linear_cross_entropy with ``options`` runs a chunked kernel
# that never holds all logits at once (an LLM head's memory saver) and precomputes the gradients in forward. ember
# always runs the reference form (linear, then cross_entropy): the same values and first gradients, every logit in
# memory, and a graph that also differentiates twice and survives a second backward (where torch's chunked path
# raises). The options are still validated and resolved as torch does, and the calls torch refuses to chunk warn
# as in torch.
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): ``linear_weight`` (C, in) or
    (C, d1, ..., dK, in) for a K-dimensional loss; ``ignore_index`` None means -100 for class indices."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and target._dtype is _D.int64)
        if not chunkable:
            warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                          "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                          f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype="
                          f"{target.dtype}, out_features={out_features}, tracing=False, linear_bias.shape="
                          f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
        else:
            acc = options._adjust(num_batches=batches[0] if batches else 1, in_features=in_features,
                                  num_classes=num_classes, dtype=input.dtype, device=input.device).acc_dtype
            if acc != input.dtype and not (input.dtype in (_D.float16, _D.bfloat16) and acc == _D.float32):
                raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, "
                                   f"but got {acc} acc_dtype and {input.dtype} inputs.")
    rows = math.prod(out_features) * num_classes
    logits = linear(input, linear_weight.reshape(rows, in_features) if out_features else linear_weight,
                    linear_bias.reshape(rows) if out_features and linear_bias is not None else linear_bias)
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]


def _check_same_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                         f"({_size(input.shape)}) is deprecated. Please ensure they have the same size.")


def _not_differentiable(fname: str, **args) -> None:
    for name, t in args.items():
        if t is not None and t._requires_grad and _is_grad_enabled():
            raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument '{name}'. "
                               "This input cannot have requires_grad True.")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), the logs clamped at -100 (one node, torch's finite gradients at 0 and 1)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_same_size(input, target)
    if target._dtype != input._dtype:
        raise RuntimeError(f"Found dtype {_IP._title(target._dtype)} but expected {_IP._title(input._dtype)}")
    _no_complex("binary_cross_entropy", input)  # the kernel's dtype dispatch comes before its range check
    x = _all_examples(input)
    if x.size and ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        _broadcast_pair(input, weight)
        if tuple(weight.shape) != tuple(input.shape):  # torch expands it (and saves the expanded view)
            weight = weight.expand(input.shape)
    _not_differentiable("binary_cross_entropy", weight=weight)
    return _N.BinaryCrossEntropy.apply(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed stably in one node; pos_weight scales positive
    terms."""
    _no_complex("log_sigmoid_cpu", input)
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    for extra in (weight, pos_weight):
        if extra is not None:
            _broadcast_pair(input, extra)
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _N.BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input is log-probabilities), reduced; 'batchmean': per sample."""
    if input._dtype.is_complex or target._dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _E.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    d = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    zeros = cos * 0
    pos = _I.where(target == 1, 1 - cos, zeros)
    neg = _I.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, "
                           f"target: {_size(target.shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with d the p-norm pairwise distance."""
    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _E.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps); full adds Stirling."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = target
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * t.log() - t + 0.5 * (t * (2 * math.pi)).log()
        loss = loss + _I.where(t > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 * (log(max(var, eps)) + (input - target)**2 / max(var, eps)) (+ 0.5 log(2 pi) when full)."""
    if not isinstance(var, Tensor):
        var = _F.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction)
    if (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    v = var + (var.detach().clamp_min(eps) - var.detach())  # clamped value, identity gradient (torch's no_grad clamp)
    d = input - target
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# convolution, pooling, padding, interpolation (._functional_conv): loaded on first use, see the end of this file


# ---------------------------------------------------------------- bilinear
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]`` over matching leading (batch) dims."""
    args = (input1, input2, weight, bias)
    if _is_grad_enabled() and any(isinstance(t, Tensor) and t._dtype.is_complex for t in args) and \
            any(isinstance(t, Tensor) and t._requires_grad for t in args):
        raise RuntimeError("_trilinear does not support automatic differentiation for outputs with complex dtype.")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{weight.shape[0]}")
    out = _linalg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ---------------------------------------------------------------- embedding_bag
def _bag_layout(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """(flat indices, bag id per kept element, number of bags, kept-element count) of torch's bag encodings."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        b, n = input.shape
        return input._data.reshape(-1), np.repeat(np.arange(b), n), b, b * n
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None or offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor" + (" but got None" if offsets is None else ""))
    off = offsets._data.astype(np.int64)
    n = input.shape[0]
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if off.size and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {off[-1]}")
    ends = off[1:] if include_last_offset else np.append(off[1:], n)
    starts = off[:-1] if include_last_offset else off
    b = starts.size
    lengths = np.maximum(ends - starts, 0)
    return input._data, np.repeat(np.arange(b), lengths), b, int(lengths.sum())


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows (bags: rows of a 2-d ``input`` or ``offsets`` into a 1-d one);
    empty bags and ``padding_idx`` entries contribute nothing."""
    if input._dtype not in (_D.int64, _D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding_bag)")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                             f"must have the same shape as the input ({input.shape})")
    idx, bag, nbags, used = _bag_layout(input, offsets, include_last_offset)
    idx = idx[:used]
    n = weight.shape[0]
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:  # torch names a position counted inside its kernel's chunk; ember names the flat position
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in the valid range "
                           f"[0, {n})")
    keep = np.ones(used, bool) if padding_idx is None else idx != (padding_idx % n)
    rows = embedding(_wrap(idx[keep], _D.int64), weight, None, max_norm, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[_wrap(np.flatnonzero(keep), _D.int64)].unsqueeze(1)
    bag = bag[keep]
    out = _F.zeros((nbags, weight.shape[1]), dtype=weight.dtype)
    if mode == "max":
        where = _wrap(np.broadcast_to(bag[:, None], rows.shape).copy(), _D.int64)
        return out.scatter_reduce(0, where, rows, "amax", include_self=False)
    out = out.index_add(0, _wrap(bag, _D.int64), rows)
    if mode == "mean":
        counts = np.maximum(np.bincount(bag, minlength=nbags), 1).astype(weight._data.dtype)
        out = out / _wrap(counts[:, None], weight.dtype)
    return out


# ---------------------------------------------------------------- helpers torch.nn.functional exposes
TYPE_CHECKING = False


class _BroadcastingList:
    """TorchScript's ``BroadcastingList2[int]`` annotation (an int or a list of two): subscripting gives None."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true, if_false, module_name=None,
                     func_name=None):
    """A function calling ``if_true`` or ``if_false`` by a boolean argument (given by keyword ``arg_name`` or at
    position ``arg_index``, else ``default``), with the docstring of whichever of the two has one."""

    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is not None and if_true.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


# Loaded on first use, never called from this module (a module __getattr__ serves F.<name> only): convolution,
# pooling, padding, interpolation (CONV_NAMES is _functional_conv.__all__, kept equal by
# tests/core/test_lazy_imports.py), attention and CTC.
from .._lazy import attach as _attach  # noqa: E402

CONV_NAMES = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
              "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
              "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
              "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
              "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
              "adaptive_max_pool3d_with_indices", "pad", "interpolate", "upsample", "upsample_nearest",
              "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "lp_pool1d", "lp_pool2d", "lp_pool3d",
              "max_unpool1d", "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
              "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "conv_tbc")
__getattr__, __dir__ = _attach(__name__, {
    **{name: f"._functional_conv:{name}" for name in CONV_NAMES},
    "grid_sample": "._functional_grid:grid_sample", "affine_grid": "._functional_grid:affine_grid",
    "scaled_dot_product_attention": "._functional_attention:scaled_dot_product_attention",
    "multi_head_attention_forward": "._functional_attention:multi_head_attention_forward",
    "ctc_loss": "._functional_ctc:ctc_loss",
    "pdist": "..ops.linalg:pdist", "channel_shuffle": "..ops.pixel_shuffle:channel_shuffle",
    "native_channel_shuffle": "..ops.pixel_shuffle:native_channel_shuffle", "celu_": ".._aten:celu_",
    "selu_": ".._aten:selu_"})


# ---------------------------------------------------------------- more activations: log-sigmoid, shrinks, rrelu
from ..ops.random import uniform_value as _uniform_value  # noqa: E402

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


# ---------------------------------------------------------------- margin losses (compositions of ember ops)
__all__ += ["hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
            "multi_margin_loss", "triplet_margin_with_distance_loss"]


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1 (other targets get both terms, as torch's)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = _F.zeros_like(input)
    margin_term = _I.where(target != 1, (margin - input).clamp_min(0), zeros)
    self_term = _I.where(target != -1, input, zeros)
    return _reduce(margin_term + self_term, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross entropy of sigmoid(input) against 0/1 targets, averaged over the classes (last dim), reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


def _margin_frames(input: Tensor) -> tuple:
    """(frames, classes) of a multi-class margin loss input: (C), (N, C) or a 0-d single score; torch's error else."""
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if nd <= 1:
        return 1, input.shape[0] if nd else 1
    return input.shape[0], input.shape[1]


def _long_target(target: Tensor) -> np.ndarray:
    if target._dtype != _D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_IP._title(target._dtype)}")
    return target._data


def _frame_losses(loss: Tensor, scalar: bool, reduction: str) -> Tensor:
    """Per-frame losses (N,) reduced; ``scalar``: the one frame of an unbatched input is returned 0-d."""
    return _reduce(loss.reshape(()) if scalar else loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j (listed in ``target`` up to the first -1) and non-target classes i of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes, per sample; reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    nf, c = _margin_frames(input)
    t = _long_target(target)
    ok = t.ndim <= 1 and t.size == c if input.dim() <= 1 else t.shape == (nf, c)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    t = t.reshape(nf, c)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # entries before the first -1
    counts = np.zeros((nf, c), input._data.dtype)
    np.add.at(counts, (np.nonzero(listed)[0], t[listed]), 1)  # a class listed twice counts twice
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]  # (frame, target class j, non-target class i)
    x = input.reshape(nf, c)
    hinge = _N.activation("Threshold", 1 - x.unsqueeze(2) + x.unsqueeze(1), 0.0, 0.0)  # its gradient joins x's graph
    loss = (hinge * _wrap(pairs, input._dtype)).sum((1, 2)) / c
    return _frame_losses(loss, input.dim() <= 1, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """sum over classes i != y of max(0, margin - x[y] + x[i])**p (times weight[y]) over the number of classes, per
    sample; reduced. p is 1 or 2."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nf, c = _margin_frames(input)
    t = _long_target(target)
    if t.ndim > 1 or t.size != nf:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nf}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    t = t.reshape(nf)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    x = input.reshape(nf, c)
    idx = _wrap(t.astype(np.int64), _D.int64)
    hinge = _N.activation("Threshold", margin - x.gather(1, idx.unsqueeze(1)) + x, 0.0, 0.0)
    if p == 2:
        hinge = hinge * hinge
    others = _wrap((np.arange(c) != t[:, None]).astype(input._data.dtype), input._dtype)
    hinge = hinge * others
    if weight is not None:
        hinge = hinge * weight[idx].unsqueeze(1)
    return _frame_losses(hinge.sum(1) / c, target.dim() == 0, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) for any distance function d (default: pairwise_distance); swap uses
    min(d(a, n), d(p, n))."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _E.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# the functions torch's nn.functional takes from its C++ builtins (the rest are Python functions in torch too)
_args.install(globals(), ("linear", "bilinear", "gelu", "one_hot", "logsigmoid", "softplus", "softshrink", "hardshrink",
                          "elu_", "leaky_relu_", "hardtanh_", "relu_", "rrelu_", "threshold_", "prelu",
                          "cosine_similarity", "pairwise_distance"), out=("hardshrink",))
