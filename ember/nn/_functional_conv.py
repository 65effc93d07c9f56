"""Functional convolution, pooling, padding, interpolation and pixel shuffling (torch.nn.functional's forms).

Argument checking and torch's error messages live here; the differentiable work is in ember/ops/conv.py,
pooling.py, resample.py and pixel_shuffle.py.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _args
from .._tensor import Tensor
from ..ops import conv as _C, pooling as _P, resample as _R
from ..ops.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from ..ops._inplace import _title

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold", "max_pool1d",
           "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "pad", "interpolate",
           "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle"]


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
    if weight.dim() != nd + 2:
        raise RuntimeError("weight should have at least three dimensions" if nd == 1 and weight.dim() < 3 else
                           f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight {_shape_str(weight)}, "
                           f"but got {weight.dim()}-dimensional input of size {_shape_str(input)} instead")
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
    stride, padding = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    dilation, opad = _tuple(dilation, nd, "dilation"), _tuple(output_padding, nd, "output_padding")
    for i in range(nd):
        if opad[i] >= stride[i] and opad[i] >= dilation[i]:
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_{'hw'[i] if nd == 2 else 'w'}: {opad[i]}, "
                               f"stride_{'hw'[i] if nd == 2 else 'w'}: {stride[i]}, "
                               f"dilation_{'hw'[i] if nd == 2 else 'w'}: {dilation[i]}")
    y = _C.convolution(x, weight, bias, stride, padding, dilation, True, opad, groups)
    return y if batched else y.squeeze(0)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-d transposed convolution; weight (C_in, C_out/groups, k)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-d transposed convolution; weight (C_in, C_out/groups, kh, kw)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


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
def _pool_input(input: Tensor, nd: int, name: str) -> Tensor:
    """The input as 2-d planes (batched or not); 1-d pools run on a height of one."""
    if name == "avg_pool1d" and input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
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


def _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(kernel_size, nd, "kernel_size")
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0)
    s = k if no_stride else _tuple(stride, nd, "stride")
    p, d = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")
    for i in range(nd):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    if nd == 1:
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    out = [_P.pool_out_len(x.shape[-2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2)]
    if out[0] < 1 or out[1] < 1:
        c, h, w = x.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
                           f"Output size is too small")
    return k, s, p, d


def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    x = _pool_input(input, nd, name)
    k, s, p, d = _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode)
    y, idx = _P.max_pool2d_with_indices(x, k, s, p, d, ceil_mode)
    return _pool_back(y, nd), _pool_back(idx, nd)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, "max_pool1d")


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding windows of (N, C, L) input (and the arg-max indices with return_indices)."""
    y, idx = _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, "max_pool1d")
    return (y, idx) if return_indices else y


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding windows of (N, C, H, W) input (and flat arg-max indices with return_indices)."""
    y, idx = _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    return (y, idx) if return_indices else y


def _avg_pool(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, name):
    x = _pool_input(input, nd, name)
    k, s, p, _ = _pool_geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_back(_P.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override), nd)


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


def _adaptive_size(x: Tensor, output_size, nd: int) -> tuple:
    sizes = _tuple(output_size, nd, "output_size") if not isinstance(output_size, (tuple, list)) else output_size
    if len(sizes) != nd:
        raise ValueError(f"adaptive pool output_size should be an int or a tuple of {nd} ints")
    return tuple(x.shape[-nd + i] if v is None else int(v) for i, v in enumerate(sizes))


def _adaptive_input(input: Tensor, nd: int, name: str):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {_shape_str(input)}")


def _avg_matrix(n: int, out: int) -> _R.Mat:
    start, end = _P.adaptive_bounds(n, out)
    m = np.zeros((out, n))
    for i in range(out):  # over output cells of one axis (not pixels)
        m[i, start[i]:end[i]] = 1.0 / (end[i] - start[i])
    return _R.Mat(m)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows so the output is ``output_size`` (None keeps that input size)."""
    _adaptive_input(input, 2, "adaptive_avg_pool2d")
    oh, ow = _adaptive_size(input, output_size, 2)
    h, w = input.shape[-2:]
    if oh == ow == 1:
        return input.mean((-2, -1), keepdim=True)  # torch's shortcut (its node is MeanBackward1)
    return _R.axis_map("AdaptiveAvgPool2D", input, (_avg_matrix(h, oh), _avg_matrix(w, ow)))


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows of (N, C, L) input."""
    _adaptive_input(input, 1, "adaptive_avg_pool1d")
    (o,) = _adaptive_size(input, output_size, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices=False):
    _adaptive_input(input, 2, "adaptive_max_pool2d")
    size = _adaptive_size(input, output_size, 2)
    return _P.adaptive_max_pool2d(input, size)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices=False):
    """Max over adaptive windows (and flat arg-max indices with return_indices)."""
    y, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (y, idx) if return_indices else y


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices=False):
    _adaptive_input(input, 1, "adaptive_max_pool1d")
    (o,) = _adaptive_size(input, output_size, 1)
    y, idx = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, o))
    return y.squeeze(-2), idx.squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices=False):
    y, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (y, idx) if return_indices else y


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
        if mode == "replicate" and n == 0 and (lo or hi):
            raise RuntimeError(f"Expected input's padded dimensions to be non-empty, got {_shape_str(input)}")
        maps.append(_R.Take(_pad_index(n, lo, hi, mode), n) if lo or hi else None)
    name = _PAD_NAMES[mode] + ("" if mode == "circular" else f"{k}D")
    return _R.axis_map(name, input, tuple(maps))


# ------------------------------------------------------------------ interpolation
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _nearest_map(n: int, out: int, scale: float | None) -> _R.Take:
    s = np.float32(n / out) if scale is None else np.float32(1.0 / scale)
    idx = np.minimum(np.floor(np.arange(out, dtype=np.float32) * s).astype(np.int64), n - 1)
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


def _antialias_map(n: int, out: int, scale: float | None, align_corners: bool) -> _R.Mat:
    """torch's antialiased bilinear weights (a triangle filter widened by the downscaling factor, normalised;
    ATen's _compute_index_ranges_weights)."""
    if align_corners:
        s = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        s = n / out if scale is None else 1.0 / scale
    support = s if s >= 1.0 else 1.0
    invscale = 1.0 / s if s >= 1.0 else 1.0
    m = np.zeros((out, n))
    for i in range(out):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n)
        j = np.arange(lo, hi)
        w = np.maximum(0.0, 1.0 - np.abs((j - center + 0.5) * invscale))
        if w.sum():
            m[i, lo:hi] = w / w.sum()
    return _R.Mat(m)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims by ``size`` or ``scale_factor`` (modes nearest, linear, bilinear; ``antialias``:
    bilinear with torch's filter when downscaling)."""
    nd = input.dim() - 2
    if antialias and (mode not in ("bilinear", "bicubic") or input.dim() != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR[mode] + 2}D input")
    if mode not in ("nearest", "linear", "bilinear"):
        raise NotImplementedError(f"ember: interpolate mode {mode!r} is not supported yet")
    if nd not in (1, 2):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    in_sizes = input.shape[2:]
    if size is not None:
        out = list(size) if isinstance(size, (tuple, list)) else [size] * nd
        if len(out) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {list(out)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
        scales = [None] * nd
    else:
        sf = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * nd
        if len(sf) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and scale_factor of shape {sf}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             f"(s1, s2, ...,sK) format.")
        out = [int(math.floor(float(n) * float(f))) for n, f in zip(in_sizes, sf)]
        scales = [None] * nd if recompute_scale_factor else [float(f) for f in sf]
    if mode == "nearest":
        maps = tuple(_nearest_map(n, o, sc) for n, o, sc in zip(in_sizes, out, scales))
        return _R.axis_map(f"UpsampleNearest{nd}D", input, maps)
    if antialias:
        maps = tuple(_antialias_map(n, o, sc, align_corners) for n, o, sc in zip(in_sizes, out, scales))
        return _R.axis_map("UpsampleBilinear2DAa", input, maps)
    maps = tuple(_linear_map(n, o, sc, align_corners) for n, o, sc in zip(in_sizes, out, scales))
    return _R.axis_map("UpsampleLinear1D" if nd == 1 else "UpsampleBilinear2D", input, maps)


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


def _max_unpool2d(input: Tensor, indices: Tensor, size: tuple) -> Tensor:
    """Scatter ``input`` into zero planes of ``size`` at the flat positions ``indices`` (max_pool's)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if indices.dtype != _D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_title(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for d in range(1 if input.dim() == 4 else 0, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {list(input.shape)} with dimension {d} being empty.")
    plane = size[0] * size[1]
    idx = indices._data
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(idx[bad].flat[0])} (output volumes are of size "
                           f"{size[0]}x{size[1]})")
    lead = tuple(input.shape[:-2])
    out = input.new_zeros(lead + (plane,)).scatter(-1, indices.flatten(-2), input.flatten(-2))
    return out.reshape(lead + size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of max_pool1d: each value back at its arg-max position, zeros elsewhere."""
    k = _tuple(kernel_size, 1)
    s = k if stride is None else _tuple(stride, 1)
    size = _unpool_size(input, k, s, _tuple(padding, 1), output_size)
    return _max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size + (1,)).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of max_pool2d: each value back at its arg-max position, zeros elsewhere."""
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    return _max_unpool2d(input, indices, _unpool_size(input, k, s, _tuple(padding, 2), output_size))


__all__ += ["lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d"]


_args.install(globals(), ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "avg_pool1d", "avg_pool2d",
                          "adaptive_avg_pool1d"))
