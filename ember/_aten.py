"""torch.* names that spell ATen's operator list rather than Python's API.

- the ATen-style signatures of nn functions at the top level (``torch.layer_norm(input, shape, w, b, eps,
  cudnn_enable)``, integer ``reduction`` codes ...), over ``nn.functional``;
- the top-level in-place forms (``torch.exp_(t)`` is ``t.exp_()``) made by one factory from the Tensor methods, and
  the few written out (fill_, zero_, detach_, index_put_, embedding_renorm_);
- the ``*_copy`` variants of view ops (``torch.permute_copy`` ...): the view op, then a contiguous copy.
"""
from __future__ import annotations

import importlib
import inspect
import math
import warnings

import numpy as np

from . import _args
from . import _dtype as D
from . import _layout
from ._args import tensor_arg as _tensor_arg
from ._tensor import Tensor
from .ops import _table
from .ops.shape import split_with_sizes
from .ops.strided import as_strided

__all__ = [
    "softmax", "log_softmax", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "to_dlpack", "embedding", "layer_norm",
    "group_norm", "batch_norm", "instance_norm", "rms_norm", "cosine_similarity", "pairwise_distance", "kl_div",
    "prelu", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "rrelu", "rrelu_",
    "bilinear", "binary_cross_entropy_with_logits", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "convolution", "max_pool1d_with_indices",
    "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "embedding_renorm_", "fill", "fill_", "zero_",
    "detach_", "index_put_",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(code) -> str:
    """ATen's integer reduction codes (0 none, 1 mean, 2 sum); strings pass through."""
    if isinstance(code, str):
        return code
    if code not in (0, 1, 2):
        raise ValueError(f"{code} is not a valid value for reduction")
    return _REDUCTIONS[code]


def _F():
    from .nn import functional

    return functional


# ---------------------------------------------------------------- ATen spellings of nn functions
def softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    """softmax along ``dim`` (optionally computed in ``dtype``)."""
    _tensor_arg("softmax", input)
    return _F().softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    """log(softmax) along ``dim``, computed stably."""
    _tensor_arg("log_softmax", input)
    return _F().log_softmax(input, dim, dtype=dtype)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _tensor_arg("dropout", input)
    return _F().dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _tensor_arg("alpha_dropout", input)
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train, inplace=True)


