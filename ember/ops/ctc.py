"""Connectionist Temporal Classification: the negative log-likelihood of every alignment of a target sequence
with a sequence of per-step log-probabilities (blank-extended labels, forward-backward recursions in log space).

``CtcLoss`` gives the per-sample losses (N,); ``F.ctc_loss`` reduces them with ember ops. Its gradient is
torch's: ``exp(log_probs) - occupation / likelihood``, zero past each input length; it is not differentiable
again (``_CtcLossGrad`` raises, as torch's ``_ctc_loss_backward`` does).
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from ._op import Op, unsupported

__all__ = ["CtcLoss"]

_NEG = -np.inf


def _lse3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are."""
    m = np.maximum(np.maximum(a, b), c)
    m0 = np.where(m == _NEG, 0, m)
    with np.errstate(divide="ignore", invalid="ignore"):  # nan/inf log-probs give nan losses, silently as in torch
        return m0 + np.log(np.exp(a - m0) + np.exp(b - m0) + np.exp(c - m0))


def _shift(x: np.ndarray, k: int) -> np.ndarray:
    """``x`` moved ``k`` places along its last axis (right for k > 0, left for k < 0), filled with -inf."""
    out = np.full_like(x, _NEG)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    return out


_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"


def _padded(targets: np.ndarray, tl: np.ndarray) -> np.ndarray:
    """The targets as (N, max target length) int64, from (N, S) or from the 1-d concatenation of all targets."""
    n = tl.shape[0]
    arr = targets.astype(np.int64)
    longest = int(tl.max()) if n else 0
    if arr.ndim == 1:
        total = int(tl.sum())
        if arr.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {arr.shape[0]} "
                               f"for argument #2 'targets'{_WHERE}")
        out = np.zeros((n, longest), np.int64)
        starts = np.cumsum(tl) - tl
        for i in range(n):
            out[i, :tl[i]] = arr[starts[i]:starts[i] + tl[i]]
        return out
    if arr.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                           f"{arr.shape[1]} for argument #2 'targets'{_WHERE}")
    return arr[:, :longest]


class _Layout:
    """Blank-extended labels of a batch: ``ext`` (N, L) with L = 2 * max target length + 1, blank at even places
    and past each sample's own 2 * S_n + 1; ``skip`` (N, L): place s may be reached from s - 2. Checks the values
    of the lengths and targets (torch's messages; a label out of range or equal to the blank inside a target breaks
    torch's documented contract, where its kernels return arbitrary values: ember raises)."""

    __slots__ = ("ext", "skip", "ends", "steps", "host_ends", "host_steps")

    def __init__(self, targets: np.ndarray, input_lengths: np.ndarray, target_lengths: np.ndarray, blank: int,
                 steps: int, classes: int, ref: np.ndarray):
        # the layout is built on the host (checks and per-sample reads of small integer arrays), its arrays then
        # moved to ``ref``'s device; ``host_ends``/``host_steps`` keep host copies for per-sample reads
        targets = _B.to_host(targets)
        il, tl = _B.to_host(input_lengths).astype(np.int64), _B.to_host(target_lengths).astype(np.int64)
        for name, arr in (("input_lengths", il), ("target_lengths", tl)):
            if arr.size and arr.min() < 0:
                raise RuntimeError(f"Expected {name} to have value at least 0, but got value {arr.min()}{_WHERE}")
        if il.size and il.max() > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {il.max()}"
                               f"{_WHERE}")
        labels = _padded(targets, tl)
        used = labels[np.arange(labels.shape[1])[None, :] < tl[:, None]]
        if used.size and (used.min() < 0 or used.max() >= classes):
            bad = used[(used < 0) | (used >= classes)][0]
            raise IndexError(f"ctc_loss: target value {bad} is out of bounds for {classes} classes")
        if (used == blank).any():
            raise ValueError(f"ctc_loss: the targets must not contain the blank label ({blank})")
        n, s_max = labels.shape
        ext = np.full((n, 2 * s_max + 1), blank, np.int64)
        ext[:, 1::2] = np.where(np.arange(s_max)[None, :] < tl[:, None], labels, blank)
        skip = np.zeros(ext.shape, bool)
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        self.ext, self.skip = _B.like(ref, ext), _B.like(ref, skip)
        self.host_ends, self.host_steps = 2 * tl + 1, il  # extended length of each sample, its steps
        self.ends, self.steps = _B.like(ref, self.host_ends), _B.like(ref, il)


def _emissions(lp: np.ndarray, ext: np.ndarray) -> np.ndarray:
    """(T, N, L): the log-probability of each extended label at each step."""
    return np.take_along_axis(lp, np.broadcast_to(ext[None], (lp.shape[0],) + ext.shape), axis=2)


