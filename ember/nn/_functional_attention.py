"""Attention, functional forms: scaled_dot_product_attention and multi_head_attention_forward (re-exported by
nn.functional). Composed of ember ops (matmul, softmax, dropout ...), so every gradient order comes from them."""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as _D
from .. import _factories as _F
from .._tensor import Tensor, _wrap
from ..autograd._interpose import made
from ..backends import _SDP
from ..ops import shape as _S
from .functional import dropout, linear, pad, softmax  # bound before functional imports this module

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _additive_mask(mask: Tensor | None, dtype, true_means_keep: bool) -> Tensor | None:
    """A float mask to add to the scores (-inf where a position may not be attended)."""
    if mask is None or mask.dtype != _D.bool:
        return mask
    blocked = ~mask._data if true_means_keep else mask._data
    arr = np.where(blocked, -np.inf, 0.0).astype(dtype.np)
    return _wrap(arr, dtype)


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, scale: float,
            zero_blocked_rows: bool, training: bool = True) -> tuple:
    """softmax(q k^T * scale + mask) (dropped out) @ v and the attention weights; rows that may attend nowhere
    give zeros when ``zero_blocked_rows`` (torch's fused kernels) and NaN otherwise (its explicit path)."""
    scores = (q * scale) @ k.transpose(-2, -1)
    keep_rows = None
    if mask is not None:
        if zero_blocked_rows:
            m = mask._data
            full = np.broadcast_to(m, np.broadcast_shapes(m.shape, scores.shape))
            blocked = np.all(np.isneginf(full), axis=-1, keepdims=True)
            if blocked.any():
                rows = _wrap(np.broadcast_to(blocked, full.shape).copy(), _D.bool)
                mask = mask.expand(full.shape).masked_fill(rows, 0.0)
                keep_rows = _wrap((~blocked).astype(scores.dtype.np), scores.dtype)
        scores = scores + mask
    weights = softmax(scores, -1)
    if keep_rows is not None:
        weights = weights * keep_rows
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    return weights @ v, weights


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims; a bool ``attn_mask`` marks the
    positions that may be attended (True), a float one is added to the scores."""
    if attn_mask is not None and type(attn_mask) is not Tensor:
        dispatch = getattr(type(attn_mask), "_dispatch", None)  # a symbolic bias (nn.attention.bias.CausalBias)
        if dispatch is not None:
            return dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if not (_SDP["math"] or _SDP["flash"]):  # the kernels a CPU has (sdpa_kernel / backends.cuda switches)
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype != _D.bool and attn_mask.dtype != query.dtype:
        names = {_D.int64: "long int", _D.int32: "int", _D.float32: "float", _D.float64: "double"}
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {names.get(attn_mask.dtype, attn_mask.dtype)} and  query.dtype: "
                           f"{names.get(query.dtype, query.dtype)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    L, S = query.shape[-2], key.shape[-2]
    if attn_mask is not None:  # torch's broadcast error, before any kernel sees the mask
        try:
            np.broadcast_shapes(tuple(attn_mask.shape), (*query.shape[:-1], S))
        except ValueError:
            from ..ops.arithmetic import _broadcast_error

            raise _broadcast_error(np.empty((*query.shape[:-1], S)), attn_mask._data) from None
    if is_causal:  # made from the sizes only: a constant of a compiled program (nanoGPT's attention)
        keep = np.tril(np.ones((L, S), dtype=bool))
        mask = _wrap(made(np.where(keep, 0.0, -np.inf).astype(query.dtype.np)), query.dtype)
    else:
        mask = _additive_mask(attn_mask, query.dtype, true_means_keep=True)
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    return _attend(query, key, value, mask, dropout_p, s, zero_blocked_rows=True)[0]


def _in_projection(query, key, value, w_q, w_k, w_v, b):
    b_q, b_k, b_v = b.chunk(3) if b is not None else (None, None, None)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
                                 out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple:
    """Multi-head attention on (L, N, E) query and (S, N, E_k/E_v) key/value (unbatched: no N); returns the
    output (L, N, E) and the attention weights (averaged over heads when ``average_attn_weights``) or None."""
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint replaces the mask: SDPA builds the causal one
    else:
        is_causal = False
    dtype = query.dtype
    attn_mask = _additive_mask(attn_mask, dtype, true_means_keep=False)
    key_padding_mask = _additive_mask(key_padding_mask, dtype, true_means_keep=False)
    if use_separate_proj_weight:
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias)
    else:
        q, k, v = _in_projection(query, key, value, *in_proj_weight.chunk(3), in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        k = _S.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = _S.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    # (seq, N, E) -> (N * heads, seq, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (static_k if static_k is not None else k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1))
    v = (static_v if static_v is not None else v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1))
    if add_zero_attn:
        k = _S.cat([k, _F.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = _S.cat([v, _F.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    scale = 1.0 / math.sqrt(head_dim)
    if need_weights:
        out, weights = _attend(q, k, v, attn_mask, dropout_p, scale, zero_blocked_rows=False)
    else:
        if is_causal:
            attn_mask = _wrap(np.where(np.tril(np.ones((tgt_len, src_len), dtype=bool)), 0.0, -np.inf)
                              .astype(dtype.np), dtype)
        out, weights = _attend(q, k, v, attn_mask, dropout_p, scale, zero_blocked_rows=True)
        weights = None
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if unbatched:
            weights = weights.squeeze(0)
    if unbatched:
        out = out.squeeze(1)
    return out, weights
