"""Max, average and adaptive pooling layers (1-d and 2-d)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d"]


class _MaxPoolNd(Module):
    _fn = None

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


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L) input."""

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W) input."""

    _fn = staticmethod(F.max_pool2d)


class AvgPool1d(Module):
    """Mean over sliding windows of (N, C, L) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        def one(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,)

        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Mean over sliding windows of (N, C, H, W) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePool(Module):
    _fn = None
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


class AdaptiveAvgPool1d(_AdaptivePool):
    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveMaxPool1d(_AdaptivePool):
    _fn = staticmethod(F.adaptive_max_pool1d)
    _with_indices = True


class AdaptiveMaxPool2d(_AdaptivePool):
    _fn = staticmethod(F.adaptive_max_pool2d)
    _with_indices = True


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling: (sum of x**p over each window) ** (1/p) of (N, C, L) input."""

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling: (sum of x**p over each window) ** (1/p) of (N, C, H, W) input."""

    _fn = staticmethod(F.lp_pool2d)


class _MaxUnpoolNd(Module):
    _fn = None
    _nd = 0

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


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: values back at their arg-max positions, zeros elsewhere."""

    _fn = staticmethod(F.max_unpool1d)
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d: values back at their arg-max positions, zeros elsewhere."""

    _fn = staticmethod(F.max_unpool2d)
    _nd = 2
