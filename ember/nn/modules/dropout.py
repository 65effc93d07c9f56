"""Dropout layers (active in training mode only)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout2d", "AlphaDropout", "Dropout1d", "Dropout3d", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability p, scale the rest by 1 / (1 - p)."""


class Dropout2d(_DropoutNd):
    """Zero whole channels with probability p, scale the rest by 1 / (1 - p)."""

    _fn = staticmethod(F.dropout2d)


class AlphaDropout(_DropoutNd):
    """Dropout keeping zero mean and unit variance (for SELU networks)."""

    _fn = staticmethod(F.alpha_dropout)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input with probability p, scale the rest by 1 / (1 - p)."""

    _fn = staticmethod(F.dropout1d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""

    _fn = staticmethod(F.dropout3d)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels (one draw per sample and channel)."""

    _fn = staticmethod(F.feature_alpha_dropout)
