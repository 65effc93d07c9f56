"""Functional convolution, pooling, padding, interpolation and pixel shuffling (torch.nn.functional's forms).

Argument checking and torch's error messages live here; the differentiable work is in ember/ops/conv.py,
pooling.py, resample.py and pixel_shuffle.py.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _args
from .._tensor import _CPP_NAMES, Tensor, _all_examples, _type_string
from ..ops import conv as _C, pooling as _P, resample as _R
from .. import _factories as _F
from ..ops.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from ..ops.shape import stack as _stack
from ..ops._inplace import _title
from ..ops.reduction import complex_refused
from ..autograd.grad_mode import is_grad_enabled

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "pad", "interpolate", "upsample", "upsample_nearest",
           "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle"]


def _tuple(v, n: int, name: str = "", op: str = "") -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1 and n > 1:
            return tuple(v) * n
        if len(v) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(v)}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _shape_str(t: Tensor) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


# ------------------------------------------------------------------ convolution
def _conv_checks(input: Tensor, weight: Tensor, nd: int, groups: int, transposed: bool, name: str):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {_shape_str(input)}")
    if input.dtype.is_complex and weight.dtype != input.dtype:  # (torch's complex convolution checks this first)
        raise RuntimeError(f"Input type ({_type_string(input.dtype)}) and weight type ({_type_string(weight.dtype)}) "
                           "should be the same")
    if weight.dim() != nd + 2:
        raise RuntimeError("weight should have at least three dimensions" if nd == 1 and weight.dim() < 3 else
                           f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight {_shape_str(weight)}, "
                           f"but got {weight.dim()}-dimensional input of size {_shape_str(input)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_shape_str(weight)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_shape_str(weight)}] instead")  # torch's doubled brackets
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    c = x.shape[1]
    if transposed:
        if c != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(weight)}, expected input"
                               f"{_shape_str(x)} to have {weight.shape[0]} channels, but got {c} channels instead")
    elif c != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(weight)}, expected input{_shape_str(x)} "
                           f"to have {weight.shape[1] * groups} channels, but got {c} channels instead")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_title(input.dtype)} but found {_title(weight.dtype)}")
    return x, batched


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    x, batched = _conv_checks(input, weight, nd, groups, False, name)
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (k[i] - 1) for i in range(nd)]
            padding = tuple(t // 2 for t in total)
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):
                pads = []
                for e in reversed(extra):
                    pads += [0, e]
                x = _R.constant_pad_nd(x, tuple(pads), 0)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    padding = _tuple(padding, nd, "padding")
    padded = tuple(x.shape[2 + i] + 2 * padding[i] for i in range(nd))
    eff = tuple(dilation[i] * (k[i] - 1) + 1 for i in range(nd))
    if any(padded[i] < eff[i] for i in range(nd)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {_shape_str(weight)}, expected bias to be 1-dimensional with "
                           f"{weight.shape[0]} elements, but got bias of size {_shape_str(bias)} instead")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[input.dtype.name][0]}) and bias type "
                           f"({_CPP_NAMES[bias.dtype.name][0]}) should be the same")
    y = _C.convolution(x, weight, bias, stride, padding, dilation, False, (0,) * nd, groups)
    return y if batched else y.squeeze(0)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-d cross-correlation over (N, C, L) input (padding: int, tuple, 'valid' or 'same')."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-d cross-correlation over (N, C, H, W) input (padding: int, tuple, 'valid' or 'same')."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    x, batched = _conv_checks(input, weight, nd, groups, True, name)
    if bias is not None and bias.dtype != input.dtype:
        if input.dtype.is_complex:
            raise RuntimeError(f"Input type ({_type_string(input.dtype)}) and bias type ({_type_string(bias.dtype)}) "
                               "should be the same")
        if bias.dtype.is_complex:  # a real bias of another dtype is cast to the input's
            raise RuntimeError(f"result type {_title(bias.dtype)} can't be cast to the desired output type "
                               f"{_title(input.dtype)}")
    stride, padding = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    dilation, opad = _tuple(dilation, nd, "dilation"), _tuple(output_padding, nd, "output_padding")
    if any(opad[i] >= stride[i] and opad[i] >= dilation[i] for i in range(nd)):
        # torch names the axes (depth, height, width); 1-d runs as 2-d with a height of one
        names = ("depth", "height", "width")[-max(nd, 2):]
        lift = (lambda t, v: (v,) + t) if nd == 1 else (lambda t, v: t)
        parts = [f"{what}_{n}: {v}" for what, vals in (("output_padding", lift(opad, 0)), ("stride", lift(stride, 1)),
                                                       ("dilation", lift(dilation, 1))) for n, v in zip(names, vals)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
    y = _C.convolution(x, weight, bias, stride, padding, dilation, True, opad, groups)
    return y if batched else y.squeeze(0)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-d cross-correlation over (N, C, D, H, W) input (padding: int, tuple, 'valid' or 'same')."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-d transposed convolution; weight (C_in, C_out/groups, k)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-d transposed convolution; weight (C_in, C_out/groups, kh, kw)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """3-d transposed convolution; weight (C_in, C_out/groups, kd, kh, kw)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d")


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks: (N, C, H, W) -> (N, C*kh*kw, L)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    k, d, p, s = (_tuple(v, 2, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                (padding, "padding"), (stride, "stride")))
    out = [(x.shape[2 + i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)]
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({out[0]}, {out[1]}), but its components must be at least one.")
    y = _C.im2col(x, k, d, p, s)
    return y if input.dim() == 4 else y.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum sliding local blocks back into an image: (N, C*kh*kw, L) -> (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                           f"(got {input.dim()}D)")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    o, k, d, p, s = (_tuple(v, 2, n) for v, n in ((output_size, "output_size"), (kernel_size, "kernel_size"),
                                                   (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={x.shape[1]} and kernel_size=({k[0]}, {k[1]})")
    blocks = [(o[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    y = _C.col2im(x, o, k, d, p, s)
    return y if input.dim() == 3 else y.squeeze(0)


# ------------------------------------------------------------------ pooling
_NUM = {1: "one", 2: "two", 3: "three"}


def _pool_arg(v, nd: int, what: str, name: str) -> tuple:
    """One pooling geometry argument as an ``nd``-tuple, with torch's per-function refusals."""
    if not isinstance(v, (tuple, list)):
        return (int(v),) * nd
    if len(v) == nd or len(v) == 1:
        return tuple(int(a) for a in v) * (nd if len(v) == 1 else 1)
    if name == "max_pool1d":
        phrase = {"kernel_size": "must be an int, list of ints or tuple of ints",
                  "stride": "must be None, an int, list of ints, or tuple of ints",
                  "padding": "must be an int, list of ints, or tuple of ints",
                  "dilation": "must be an int, list of ints or tuple of ints"}[what]
        raise RuntimeError(f"max_pool1d() {what} {phrase} of size 1 but got size {len(v)}")
    if name == "avg_pool1d":
        raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int (got {len(v)})")
    phrase = {"kernel_size": "must either be a single int", "stride": "must either be omitted, a single int",
              "padding": "must either be a single int", "dilation": "must be either a single int"}[what]
    if name == "avg_pool3d":
        phrase = phrase.replace("either ", "")
    raise RuntimeError(f"{name}: {what} {phrase}, or a tuple of {_NUM[nd]} ints")


def _pool_input(input: Tensor, nd: int, name: str) -> Tensor:
    """The input (batched or not) checked as torch does; 1-d pools run on a height of one."""
    if name == "avg_pool1d" and input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    if nd == 3:
        if input.dim() not in (4, 5):
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        for d in range(1 if input.dim() == 5 else 0, input.dim()):
            if input.shape[d] == 0:
                where = "max_pool3d_with_indices_out_cpu_template()" if name == "max_pool3d" else f"{name}()"
                # (torch prints the dimension's length where it means to print its index)
                raise RuntimeError(f"{where}: Expected input's non-batch dimensions to have positive length, but "
                                   f"input has a shape of {_shape_str(input)} and non-batch dimension 0 has length "
                                   f"zero!")
        return input
    x = input.unsqueeze(-2) if nd == 1 else input
    if x.dim() not in (3, 4) or x.numel() == 0 and 0 in x.shape[1:]:
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got: {_shape_str(input)}")
        if name == "max_pool2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(x.shape)}")
    return x


def _pool_back(y: Tensor, nd: int) -> Tensor:
    return y.squeeze(-2) if nd == 1 else y


def _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    """(kernel, stride, padding, dilation) of the pooled trailing axes (1-d lifted to 2-d), checked as torch."""
    k = _pool_arg(kernel_size, nd, "kernel_size", name)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0)
    s = k if no_stride else _pool_arg(stride, nd, "stride", name)
    p, d = _pool_arg(padding, nd, "padding", name), _pool_arg(dilation, nd, "dilation", name)
    for i in range(nd):
        if s[i] == 0:
            raise RuntimeError("stride should not be zero")
        if p[i] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[i]}" if name == "max_pool1d"
                               else f"pad must be non-negative, but got pad: {p[i]}")
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    if nd == 1:
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    n = len(k)
    size = x.shape[-n:]
    if name == "avg_pool3d" and any(size[i] < k[i] for i in range(3)):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    out = [_P.pool_out_len(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(n)]
    if min(out) < 1:
        c = x.shape[-n - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + tuple(size)))}). Calculated output size: "
                           f"({'x'.join(map(str, [c] + out))}). Output size is too small")
    return k, s, p, d


