"""ctc_loss, functional form (re-exported by nn.functional): type and shape checks with torch's messages, the
per-sample losses of ops.ctc.CtcLoss (which checks the values), then zero_infinity and the reduction in ember ops.
Lengths and targets stay tensors, so that vmap can batch them."""
from __future__ import annotations

import numpy as np

from .. import _dtype as _D
from .._tensor import Tensor, _wrap
from ..ops import indexing as _I
from ..ops._inplace import _title
from ..ops.ctc import CtcLoss
from ._functional_loss import _check_reduction

__all__ = ["ctc_loss"]


def _lengths(x, name: str, n: int) -> Tensor:
    """``input_lengths`` / ``target_lengths`` (a tensor or a sequence of ints) as a 1-d integer tensor of ``n``."""
    if isinstance(x, Tensor):
        if x._dtype._kind != 1:
            raise RuntimeError(f"{name} must be integral")
        x = x.reshape(-1)
    elif isinstance(x, (list, tuple)) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                for v in x):
        x = _wrap(np.asarray(x, np.int64).reshape(-1), _D.int64)
    else:
        raise TypeError(f"ctc_loss(): argument '{name}' must be a Tensor or a tuple of ints, not {type(x).__name__}")
    if x.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return x


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss of ``log_probs`` (T, N, C) or (T, C) against the targets, each
    input and target cut to its length; 'mean' divides each loss by its target length before averaging."""
    _check_reduction(reduction)
    if log_probs._dtype not in (_D.float32, _D.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{_title(log_probs._dtype)}'")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-d or 3-d, but got {log_probs.dim()}-d")
    n, classes = lp.shape[1], lp.shape[2]
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths", n)
    tl = _lengths(target_lengths, "target_lengths", n)
    if unbatched and targets.dim() == 1:
        targets = targets.unsqueeze(0)
    if targets.dim() not in (1, 2) or (targets.dim() == 2 and targets.shape[0] != n):
        raise RuntimeError(f"ctc_loss: expected targets of shape (N, S) or (sum(target_lengths),) with N = {n}, "
                           f"but got {list(targets.shape)}")
    loss = CtcLoss.apply(lp, targets, il, tl, blank, zero_infinity)
    if zero_infinity:
        loss = _I.where(loss == np.inf, _wrap(np.zeros((), loss.dtype.np), loss.dtype), loss)
    if reduction == "mean":
        return (loss / tl.clamp_min(1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