def _alpha(em: np.ndarray, lay: _Layout) -> np.ndarray:
    """Forward variables (T, N, L): log-probability of the prefixes ending at place s at step t."""
    alpha = _B.full(em.shape, _NEG, em.dtype, like=em)
    if em.shape[0] == 0:
        return alpha
    alpha[0, :, 0] = em[0, :, 0]
    if em.shape[2] > 1:
        alpha[0, :, 1] = em[0, :, 1]
    skip = lay.skip
    for t in range(1, em.shape[0]):
        a = alpha[t - 1]
        alpha[t] = em[t] + _lse3(a, _shift(a, 1), np.where(skip, _shift(a, 2), _NEG))
    return alpha


def _beta(em: np.ndarray, lay: _Layout) -> np.ndarray:
    """Backward variables (T, N, L): log-probability of the suffixes starting at place s at step t."""
    t_max, n, width = em.shape
    beta = _B.full(em.shape, _NEG, em.dtype, like=em)
    last, before = lay.ends - 1, lay.ends - 2
    skip_from = np.zeros_like(lay.skip)  # s may go on to s + 2
    skip_from[:, :-2] = lay.skip[:, 2:]
    nxt = _B.full((n, width), _NEG, em.dtype, like=em)
    for t in range(t_max - 1, -1, -1):
        b = em[t] + _lse3(nxt, _shift(nxt, -1), np.where(skip_from, _shift(nxt, -2), _NEG))
        b[lay.steps <= t] = _NEG
        ending = np.flatnonzero(lay.steps == t + 1)
        if ending.size:
            b[ending] = _NEG
            b[ending, last[ending]] = em[t, ending, last[ending]]
            two = ending[before[ending] >= 0]
            b[two, before[two]] = em[t, two, before[two]]
        beta[t] = nxt = b
    return beta


def _nll(alpha: np.ndarray, lay: _Layout) -> np.ndarray:
    """(N,) minus the log-likelihood of each target: the prefixes ending at its last label or the blank after it."""
    n = alpha.shape[1]
    out = np.zeros(n, alpha.dtype, like=alpha)
    for i in range(n):
        steps, end = int(lay.host_steps[i]), int(lay.host_ends[i])
        if steps == 0:
            out[i] = 0 if end == 1 else np.inf
            continue
        a = alpha[steps - 1, i]
        with np.errstate(invalid="ignore"):
            out[i] = -np.logaddexp(a[end - 1], a[end - 2] if end >= 2 else _NEG)
    return out


class CtcLoss(Op):
    """Per-sample CTC negative log-likelihood of ``log_probs`` (T, N, C); d log_probs: see the module doc."""

    __slots__ = ("lay", "alpha", "nll", "zero_infinity")
    save = ("self",)
    inputs = ("self", "targets", "input_lengths", "target_lengths")
    nattrs = 2
    jvp = unsupported("_ctc_loss", " because it has not been implemented yet")

    @staticmethod
    def forward(ctx, self, targets, input_lengths, target_lengths, blank, zero_infinity):
        lay = _Layout(targets, input_lengths, target_lengths, blank, self.shape[0], self.shape[2], self)
        alpha = _alpha(_emissions(self, lay.ext), lay)
        nll = _nll(alpha, lay)
        if ctx is not None:
            ctx.lay, ctx.alpha, ctx.nll, ctx.zero_infinity = lay, alpha, nll, zero_infinity
        return nll

    def backward(ctx, grad):
        (lp,) = ctx.saved_tensors
        return _CtcLossGrad.apply(grad, lp, ctx.lay, ctx.alpha, ctx.nll, ctx.zero_infinity), None, None, None


class _CtcLossGrad(Op):
    """The gradient of CtcLoss; torch has no derivative of it."""

    __slots__ = ()
    _name = "NotImplemented"
    nattrs = 4
    jvp = unsupported("_ctc_loss_backward", " because it has not been implemented yet")

    @staticmethod
    def forward(ctx, grad, lp, lay, alpha, nll, zero_infinity):
        em = _emissions(lp, lay.ext)
        ab = alpha + _beta(em, lay)
        with np.errstate(invalid="ignore", over="ignore"):
            occ = np.exp(ab + nll[None, :, None] - em)  # (T, N, L): share of the likelihood through (t, s)
            onehot = (lay.ext[:, :, None] == np.arange(lp.shape[2], like=lp)[None, None, :]).astype(lp.dtype)
            per_class = np.matmul(occ.transpose(1, 0, 2), onehot).transpose(1, 0, 2)  # (T, N, C)
            out = (np.exp(lp) - per_class) * grad[None, :, None]
        out[np.arange(lp.shape[0], like=lp)[:, None] >= lay.steps[None, :]] = 0
        if zero_infinity:
            out[:, np.isinf(nll)] = 0
        return out.astype(lp.dtype, copy=False)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")
