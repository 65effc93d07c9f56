"""pixel_shuffle / pixel_unshuffle: depth-to-space rearrangements, each the other's gradient."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor
from .. import _args
from .._args import tensor_arg as _tensor_arg
from ._op import Op

__all__ = ["pixel_shuffle", "pixel_unshuffle"]


def _shuffle(x: np.ndarray, r: int) -> np.ndarray:
    *b, c, h, w = x.shape
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    n = len(b)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return _B.ascontiguousarray(y).reshape(*b, c // (r * r), h * r, w * r)


def _unshuffle(x: np.ndarray, r: int) -> np.ndarray:
    *b, c, h, w = x.shape
    y = x.reshape(*b, c, h // r, r, w // r, r)
    n = len(b)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return _B.ascontiguousarray(y).reshape(*b, c * r * r, h // r, w // r)


class PixelShuffle(Op):
    """d pixel_shuffle(x, r) = pixel_unshuffle(grad, r)"""

    __slots__ = ()
    attrs = ("r",)

    @staticmethod
    def forward(ctx, self, r):
        return _shuffle(self, r)

    def backward(ctx, grad):
        return PixelUnshuffle.apply(grad, ctx.r)


class PixelUnshuffle(Op):
    """d pixel_unshuffle(x, r) = pixel_shuffle(grad, r)"""

    __slots__ = ()
    attrs = ("r",)

    @staticmethod
    def forward(ctx, self, r):
        return _unshuffle(self, r)

    def backward(ctx, grad):
        return PixelShuffle.apply(grad, ctx.r)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    c, r = input.shape[-3], upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return PixelShuffle.apply(input, r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    h, w, r = input.shape[-2], input.shape[-1], downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {r}")
    return PixelUnshuffle.apply(input, r)


_args.install(globals(), __all__)


# ---------------------------------------------------------------- channel shuffle
__all__ += ["channel_shuffle", "native_channel_shuffle"]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups: (N, g*k, ...) -> channel c*g + i from group i."""
    _tensor_arg("channel_shuffle", input)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


_args.install(globals(), ("channel_shuffle", "native_channel_shuffle"))
