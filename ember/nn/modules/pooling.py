"""Max, average, adaptive, power-average and fractional pooling layers and max unpooling (1-d, 2-d and 3-d)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ._family import _per_rank
from .module import Module
from .utils import _expand

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    """Max pooling; each rank's class sets ``_fn``, its functional form (NOTE [layer families])."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


MaxPool1d, MaxPool2d, MaxPool3d = _per_rank(
    _MaxPoolNd, "MaxPool{d}d", "Max over sliding windows of (N, C, {dims}) input.",
    (F.max_pool1d, F.max_pool2d, F.max_pool3d))


class AvgPool1d(Module):
    """Mean over sliding windows of (N, C, L) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _expand(kernel_size, 1)
        self.stride = _expand(stride if stride is not None else kernel_size, 1)
        self.padding = _expand(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """Average pooling with divisor_override (2-d and 3-d); each rank's class sets ``_fn``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


AvgPool2d, AvgPool3d = _per_rank(
    _AvgPoolNd, "AvgPool{d}d", "Mean over sliding windows of (N, C, {dims}) input.", (F.avg_pool2d, F.avg_pool3d),
    ranks=(2, 3))


class _AdaptivePool(Module):
    """Adaptive pooling to ``output_size``; each rank's class sets ``_fn``."""

    _with_indices = False

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        if self._with_indices:
            self.return_indices = return_indices

    def forward(self, input: Tensor):
        if self._with_indices:
            return type(self)._fn(input, self.output_size, self.return_indices)
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveAvgPool(_AdaptivePool):
    def __init__(self, output_size) -> None:  # (no return_indices, as torch's)
        super().__init__(output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    _with_indices = True


AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = _per_rank(
    _AdaptiveAvgPool, "AdaptiveAvgPool{d}d", "Mean over adaptive windows of (N, C, {dims}) input.",
    (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d))
AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = _per_rank(
    _AdaptiveMaxPool, "AdaptiveMaxPool{d}d", "Max over adaptive windows of (N, C, {dims}) input.",
    (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d))


class _LPPoolNd(Module):
    """Power-average pooling; each rank's class sets ``_fn``."""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


LPPool1d, LPPool2d, LPPool3d = _per_rank(
    _LPPoolNd, "LPPool{d}d",
    "Power-average pooling: (sum of x**p over each window) ** (1/p) of (N, C, {dims}) input.",
    (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d))


class _MaxUnpoolNd(Module):
    """Max unpooling; each rank's class sets ``_fn`` and ``_nd``, its rank."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        def tup(v):
            return tuple(v) * (self._nd if len(v) == 1 else 1) if isinstance(v, (tuple, list)) else (v,) * self._nd

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


MaxUnpool1d, MaxUnpool2d, MaxUnpool3d = _per_rank(
    _MaxUnpoolNd, "MaxUnpool{d}d",
    "Partial inverse of MaxPool{d}d: values back at their arg-max positions, zeros elsewhere.",
    (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d))


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling; each rank's class sets ``_fn`` and ``_nd``, its rank."""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = _expand(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _expand(output_size, nd) if output_size is not None else None
        self.output_ratio = _expand(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:nd]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


FractionalMaxPool2d, FractionalMaxPool3d = _per_rank(
    _FractionalMaxPoolNd, "FractionalMaxPool{d}d",
    "Fractional max pooling of (N, C, {dims}) input (Graham's pseudo-random fractional strides).",
    (F.fractional_max_pool2d, F.fractional_max_pool3d), ranks=(2, 3))
