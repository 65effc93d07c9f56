"""Causal attention biases that scaled_dot_product_attention understands without a materialized mask
(torch.nn.attention.bias)."""
from __future__ import annotations

from enum import IntEnum, auto
from warnings import warn

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor, _init, _wrap
from .. import functional as F

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Where the causal triangle is anchored: the upper left (query i sees keys 0..i) or the lower right (the last
    query sees every key)."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal mask of (seq_len_q, seq_len_kv), kept symbolic: attention with it runs as ``is_causal`` (upper left,
    or equal lengths) or with the mask made (lower right)."""

    __slots__ = ("variant", "seq_len_q", "seq_len_kv")

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int):
        self = object.__new__(cls)
        # (torch's constructor passes the three numbers on as a size: its tensor has that shape, unfilled)
        _init(self, np.empty((int(variant), seq_len_q, seq_len_kv), np.float32), D.float32, False)
        return self

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device=None) -> Tensor:
        return _wrap(np.tril(np.ones((self.seq_len_q, self.seq_len_kv), bool)), D.bool)

    def _lower_right(self, device=None) -> Tensor:
        offset = self.seq_len_kv - self.seq_len_q
        return _wrap(np.tril(np.ones((self.seq_len_q, self.seq_len_kv), bool), k=offset), D.bool)

    def _materialize(self, device=None) -> Tensor:
        """The boolean mask (True: may attend)."""
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        if self.variant == CausalVariant.LOWER_RIGHT:
            return self._lower_right(device)

    @staticmethod
    def _dispatch(query: Tensor, key: Tensor, value: Tensor, attn_mask: "CausalBias", dropout_p: float = 0.0,
                  is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False) -> Tensor:
        """scaled_dot_product_attention with this bias as its mask."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p,
                                                  is_causal=True, scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask._materialize(),
                                                  dropout_p=dropout_p, is_causal=False, scale=scale,
                                                  enable_gqa=enable_gqa)
        raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size) -> CausalBias:
    """The causal bias anchored at the upper left: query i attends to keys 0..i."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size) -> CausalBias:
    """The causal bias anchored at the lower right: the last query attends to every key."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