def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name, values_only=False):
    x = _pool_input(input, nd, name)
    k, s, p, d = _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    if values_only and nd == 1 and x._dtype.is_complex and not (
            (x._requires_grad and is_grad_enabled()) or (x._ext is not None and x._ext.get("fw"))):
        # torch's max_pool1d computes values alone (its own kernel) unless a gradient needs the indices
        raise complex_refused("max_pool1d_impl", x._data.dtype)
    y, idx = _P.max_pool_with_indices(x, k, s, p, d, ceil_mode)
    return _pool_back(y, nd), _pool_back(idx, nd)


def _named_pair(name: str, pool, with_indices) -> tuple:
    """A max-pooling function ``name`` and its ``name``_with_indices form, named so (and documented: the form
    returns the indices too)."""
    with_indices.__doc__ = f"{name} returning (values, flat arg-max indices)."
    for f, n in ((pool, name), (with_indices, name + "_with_indices")):
        f.__name__ = f.__qualname__ = n
    return pool, with_indices


def _max_pool_fns(nd: int):
    """max_pool{nd}d and max_pool{nd}d_with_indices (torch's signatures: return_indices after ceil_mode)."""
    name = f"max_pool{nd}d"

    def with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                     return_indices=False):
        return _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name)

    def pool(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        y, idx = _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name, not return_indices)
        return (y, idx) if return_indices else y

    pool.__doc__ = f"Max over sliding windows of {nd}-d planes (and flat arg-max indices with return_indices)."
    return _named_pair(name, pool, with_indices)


