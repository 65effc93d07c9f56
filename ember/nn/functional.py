"""ember.nn.functional: stateless forms of the layers."""
from __future__ import annotations

from .._tensor import Tensor

__all__ = ["linear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    if input.shape[-1] != weight.shape[-1]:
        a = "x".join(map(str, (input.numel() // max(input.shape[-1], 1), input.shape[-1]))) if input.dim() else ""
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a} and {weight.shape[-1]}x{weight.shape[0]})")
    out = input @ weight.t()
    return out if bias is None else out + bias
from ._functional_conv import *  # noqa: E402,F401,F403 - convolution, pooling, padding, interpolation
