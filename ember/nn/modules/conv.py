"""Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch's arguments, defaults, init and printed form) and their lazy
forms."""
from __future__ import annotations

import inspect

from ..._tensor import Tensor
from .. import functional as F
from ..parameter import UninitializedParameter
from ..._device import _check_device
from ._family import _per_rank
from ._weights import _kaiming_reset, _weight_and_bias
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _expand

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Shared state of the convolution layers: geometry, weight (and bias) with torch's default init."""

    _nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", output_padding=0, device=None,
                 dtype=None) -> None:
        _check_device(device)
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in _expand(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'replicate', 'reflect', 'zeros', 'circular'}}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _expand(kernel_size, nd)
        self.stride = _expand(stride, nd)
        self.padding = padding if isinstance(padding, str) else _expand(padding, nd)
        self.dilation = _expand(dilation, nd)
        self.output_padding = _expand(output_padding, nd)
        self.groups, self.padding_mode = groups, padding_mode
        if isinstance(self.padding, str):
            rev = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                rev += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        _weight_and_bias(self, shape, out_channels, bias, device, dtype)

    def reset_parameters(self) -> None:
        _kaiming_reset(self.weight, self.bias, empty_fan_bias=False)

    def extra_repr(self) -> str:
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        fn = self._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


Conv1d, Conv2d, Conv3d = _per_rank(_Conv, "Conv{d}d", "{d}-d convolution over (N, C_in, {dims}) input.",
                                   (F.conv1d, F.conv2d, F.conv3d))


class _ConvTranspose(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        nd = self._nd
        size = list(output_size)[-nd:]
        opad = []
        for i in range(nd):
            n = input.shape[input.dim() - nd + i]
            least = (n - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            if not least <= size[i] < least + self.stride[i]:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from {least} to "
                                 f"{least + self.stride[i] - 1} (for an input of {list(input.shape[2:])})")
            opad.append(size[i] - least)
        return tuple(opad)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        return self._fn(input, self.weight, self.bias, self.stride, self.padding,
                        self._output_padding(input, output_size), self.groups, self.dilation)


ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = _per_rank(
    _ConvTranspose, "ConvTranspose{d}d", "{d}-d transposed convolution over (N, C_in, {dims}) input.",
    (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d))


class _LazyConvMixin(LazyModuleMixin):
    """in_channels inferred from the first input (torch's _LazyConvXdMixin)."""

    def __init__(self, out_channels: int, kernel_size, **kwargs) -> None:
        # made without a bias and with 0 channels, then given uninitialized parameters, as torch
        bias, dtype = kwargs.pop("bias"), kwargs["dtype"]
        super().__init__(0, 0, kernel_size, bias=False, **kwargs)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + self.kernel_size)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == nd + 2 else input.shape[0]


def _lazy(base: type, doc: str) -> type:
    """The lazy form of the convolution layer ``base`` (becomes a ``base`` after its first forward)."""
    params = list(inspect.signature(base.__init__).parameters.values())
    sig = inspect.Signature([params[0]] + params[2:])  # the layer's own arguments without in_channels

    def __init__(self, *args, **kwargs) -> None:
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        kw = dict(bound.arguments)
        del kw["self"]
        _LazyConvMixin.__init__(self, kw.pop("out_channels"), kw.pop("kernel_size"), **kw)

    __init__.__signature__ = sig
    return type("Lazy" + base.__name__, (_LazyConvMixin, base), {"cls_to_become": base, "__init__": __init__,
                                                                  "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy(Conv1d, "A Conv1d whose in_channels is inferred from the first input.")
LazyConv2d = _lazy(Conv2d, "A Conv2d whose in_channels is inferred from the first input.")
LazyConv3d = _lazy(Conv3d, "A Conv3d whose in_channels is inferred from the first input.")
LazyConvTranspose1d = _lazy(ConvTranspose1d, "A ConvTranspose1d whose in_channels is inferred from the first input.")
LazyConvTranspose2d = _lazy(ConvTranspose2d, "A ConvTranspose2d whose in_channels is inferred from the first input.")
LazyConvTranspose3d = _lazy(ConvTranspose3d, "A ConvTranspose3d whose in_channels is inferred from the first input.")