def _feature_mask(input: Tensor, p: float) -> Tensor:
    from .ops.random import bernoulli
    from ._factories import full

    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = bernoulli(full(shape, 1.0 - p, dtype=input.dtype))
    return keep / (1.0 - p) if p < 1 else keep


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole feature maps (dims 0 and 1 sampled, the rest shared)."""
    _tensor_arg("feature_dropout", input)
    if not train or p == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    if not train or p == 0:
        return input
    return input.mul_(_feature_mask(input, p))


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """alpha_dropout of whole feature maps (one draw per (N, C) pair)."""
    _tensor_arg("feature_alpha_dropout", input)
    return _feature_alpha(input, p, train, False)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature_alpha(input, p, train, True)


def _feature_alpha(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    F = _F()
    if not train or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    alpha = F._SELU_ALPHA * F._SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    m, b = F._alpha_masks(input.detach(), p, tuple(input.shape[:2]) + (1,) * (input.dim() - 2), a, alpha)
    return input.mul_(m).add_(b) if inplace else input * m + b


def to_dlpack(data: Tensor, *, dl_device=None, copy: bool | None = None):
    """A DLPack capsule sharing ``data``'s memory (``copy=True``: of a copy; ``dl_device``: the CPU only)."""
    from .utils.dlpack import to_dlpack as _to

    if dl_device is not None and tuple(dl_device)[0] != 1:
        raise BufferError(f"to_dlpack(): ember tensors live on the CPU (DLPack device type 1), not {dl_device}")
    if not isinstance(data, Tensor):
        return _to(data)
    return _to(data.detach().clone() if copy else data)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at ``indices`` (ATen argument order: weight first; padding_idx -1 means none)."""
    _tensor_arg("embedding", weight, "weight")
    return _F().embedding(indices, weight, None if padding_idx is None or padding_idx < 0 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    _tensor_arg("layer_norm", input)
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    _tensor_arg("group_norm", input)
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool, momentum: float,
               eps: float, cudnn_enabled: bool) -> Tensor:
    _tensor_arg("batch_norm", input)
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool, momentum: float,
                  eps: float, cudnn_enabled: bool) -> Tensor:
    _tensor_arg("instance_norm", input)
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    _tensor_arg("rms_norm", input)
    return _F().rms_norm(input, normalized_shape, weight, eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    _tensor_arg("cosine_similarity", x1, "x1")
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    _tensor_arg("pairwise_distance", x1, "x1")
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def kl_div(input: Tensor, target: Tensor, reduction=1, *, log_target: bool = False) -> Tensor:
    _tensor_arg("kl_div", input)
    with warnings.catch_warnings():  # ATen's kl_div has no 'batchmean' advice to give
        warnings.simplefilter("ignore", UserWarning)
        return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    _tensor_arg("prelu", input)
    return _F().prelu(input, weight)


def selu(input: Tensor) -> Tensor:
    _tensor_arg("selu", input)
    return _F().selu(input)


def selu_(input: Tensor) -> Tensor:
    return _F().selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    _tensor_arg("celu", input)
    return _F().celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _F().celu(input, alpha, inplace=True)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: F811 - torch's argument name
    _tensor_arg("threshold", input)
    return _F().threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _F().threshold(input, threshold, value, inplace=True)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    _tensor_arg("hardshrink", input)
    return _F().hardshrink(input, lambd)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element when training, else the mean."""
    _tensor_arg("rrelu", input)
    return _F()._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return _F()._rrelu(input, lower, upper, training, True, generator)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _tensor_arg("bilinear", input1, "input1")
    return _F().bilinear(input1, input2, weight, bias)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction=1) -> Tensor:
    _tensor_arg("binary_cross_entropy_with_logits", input)
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction=1) -> Tensor:
    _tensor_arg("margin_ranking_loss", input1, "input1")
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction=1) -> Tensor:
    _tensor_arg("hinge_embedding_loss", input)
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction=1) -> Tensor:
    _tensor_arg("cosine_embedding_loss", input1, "input1")
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction=1) -> Tensor:
    _tensor_arg("triplet_margin_loss", anchor, "anchor")
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction) -> Tensor:
    _tensor_arg("poisson_nll_loss", input)
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """ATen's convolution entry: 1-, 2- or 3-d, plain or transposed, through nn.functional."""
    _tensor_arg("convolution", input)
    nd = weight.dim() - 2
    if nd < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if nd > 3:
        raise RuntimeError("unsupported ConvNd parameters")
    if input._dtype.is_complex:  # (nn.functional's convolutions take complex tensors; ATen's kernel does not)
        from .ops.reduction import complex_refused

        kernel = ("slow_conv_transpose2d_out_cpu", "slow_conv_transpose3d_out_cpu") if transposed else (
            "slow_conv2d_cpu", "compute_columns3d")
        raise complex_refused(kernel[nd == 3], input._data.dtype)
    if transposed:
        return getattr(_F(), f"conv_transpose{nd}d")(input, weight, bias, stride, padding, output_padding, groups,
                                                     dilation)
    return getattr(_F(), f"conv{nd}d")(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
    _tensor_arg("max_pool1d_with_indices", input)
    return _F().max_pool1d_with_indices(input, kernel_size, stride if stride not in ((), []) else None, padding,
                                        dilation, ceil_mode)


def _torch_max_pool(nd: int):
    """torch.max_pool{nd}d: the pooled values (nn.functional's takes return_indices too)."""
    name = f"max_pool{nd}d"

    def pool(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
        _tensor_arg(name, input)
        return getattr(_F(), name)(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
                                   ceil_mode)

    pool.__name__ = pool.__qualname__ = name
    pool.__doc__ = f"torch.{name}: the pooled values (nn.functional's takes return_indices too)."
    return pool


max_pool1d, max_pool2d, max_pool3d = (_torch_max_pool(nd) for nd in (1, 2, 3))


def adaptive_max_pool1d(input: Tensor, output_size):
    """torch.adaptive_max_pool1d: (values, indices), as nn.functional's with return_indices=True."""
    _tensor_arg("adaptive_max_pool1d", input)
    return _F().adaptive_max_pool1d(input, output_size, True)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Rescale, in place and outside autograd, the rows at ``indices`` whose norm exceeds ``max_norm``."""
    rows = np.unique(indices._data.reshape(-1))
    w = input._data
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=-1)
    big = norms > max_norm
    w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
    input._bump()
    return input


# ---------------------------------------------------------------- in-place top-level forms and *_copy forms
def fill(input: Tensor, value) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (gradient zero for ``input``)."""
    _tensor_arg("fill", input)
    return input.clone().fill_(value) if input.requires_grad else input.clone().detach().fill_(value)


def fill_(input: Tensor, value) -> Tensor:
    return input.fill_(value)


def zero_(input: Tensor) -> Tensor:
    return input.zero_()


def detach_(input: Tensor) -> Tensor:
    return input.detach_()


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    return input.index_put_(indices, values, accumulate)


def _inplace_form(name: str):
    def fn(input: Tensor, *args, **kwargs) -> Tensor:
        _tensor_arg(name, input)
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: in place."
    return fn


# torch.exp_(t) ...: the rows of the op tables that declare one (NOTE [one row per op] in ops/_table.py), and these
INPLACE_FORMS = ["neg_", "negative_", "resize_as_", "addmv_"]
INPLACE_FORMS += [n for m in _table.ROW_MODULES for n in importlib.import_module(m).EXPORTS.torch_inplace]
for _n in INPLACE_FORMS:
    globals()[_n] = _inplace_form(_n)
__all__ += INPLACE_FORMS


_NO_COMPLEX_GRAD_COPIES = ("select_copy", "slice_copy")  # torch has no complex derivative for these


def _copy_form(name: str, view):
    def fn(input: Tensor, *args, **kwargs):
        if name in _NO_COMPLEX_GRAD_COPIES:
            from .ops.complex_numbers import refuse_complex_grad

            refuse_complex_grad(name, input)
        out = view(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return tuple(o.clone(memory_format=_layout.contiguous_format) for o in out)
        return out.clone(memory_format=_layout.contiguous_format)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name[:-5]} as a new tensor (no memory shared with ``input``)."
    fn.__signature__ = inspect.signature(view)
    return fn


def _view_as_real(x):
    from .ops.complex_numbers import view_as_real

    return view_as_real(x)


def _view_as_complex(x):
    from .ops.complex_numbers import view_as_complex

    return view_as_complex(x)


def _slice(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    key = (slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)
    return input[key]


_VIEWS = {  # torch's parameter names
    "view_copy": lambda input, size=None, *, dtype=None: input.view(dtype if size is None else size),
    "permute_copy": lambda input, dims: input.permute(dims),
    "expand_copy": lambda input, size, *, implicit=False: input.expand(size),
    "squeeze_copy": lambda input, dim=None: input.squeeze() if dim is None else input.squeeze(dim),
    "unsqueeze_copy": lambda input, dim: input.unsqueeze(dim), "t_copy": lambda input: input.t(),
    "transpose_copy": lambda input, dim0, dim1: input.transpose(dim0, dim1),
    "diagonal_copy": lambda input, offset=0, dim1=0, dim2=1: input.diagonal(offset, dim1, dim2),
    "select_copy": lambda input, dim, index: input.select(dim, index), "slice_copy": _slice,
    "split_copy": lambda input, split_size, dim=0: input.split(split_size, dim),
    "split_with_sizes_copy": lambda input, split_sizes, dim=0: split_with_sizes(input, split_sizes, dim),
    "unbind_copy": lambda input, dim=0: input.unbind(dim),
    "unfold_copy": lambda input, dimension, size, step: input.unfold(dimension, size, step),
    "as_strided_copy": as_strided, "detach_copy": lambda input: input.detach(),
    "alias_copy": lambda input: input.view(input.shape),
    "view_as_real_copy": lambda input: _view_as_real(input),
    "view_as_complex_copy": lambda input: _view_as_complex(input),
}
for _n, _v in _VIEWS.items():
    globals()[_n] = _copy_form(_n, _v)
__all__ += list(_VIEWS)
del _n, _v

# The in-place forms get their methods' signatures (and torch's argument conventions) once the methods exist:
# ember/_methods.py ``bind``.
_args.install(globals(), [n for n in __all__ if n not in INPLACE_FORMS],
              out=("hardshrink", "log_softmax", "softmax", "threshold", *_VIEWS))
