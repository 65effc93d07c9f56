"""ember.nn.functional: stateless forms of the layers.

Here: linear and bilinear, distances and one_hot, normalization, dropout, embedding and embedding_bag, and the
helpers torch's nn.functional exposes. Re-exported from their own modules: the activations
(_functional_activation.py) and the losses (_functional_loss.py); loaded on first use: convolution, pooling,
padding, interpolation (_functional_conv.py), grid_sample/affine_grid, attention and CTC.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _args
from .. import _backend as _B
from .. import _dtype as _D
from .. import _factories as _F
from .._tensor import Tensor, _all_examples, _wrap
from ..ops import _inplace as _IP
from ..ops import linalg as _linalg
from ..ops import nn_ops as _N
from ..ops import norms as _NORM
from ..ops.shape import cat as _cat
from ..autograd.grad_mode import is_grad_enabled as _is_grad_enabled
from ..autograd._interpose import fused_ok as _fused_ok, replayable as _replayable
from ._functional_activation import *  # noqa: F401,F403 - see _functional_activation.__all__
from ._functional_activation import __all__ as _ACTIVATIONS, _SELU_ALPHA, _SELU_SCALE, _no_complex
from ._functional_activation import _rrelu  # noqa: F401 - ember._aten's rrelu

__all__ = [
    "linear", "normalize", "cosine_similarity", "pairwise_distance", "one_hot", "batch_norm", "layer_norm",
    "group_norm", "instance_norm", "rms_norm", "dropout", "dropout2d", "alpha_dropout", "embedding", *_ACTIVATIONS,
]
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


# ------------------------------------------------------------------------------------------------ distances, one_hot
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
    return _wrap((a[..., None] == np.arange(num_classes, like=a)).astype(np.int64), _D.int64)


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
    return (_fused_ok() and input._dtype.is_floating_point and input.numel() > 0
            and _B.is_array(input._data)  # (any device: the node's kernels are device-generic)
            and all(p is None or (p._dtype is input._dtype and type(p._data) is type(input._data)) for p in params))


def _channel_shape(input: Tensor) -> tuple:
    return (1, input.shape[1]) + (1,) * (input.dim() - 2)


@_replayable  # updates a buffer on arrays: NOTE [replayable steps]
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
        running = None if batch else (running_mean.repeat(n)._data, running_var.repeat(n)._data)
        out, mean, var = _NORM.NativeBatchNorm.apply(x, None if weight is None else weight.repeat(n),
                                                     None if bias is None else bias.repeat(n), layout, axes, wshape,
                                                     eps, running)
        if batch:
            _update_running_instance(running_mean, running_var, mean, var, n, c, math.prod(input.shape[2:]), momentum)
        return out.view(input.shape)
    if use_input_stats or running_mean is None:
        out, mean, var = _normalized(input, dims, eps)
        n = math.prod(input.shape[2:])
        _update_running(running_mean, mean.mean(0), momentum)
        _update_running(running_var, (var * (n / max(n - 1, 1))).mean(0), momentum)
    else:
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


@_replayable  # updates buffers on arrays: NOTE [replayable steps]
def _update_running_instance(running_mean, running_var, mean: Tensor, var: Tensor, n: int, c: int, m: int,
                             momentum: float) -> None:
    """Instance norm's running statistics: the per-(sample, channel) batch statistics averaged over the samples."""
    _update_running(running_mean, _wrap(mean._data.reshape(n, c).mean(0), mean._dtype), momentum)
    _update_running(running_var, _wrap((var._data * (m / max(m - 1, 1))).reshape(n, c).mean(0), var._dtype),
                    momentum)


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
    return (_F.rand(shape, dtype=input._dtype, device=input.device)._data >= p).astype(input._data.dtype)


@_replayable  # draws random numbers: NOTE [replayable steps]
def _dropout_mask(input: Tensor, p: float, shape: tuple, scale: float) -> Tensor:
    """1 / (1 - p) where an element is kept (probability 1 - p), else 0, in ``input``'s dtype."""
    return _wrap(_keep_mask(input, p, shape) * input._data.dtype.type(scale), input._dtype)


@_replayable  # draws random numbers: NOTE [replayable steps]
def _alpha_masks(input: Tensor, p: float, shape: tuple, a: float, alpha: float) -> tuple:
    """alpha dropout's multiplier and offset (one draw per element of ``shape``)."""
    keep = _keep_mask(input, p, shape)
    b = _wrap(((keep - 1) * (alpha * a) + alpha * a * p).astype(input._data.dtype), input._dtype)
    m = _wrap((keep * a).astype(input._data.dtype), input._dtype)
    return m, b


def _masked(input: Tensor, p: float, shape: tuple, inplace: bool) -> Tensor:
    m = _dropout_mask(input.detach(), p, shape, 1 / (1 - p))
    return input.mul_(m) if inplace else input * m


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (identity unless training)."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    return _masked(input, p, tuple(input.shape), inplace)


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
    return _masked(input, p, shape, inplace)


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
    m, b = _alpha_masks(input.detach(), p, shape, a, alpha)
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
    if every.size:  # NOTE [device-side asserts]
        _B.device_assert((every.min() < 0) | (every.max() >= n), lambda: IndexError("index out of range in self"))
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    return _N.Embedding.apply(weight, idx, padding_idx, False, scale_grad_by_freq)


# convolution, pooling, padding, interpolation (._functional_conv): loaded on first use, see the end of this file


# ---------------------------------------------------------------- embedding_bag
def _bag_layout(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """(flat indices, bag id per kept element, number of bags, kept-element count) of torch's bag encodings, on the
    host (bookkeeping; the index tensors made from them go to the weight's device)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        b, n = input.shape
        return _B.to_host(input._data).reshape(-1), np.repeat(np.arange(b), n), b, b * n
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None or offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor" + (" but got None" if offsets is None else ""))
    off = _B.to_host(offsets._data).astype(np.int64)
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
    return _B.to_host(input._data), np.repeat(np.arange(b), lengths), b, int(lengths.sum())


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
    on = weight._data  # index tensors on the weight's device
    rows = embedding(_wrap(_B.like(on, idx[keep]), _D.int64), weight, None, max_norm, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[_wrap(_B.like(on, np.flatnonzero(keep)), _D.int64)].unsqueeze(1)
    bag = bag[keep]
    out = _F.zeros((nbags, weight.shape[1]), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        where = _wrap(_B.like(on, np.broadcast_to(bag[:, None], rows.shape).copy()), _D.int64)
        return out.scatter_reduce(0, where, rows, "amax", include_self=False)
    out = out.index_add(0, _wrap(_B.like(on, bag), _D.int64), rows)
    if mode == "mean":
        counts = np.maximum(np.bincount(bag, minlength=nbags), 1).astype(weight._data.dtype)
        out = out / _wrap(_B.like(on, counts[:, None]), weight.dtype)
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


# the functions torch's nn.functional takes from its C++ builtins (the rest are Python functions in torch too)
_args.install(globals(), ("linear", "bilinear", "one_hot", "cosine_similarity", "pairwise_distance"))

# the losses: their own module, re-exported here (it imports linear and pairwise_distance from this one, so last)
from ._functional_loss import *  # noqa: E402,F401,F403 - see _functional_loss.__all__
from ._functional_loss import __all__ as _LOSSES, _reduction  # noqa: E402,F401 - _reduction: nn/modules/loss.py

__all__ += _LOSSES
for _n in _ACTIVATIONS + _LOSSES:  # torch.nn.functional.relu.__module__ is torch.nn.functional: the same here
    globals()[_n].__module__ = __name__
del _n