max_pool1d, max_pool1d_with_indices = _max_pool_fns(1)
max_pool2d, max_pool2d_with_indices = _max_pool_fns(2)
max_pool3d, max_pool3d_with_indices = _max_pool_fns(3)


def _avg_pool(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, name):
    x = _pool_input(input, nd, name)
    k, s, p, _ = _pool_geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode, name)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_back(_P.avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override), nd)


def avg_pool1d(input: Tensor, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Mean over sliding windows of (N, C, L) input (``stride`` empty: the kernel size)."""
    if isinstance(stride, (tuple, list)) and not stride:
        stride = None
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """Mean over sliding windows of (N, C, H, W) input."""
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """Mean over sliding windows of (N, C, D, H, W) input."""
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool3d")


def _adaptive_size(x: Tensor, output_size, nd: int, name: str) -> tuple:
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(sizes) != nd:
        if name.startswith("adaptive_max"):
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
        raise RuntimeError(f"{name}: output_size must be {nd}")
    out = tuple(x.shape[-nd + i] if v is None else int(v) for i, v in enumerate(sizes))
    if any(v < 0 for v in out):
        if name.startswith("adaptive_avg"):
            got = f"{out[0]}, {out[1]}" + (f",{out[2]}" if nd == 3 else "")  # (torch's spacing, per rank)
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                               f"{{{got}}}")
        shape = list(x.shape[:-nd]) + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {shape}")
    return out


def _adaptive_input(input: Tensor, nd: int, name: str):
    if input.dim() not in (nd + 1, nd + 2):
        sep = ":" if name.startswith("adaptive_max") else ""
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep} {_shape_str(input)}")
    if nd > 1:
        for d in range(1 if input.dim() == nd + 2 else 0, input.dim()):
            if input.shape[d] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                                   f"input has sizes {_shape_str(input)} with dimension {d} being empty")


def _avg_matrix(n: int, out: int) -> _R.Mat:
    start, end = _P.adaptive_bounds(n, out)
    m = np.zeros((out, n))
    for i in range(out):  # over output cells of one axis (not pixels)
        m[i, start[i]:end[i]] = 1.0 / (end[i] - start[i])
    return _R.Mat(m)


def _adaptive_avg(input: Tensor, output_size, nd: int) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    _adaptive_input(input, nd, name)
    out = _adaptive_size(input, output_size, nd, name)
    if all(o == 1 for o in out):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)  # torch's shortcut (its node is MeanBackward1)
    maps = tuple(_avg_matrix(n, o) for n, o in zip(input.shape[-nd:], out))
    return _R.axis_map(f"AdaptiveAvgPool{nd}D", input, maps)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows of (N, C, L) input."""
    _adaptive_input(input, 1, "adaptive_avg_pool1d")
    (o,) = _adaptive_size(input, output_size, 1, "adaptive_avg_pool1d")
    return _adaptive_avg(input.unsqueeze(-2), (1, o), 2).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows so the output is ``output_size`` (None keeps that input size)."""
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows of (N, C, D, H, W) input (None keeps that input size)."""
    return _adaptive_avg(input, output_size, 3)


def _adaptive_max_fns(nd: int):
    """adaptive_max_pool{nd}d and its _with_indices form."""
    name = f"adaptive_max_pool{nd}d"

    def with_indices(input: Tensor, output_size, return_indices=False):
        _adaptive_input(input, nd, name)
        size = _adaptive_size(input, output_size, nd, name)
        if nd == 1:
            y, idx = _P.adaptive_max_pool(input.unsqueeze(-2), (1,) + size)
            return y.squeeze(-2), idx.squeeze(-2)
        return _P.adaptive_max_pool(input, size)

    def pool(input: Tensor, output_size, return_indices=False):
        y, idx = with_indices(input, output_size)
        return (y, idx) if return_indices else y

    pool.__doc__ = f"Max over adaptive windows of {nd}-d planes (and flat arg-max indices with return_indices)."
    return _named_pair(name, pool, with_indices)


adaptive_max_pool1d, adaptive_max_pool1d_with_indices = _adaptive_max_fns(1)
adaptive_max_pool2d, adaptive_max_pool2d_with_indices = _adaptive_max_fns(2)
adaptive_max_pool3d, adaptive_max_pool3d_with_indices = _adaptive_max_fns(3)


# ------------------------------------------------------------------ padding
_PAD_NAMES = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "CircularPad"}


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    return j % n


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad)//2 dims: pad = (left_last, right_last, left_2nd_last, ...)."""
    if isinstance(value, complex):  # (torch's signature: a float, also for complex inputs)
        raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.dim()
    if len(pad) // 2 > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {nd}")
    if mode == "constant":
        return _R.constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in _PAD_NAMES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise AssertionError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode != "circular" and 0 in input.shape[nd - k - 1:]:  # only a batch dim may be empty
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_shape_str(input)}")
    maps = []
    for i in range(k):  # axis nd-k+i is padded by pad[2*(k-1-i)], pad[2*(k-1-i)+1]
        ax = nd - k + i
        lo, hi = pad[2 * (k - 1 - i)], pad[2 * (k - 1 - i) + 1]
        n = input.shape[ax]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {ax} of input {_shape_str(input)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        maps.append(_R.Take(_pad_index(n, lo, hi, mode), n) if lo or hi else None)
    name = _PAD_NAMES[mode] + ("" if mode == "circular" else f"{k}D")
    return _R.axis_map(name, input, tuple(maps))


# ------------------------------------------------------------------ interpolation
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_CUBIC_A = -0.75  # torch's bicubic (Keys' cubic convolution with A = -0.75); antialiasing uses PIL's -0.5


def _scale(n: int, out: int, scale: float | None, align_corners: bool, dtype) -> np.floating:
    """Source cells per output cell, in the input's float type (torch's area_pixel_compute_scale)."""
    if align_corners:
        return dtype((n - 1) / (out - 1)) if out > 1 else dtype(0)
    return dtype(1.0 / scale) if scale is not None and scale > 0 else dtype(n) / dtype(out)


def _nearest_map(n: int, out: int, scale: float | None, exact: bool = False) -> _R.Take:
    s = np.float32(n / out) if scale is None or scale <= 0 else np.float32(1.0 / scale)
    dst = np.arange(out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    idx = np.minimum(np.floor(dst * s).astype(np.int64), n - 1)
    return _R.Take(idx, n)


def _linear_map(n: int, out: int, scale: float | None, align_corners: bool) -> _R.Mat:
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        s = n / out if scale is None else 1.0 / scale
        src = np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = src - i0
    m = np.zeros((out, n))
    np.add.at(m, (np.arange(out), i0), 1.0 - lam)
    np.add.at(m, (np.arange(out), i1), lam)
    return _R.Mat(m)


def _near(x, a):
    """Keys' cubic-convolution kernel for |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _far(x, a):
    """Keys' cubic-convolution kernel for 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_weights(t, a: float = _CUBIC_A):
    """The weights of the four taps at offsets -1, 0, 1, 2 for fractions ``t`` (arrays or tensors)."""
    return _far(t + 1, a), _near(t, a), _near(1 - t, a), _far(2 - t, a)


def cubic_weight_slopes(t, a: float = _CUBIC_A):
    """d/dt of ``cubic_weights``."""
    def near(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    return far(t + 1), near(t), -near(1 - t), -far(2 - t)


def _cubic_map(n: int, out: int, scale: float | None, align_corners: bool, dtype) -> _R.Mat:
    s = _scale(n, out, scale, align_corners, dtype)
    dst = np.arange(out).astype(dtype)
    src = s * dst if align_corners else s * (dst + dtype(0.5)) - dtype(0.5)  # (not clamped at 0 for cubic)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    t = np.clip(src - i0, 0, 1).astype(np.float64)
    m = np.zeros((out, n))
    for j, w in enumerate(cubic_weights(t)):
        np.add.at(m, (np.arange(out), np.clip(i0 - 1 + j, 0, n - 1)), w)
    return _R.Mat(m)


def _aa_filter(mode: str):
    """(taps of the unscaled filter, the filter) of antialiased resampling."""
    if mode == "bilinear":
        return 2, lambda x: np.maximum(0.0, 1.0 - np.abs(x))

    def cubic(x):  # PIL's cubic (a = -0.5), zero from 2 on
        x = np.abs(x)
        return np.where(x < 1, _near(x, -0.5), np.where(x < 2, _far(x, -0.5), 0.0))
    return 4, cubic


def _aa_map(n: int, out: int, scale: float | None, align_corners: bool, mode: str, dtype) -> _R.Mat:
    """Antialiased resampling (torch's separable filter: support widened by the scale when downsampling, weights
    normalised per output cell)."""
    size, filt = _aa_filter(mode)
    s = float(_scale(n, out, scale, align_corners, dtype))
    support = size * 0.5 * s if s >= 1.0 else size * 0.5
    inv = 1.0 / s if s >= 1.0 else 1.0
    m = np.zeros((out, n))
    for i in range(out):  # over output cells of one axis (not pixels)
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n)
        w = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0 else w
    return _R.Mat(m)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims by ``size`` or ``scale_factor``: modes nearest, nearest-exact, (bi/tri)linear,
    bicubic, area; antialias for bilinear/bicubic."""
    nd = input.dim() - 2
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    if size is not None:
        out = list(size) if isinstance(size, (tuple, list)) else [size] * nd
        if isinstance(size, (tuple, list)) and len(out) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {in_sizes} and output size of {size}. Please provide input "
                             f"tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if not all(isinstance(v, (int, np.integer)) for v in out):
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                            f"but got size with types {[type(v) for v in out]}")
        scales = [None] * nd
    elif scale_factor is not None:
        sf = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * nd
        if isinstance(scale_factor, (tuple, list)) and len(sf) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {in_sizes} and scale_factor of shape {scale_factor}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             f"(s1, s2, ...,sK) format.")
        out = None
        scales = [float(f) for f in sf]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if out is None:
        out = [int(n * f) for n, f in zip(in_sizes, scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * nd
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode in _LINEAR and _LINEAR[mode] != nd and nd in (1, 2, 3):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR[mode] + 2}D input")
    if mode not in _MODES or nd not in (1, 2, 3) or mode == "bicubic" and nd != 2:
        if mode == "lanczos" and nd == 2:
            raise NotImplementedError("ember: interpolate mode 'lanczos' is not supported")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, tuple(out))
    for i, o in enumerate(out):
        if o <= 0 or in_sizes[i] <= 0:
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ("
                               f"{', '.join(f'{k}: {v}' for k, v in zip('DHW'[-nd:], in_sizes))}) and output ("
                               f"{', '.join(f'{k}: {v}' for k, v in zip('DHW'[-nd:], out))})")
    dtype = input._data.dtype.type if input._data.dtype.kind == "f" else np.float32
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        maps = tuple(_nearest_map(n, o, sc, exact) for n, o, sc in zip(in_sizes, out, scales))
        return _R.axis_map(f"UpsampleNearest{'Exact' if exact else ''}{nd}D", input, maps)
    if antialias:
        maps = tuple(_aa_map(n, o, sc, align_corners, mode, dtype) for n, o, sc in zip(in_sizes, out, scales))
        return _R.axis_map(f"Upsample{mode.capitalize()}2DAa", input, maps)
    if mode == "bicubic":
        maps = tuple(_cubic_map(n, o, sc, align_corners, dtype) for n, o, sc in zip(in_sizes, out, scales))
        return _R.axis_map("UpsampleBicubic2D", input, maps)
    maps = tuple(_linear_map(n, o, sc, align_corners) for n, o, sc in zip(in_sizes, out, scales))
    return _R.axis_map(("UpsampleLinear1D", "UpsampleBilinear2D", "UpsampleTrilinear3D")[nd - 1], input, maps)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None) -> Tensor:
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ power-average pooling, max unpooling
from .. import _dtype as _D  # noqa: E402


def _lp_pool(input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool, nd: int) -> Tensor:
    if norm_type == math.inf:
        return _max_pool(input.abs(), nd, kernel_size, stride, 0, 1, ceil_mode, f"max_pool{nd}d")[0]
    if norm_type == -math.inf:
        return -_max_pool(-input.abs(), nd, kernel_size, stride, 0, 1, ceil_mode, f"max_pool{nd}d")[0]
    out = _avg_pool(input.pow(norm_type), nd, kernel_size, stride, 0, ceil_mode, True, None, f"avg_pool{nd}d")
    # sign * relu(abs): the value itself, with gradient zero where the window's power sum is zero (as torch)
    return (out.sign() * out.abs().relu()).mul(math.prod(_tuple(kernel_size, nd))).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over sliding windows of (N, C, L) input) ** (1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over sliding windows of (N, C, H, W) input) ** (1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over sliding windows of (N, C, D, H, W) input) ** (1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _unpool_size(input: Tensor, k: tuple, s: tuple, p: tuple, output_size) -> tuple:
    nd = len(k)
    default = [(input.shape[-nd + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)
        if len(size) == nd + 2:
            size = size[2:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(size)}'")
        for d in range(nd):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    for d in range(nd):
        if size[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={size[d]}")
    return tuple(int(v) for v in size)


def _max_unpool(input: Tensor, indices: Tensor, size: tuple) -> Tensor:
    """Scatter ``input`` into zero planes of ``size`` at the flat positions ``indices`` (max_pool's), as torch's
    max_unpool2d/3d with its checks."""
    nd = len(size)
    if nd == 3 and input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if nd == 2 and input.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if indices.dtype != _D.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {_title(indices.dtype)}" if nd == 2 else ""))
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for d in range(1 if input.dim() == nd + 2 else 0, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {list(input.shape)} with dimension {d} being empty.")
    idx = _all_examples(indices)  # (under vmap: every example's indices)
    bad = (idx < 0) | (idx >= math.prod(size))
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(idx[bad].flat[0])} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    return _P.max_unpool(input, indices, size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of max_pool1d: each value back at its arg-max position, zeros elsewhere."""
    k = _tuple(kernel_size, 1)
    s = k if stride is None else _tuple(stride, 1)
    size = _unpool_size(input, k, s, _tuple(padding, 1), output_size)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + (1,)).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of max_pool2d: each value back at its arg-max position, zeros elsewhere."""
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    return _max_unpool(input, indices, _unpool_size(input, k, s, _tuple(padding, 2), output_size))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of max_pool3d: each value back at its arg-max position, zeros elsewhere."""
    k = _tuple(kernel_size, 3)
    s = k if stride is None else _tuple(stride, 3)
    return _max_unpool(input, indices, _unpool_size(input, k, s, _tuple(padding, 3), output_size))


# ------------------------------------------------------------------ fractional max pooling
def _fractional(input: Tensor, nd: int, kernel_size, output_size, output_ratio, _random_samples) -> tuple:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2:  # (torch's 2-d form takes len() of the ratio, so a plain number raises there)
            if not isinstance(output_ratio, (tuple, list)):
                raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
            if len(output_ratio) > 2:
                raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) * (nd if len(output_ratio) == 1 else 1) if isinstance(
            output_ratio, (tuple, list)) else (output_ratio,) * nd
        output_size = [int(input.shape[-nd + i] * ratio[i]) for i in range(nd)]
    k, out = _tuple(kernel_size, nd, "kernel_size"), _tuple(output_size, nd, "output_size")
    samples = _random_samples
    if samples is None:
        if input.dim() < nd + 1:  # (torch reads the channel count off dim -(nd+1) first)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {-nd - 1})")
        samples = _F.rand(1 if input.dim() == nd + 1 else input.shape[0], input.shape[-nd - 1], nd,
                               dtype=input.dtype)
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {_shape_str(input)}")
    batched = input.dim() == nd + 2
    for d in range(1 if batched else 0, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{_shape_str(input)} with dimension {d} being empty.")
    names = ("time", "height", "width")[-nd:]
    for i in range(nd):
        n = input.shape[-nd + i]
        # (torch's 3-d check is strict where its 2-d one is not)
        if out[i] + k[i] - 1 > n or (nd == 3 and out[i] + k[i] - 1 == n):
            raise RuntimeError(f"{where}: pool {names[i]} {k[i]} too large relative to input {names[i]} {n}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    n_batch, planes = (input.shape[0] if batched else 1), input.shape[-nd - 1]
    if samples.shape[0] < n_batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    if samples.shape[0] > n_batch:
        samples = samples[:n_batch]
    return _P.fractional_max_pool(input, k, out, samples)


def _fractional_fns(nd: int):
    """fractional_max_pool{nd}d and its _with_indices form."""
    name = f"fractional_max_pool{nd}d"

    def with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                     _random_samples=None):
        return _fractional(input, nd, kernel_size, output_size, output_ratio, _random_samples)

    def pool(input: Tensor, kernel_size, output_size=None, output_ratio=None, return_indices=False,
             _random_samples=None):
        y, idx = _fractional(input, nd, kernel_size, output_size, output_ratio, _random_samples)
        return (y, idx) if return_indices else y

    pool.__doc__ = (f"Max over pseudo-random windows of {nd}-d planes whose starts step by a fractional stride "
                    f"(Graham's fractional max pooling); ``_random_samples`` (N, C, {nd}) in [0, 1) fixes them.")
    return _named_pair(name, pool, with_indices)


fractional_max_pool2d, fractional_max_pool2d_with_indices = _fractional_fns(2)
fractional_max_pool3d, fractional_max_pool3d_with_indices = _fractional_fns(3)

__all__ += ["lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d_with_indices", "conv_tbc"]


# ---------------------------------------------------------------- time-batch-channel convolution (fairseq's ConvTBC)
_pad = pad  # conv_tbc's argument is named pad


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over (time, batch, channels) input: weight (kernel width, in channels, out channels), bias
    (out channels,), ``pad`` steps of zeros at both ends of time (negative: that many cut off)."""
    for i, (arg, v) in enumerate((("input", input), ("weight", weight), ("bias", bias)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"conv_tbc(): argument '{arg}' (position {i}) must be Tensor, not {type(v).__name__}")
    if isinstance(pad, bool) or not isinstance(pad, (int, np.integer)):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not {type(pad).__name__}")
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_title(input.dtype)} and "
                           f"{_title(weight.dtype)}")
    t, b, _ = input.shape
    k, c_in, c_out = weight.shape
    pad = int(pad)
    t_out = t + 2 * pad - k + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: [{t_out}, {b}, {c_out}]")
    x = _pad(input, (0, 0, 0, 0, pad, pad)) if pad > 0 else input[-pad:t + pad] if pad < 0 else input
    # every kernel tap's window side by side: (t_out, b, k * c_in), one matmul with the flattened weight
    windows = (_stack([x[j:j + t_out] for j in range(k)], 2).reshape(t_out, b, k * c_in) if k else
               x.new_zeros(t_out, b, 0))
    return windows @ weight.reshape(k * c_in, c_out) + bias


_args.install(globals(), ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                          "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "conv_tbc"))
