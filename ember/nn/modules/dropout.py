"""Dropout layers (active in training mode only)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ._family import _member, _per_rank
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


Dropout = _member(_DropoutNd, "Dropout", "Zero elements with probability p, scale the rest by 1 / (1 - p).",
                  F.dropout)
Dropout1d, Dropout2d, Dropout3d = _per_rank(
    _DropoutNd, "Dropout{d}d", "Zero whole channels of (N, C, {dims}) or (C, {dims}) input with probability p, scale "
    "the rest by 1 / (1 - p).", (F.dropout1d, F.dropout2d, F.dropout3d))
AlphaDropout = _member(_DropoutNd, "AlphaDropout", "Dropout keeping zero mean and unit variance (for SELU networks).",
                       F.alpha_dropout)
FeatureAlphaDropout = _member(_DropoutNd, "FeatureAlphaDropout",
                              "AlphaDropout of whole channels (one draw per sample and channel).",
                              F.feature_alpha_dropout)
