"""nn.functional's losses: pointwise (mse, l1, smooth_l1, huber), classification (nll, cross_entropy,
linear_cross_entropy, binary cross entropy), divergences and embeddings (kl_div, cosine/margin/triplet), Poisson and
Gaussian NLL, and the margin losses. Re-exported by ember.nn.functional."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _backend as _B
from .. import _dtype as _D
from .. import _kernels
from .. import _factories as _F
from .._tensor import Tensor, _all_examples, _wrap
from ..ops import _inplace as _IP
from ..ops import nn_ops as _N
from ..autograd.grad_mode import is_grad_enabled as _is_grad_enabled
from ..autograd._interpose import fused_ok as _fused_ok, replayable as _replayable
from ..ops import indexing as _I, elementwise as _E
from ._reduction import legacy_get_string as _legacy_reduction
from ._functional_activation import _no_complex, logsigmoid
from .functional import _size, linear, pairwise_distance  # (functional imports this module at its end)

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
]


# ------------------------------------------------------------------------------------------------ losses
def _reduction(size_average, reduce, reduction: str) -> str:
    """The reduction named by torch's legacy size_average/reduce flags (with its deprecation warning), if given."""
    if size_average is None and reduce is None:
        return reduction
    legacy = _legacy_reduction(size_average, reduce, emit_warning=False)
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{legacy}' instead.",
                  stacklevel=3)
    return legacy


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                      f"({_size(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast_pair(input: Tensor, target: Tensor) -> None:
    """torch's broadcast_tensors error for an input and target that do not broadcast (not NumPy's)."""
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        from ..ops.arithmetic import _broadcast_error

        raise _broadcast_error(input._data, target._data) from None


def _pointwise_loss(fn):
    def loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             **kwargs) -> Tensor:
        reduction = _reduction(size_average, reduce, reduction)
        _check_reduction(reduction)
        _warn_size(input, target)
        _broadcast_pair(input, target)
        return fn(input, target, reduction, **kwargs)
    return loss


def _mse(input, target, reduction, weight=None):
    if weight is None:
        return _N.MseLoss.apply(input, target, reduction)
    return _reduce(_N.MseLoss.apply(input, target, "none") * weight, reduction)


def _l1(input, target, reduction):
    return _reduce((input - target).abs(), reduction)


def _smooth_l1(input, target, reduction, beta=1.0):
    if beta == 0:  # torch's l1_loss
        return _l1(input, target, reduction)
    return _N.SmoothL1Loss.apply(input, target, beta, reduction)


def _huber(input, target, reduction, delta=1.0, weight=None):
    if weight is None:
        return _N.HuberLoss.apply(input, target, delta, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _reduce(_N.HuberLoss.apply(input, target, delta, "none") * weight, reduction)


_mse_loss, _l1_loss, _smooth_l1_loss, _huber_loss = map(_pointwise_loss, (_mse, _l1, _smooth_l1, _huber))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """(input - target)**2, reduced."""
    return _mse_loss(input, target, size_average, reduce, reduction, weight=weight)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced; with ``weight`` (input's shape) each term weighted, the mean by the weights' sum."""
    if weight is None:
        return _l1_loss(input, target, size_average, reduce, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    reduction = _reduction(size_average, reduce, reduction)
    terms = (input - target).abs() * weight
    if reduction == "none":
        return terms
    if reduction == "sum":
        return terms.sum()
    if reduction == "mean":
        return terms.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - beta / 2."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth_l1_loss(input, target, size_average, reduce, reduction, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta * (|d| - delta / 2)."""
    return _huber_loss(input, target, None, None, reduction, delta=delta, weight=weight)


def _class_targets(input: Tensor, target: Tensor, ignore_index: int) -> tuple:
    """(C, targets moved to (N, 1, d1, ...), mask of counted elements); torch's shape and range errors."""
    t = target._data
    nd = input.dim()
    if nd < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    # torch's nll_loss_nd: the batch first, then the checks of the kernel the input's rank selects
    if nd > 1 and input.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if nd == 1:
        if t.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 2:
        if t.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 4:
        if t.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                               f"{t.ndim}")
        if tuple(t.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(t.shape)}")
    elif tuple(t.shape) != (input.shape[0], *input.shape[2:]):
        want = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {want}, got {list(t.shape)}")
    if target._dtype not in (_D.int64, _D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_IP._title(target._dtype)}")
    c = input.shape[1] if input.dim() > 1 else input.shape[0]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    _B.device_assert(bad.any(), lambda: IndexError(f"Target {int(t[bad].flat[0])} is out of bounds."))
    return c, valid


@_replayable  # reads the targets' values: NOTE [replayable steps]
def _nll_weights(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str) -> tuple:
    """(class index per target as int64, weight per target) of nll_loss, with torch's target checks."""
    c, valid = _class_targets(input, target, ignore_index)
    t = target._data
    every = _B.is_cpu_array(valid) and bool(valid.all())  # the common case: no target is ignored (on a device the
    # general formulas, which read no value: NOTE [device-side asserts])
    tt = t.astype(np.int64) if every else np.where(valid, t, 0).astype(np.int64)  # a copy: later changes of t stay out
    if not _B.is_cpu_array(tt):  # (the range check waits: no read out of bounds meanwhile)
        tt = np.clip(tt, 0, c - 1)
    w = valid.astype(input._data.dtype)
    if weight is not None:
        w = w * weight._data[tt]
    if reduction == "mean":
        if every and weight is None and w.size:
            w /= w.sum()  # (a positive count: nothing to silence)
        else:
            # ignored targets keep a coefficient of exactly 0 (no gradient, as torch's kernel skips them) even when
            # the total is 0; counted targets of weight 0 over a total of 0 get 0/0 = nan, as torch's
            with np.errstate(invalid="ignore", divide="ignore"):
                w = np.where(valid, w / w.sum(), 0).astype(w.dtype, copy=False)
    return tt, w


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str) -> Tensor:
    _check_reduction(reduction)
    if type(input._data) not in _B.ARRAYS or type(target._data) is not type(input._data):  # (vmap, mixed devices)
        return _nll_composite(input, target, weight, ignore_index, reduction)
    tt, w = _nll_weights(input.detach(), target, weight, ignore_index, reduction)
    if input.dim() <= 2:
        return _N.NllLoss.apply(input, tt[:, None] if input.dim() > 1 else tt[None], w, reduction)
    if input.dim() == 4:
        return _N.NllLoss2D.apply(input, tt[:, None], w, reduction)
    # other K-dim inputs go through the 4-d kernel as torch's do: (N, C, d1*...*dk, 1), the result viewed back
    n, c = input.shape[:2]
    flat = (n, -1, 1)
    out = _N.NllLoss2D.apply(input.reshape(n, c, -1, 1), tt.reshape(flat)[:, None], w.reshape(flat), reduction)
    return out.view(target.shape) if reduction == "none" else out


def _nll_composite(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str):
    """nll_loss through gather/where/sum, for values that cannot be read here (batched tensors under vmap)."""
    if input.dim() < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = 1 if input.dim() > 1 else 0
    valid = target != ignore_index
    tt = _I.where(valid, target, 0)
    picked = input.gather(cdim, tt.unsqueeze(cdim)).squeeze(cdim)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.gather(0, tt.reshape(-1)).reshape(tt.shape)
    loss = -picked * w
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w.sum()


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-weight[t] * input[n, t[n]] over samples (and extra dims), ignoring ``ignore_index``, reduced."""
    return _nll(input, target, weight, ignore_index, _reduction(size_average, reduce, reduction))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices; -sum(p * log_softmax) for probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape) and not target._dtype.is_floating_point:
        # as torch: a target of the input's shape holds class probabilities, checked before any kernel runs
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{target._dtype._scalar_name}")
    if _fused_ce(input, target, weight):
        return _fused_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)
    cdim = 1 if input.dim() > 1 else 0
    logp = _N.log_softmax(input, cdim, None)
    c = input.shape[cdim] if input.dim() else 1
    wshape = (c,) + (1,) * (input.dim() - cdim - 1)
    if target._dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(wshape)
        loss = -terms.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c if input.numel() else 0)
        return _reduce(loss, reduction)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    kept = target != ignore_index  # (ember ops: under vmap the target's values cannot be read here)
    terms = logp if weight is None else logp * weight.reshape(wshape)
    smooth = _I.where(kept, -terms.sum(cdim), 0.0)  # masked, not multiplied: no 0 * inf = nan
    if reduction == "mean":
        if weight is None:
            total = kept.sum()
        else:
            tt = _I.where(kept, target, 0)
            total = _I.where(kept, weight.gather(0, tt.reshape(-1)).reshape(tt.shape), 0.0).sum()
        smooth = smooth.sum() / total  # every target ignored: 0 / 0 = nan, gradient 0 (the mask above)
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def _fused_ce(input: Tensor, target: Tensor, weight: Tensor | None) -> bool:
    """Whether cross_entropy runs as one node (NOTE [fused cross-entropy] in ember/ops/nn_ops.py): outside forward-AD
    / vmap levels, a non-empty floating input, targets and weights that need no gradient."""
    return (_fused_ok() and input.dim() >= 1 and input.numel() > 0 and input._dtype.is_floating_point
            and _B.is_array(input._data) and type(target._data) is type(input._data) and not target._requires_grad
            and (weight is None or (not weight._requires_grad and weight._dtype is input._dtype and weight.dim() == 1
                                    and weight.numel() == input.shape[1 if input.dim() > 1 else 0])))


def _fused_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                         eps: float) -> Tensor:
    """cross_entropy as one fused node: the target weights of NOTE [fused cross-entropy], then the op."""
    probs = target._dtype.is_floating_point and tuple(target.shape) == tuple(input.shape)  # class probabilities
    if probs:
        name = "DivBackward1" if reduction == "mean" else "NegBackward0"
    else:
        name = "AddBackward0" if eps > 0 else "NllLoss2DBackward0" if input.dim() >= 3 else "NllLossBackward0"
    out = _N.cross_entropy_node(name).apply(input, _ce_spec(input, target, weight, ignore_index, reduction, eps,
                                                            probs))
    if reduction == "none" and input.dim() in (3, 5, 6, 7, 8) and not probs and eps == 0:
        out = out.view(target.shape)  # torch's nll_loss of K-d inputs views its 4-d result back: ViewBackward0
    return out


@_replayable  # reads the targets' values: NOTE [replayable steps]
def _ce_spec(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str, eps: float,
             probs: bool) -> tuple:
    """The CrossEntropy node's ``spec`` (NOTE [fused cross-entropy]), with torch's target checks."""
    cdim = 1 if input.dim() > 1 else 0
    c = input.shape[cdim]
    acc = np.float32 if input._dtype._reduced else input._data.dtype  # 16-bit floats: float32 (torch)
    w = None if weight is None else weight._data.astype(acc, copy=False)
    idx = pick = smooth = q = None
    if probs:
        q = target._data.astype(acc)  # (a copy: later changes of the target stay out)
        if eps > 0:
            q = q * (1 - eps) + eps / c
        if w is not None:
            q = q * _N._class_row(w, cdim, input.dim())
        s = _kernels.fsum(q, (cdim,))
        scale = 1.0 / (input.numel() // c) if reduction == "mean" else 1.0
    else:
        _, valid = _class_targets(input, target, ignore_index)
        t = target._data
        tt = np.where(valid, t, 0).astype(np.int64, copy=False)  # (no branch on values: a sync on a device)
        if not _B.is_cpu_array(tt):  # the range check waits on a device (NOTE [device-side asserts]): no read
            tt = np.clip(tt, 0, c - 1)  # out of bounds meanwhile
        wt = valid.astype(acc) if w is None else w[tt] * valid
        pick = wt * (1 - eps) if eps else wt
        s = pick
        if eps > 0:
            smooth = valid * np.dtype(acc).type(eps / c)
            s = pick + smooth * (c if w is None else w.sum())
        idx = np.expand_dims(tt, 1) if input.dim() > 1 else tt[None]
        if reduction != "mean":
            scale = 1.0
        elif _B.is_cpu_array(wt):
            total = float(wt.sum())
            scale = 1.0 / total if total else math.nan
        else:  # a 0-d device array, nan when the total weight is 0 (no host sync: NOTE [stand-in counters])
            total = wt.sum()
            scale = np.divide(1.0, np.where(total != 0, total, np.nan))
    return (cdim, idx, pick, smooth, w if smooth is not None else None, q, s, scale, reduction)


# NOTE [linear_cross_entropy's options]: torch 2.13's linear_cross_entropy with ``options`` runs a chunked kernel
# that never holds all logits at once (an LLM head's memory saver) and precomputes the gradients in forward. ember
# always runs the reference form (linear, then cross_entropy): the same values and first gradients, every logit in
# memory, and a graph that also differentiates twice and survives a second backward (where torch's chunked path
# raises). The options are still validated and resolved as torch does, and the calls torch refuses to chunk warn
# as in torch.
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): ``linear_weight`` (C, in) or
    (C, d1, ..., dK, in) for a K-dimensional loss; ``ignore_index`` None means -100 for class indices."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and target._dtype is _D.int64)
        if not chunkable:
            warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                          "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                          f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype="
                          f"{target.dtype}, out_features={out_features}, tracing=False, linear_bias.shape="
                          f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
        else:
            acc = options._adjust(num_batches=batches[0] if batches else 1, in_features=in_features,
                                  num_classes=num_classes, dtype=input.dtype, device=input.device).acc_dtype
            if acc != input.dtype and not (input.dtype in (_D.float16, _D.bfloat16) and acc == _D.float32):
                raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, "
                                   f"but got {acc} acc_dtype and {input.dtype} inputs.")
    rows = math.prod(out_features) * num_classes
    logits = linear(input, linear_weight.reshape(rows, in_features) if out_features else linear_weight,
                    linear_bias.reshape(rows) if out_features and linear_bias is not None else linear_bias)
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]


def _check_same_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                         f"({_size(input.shape)}) is deprecated. Please ensure they have the same size.")


def _not_differentiable(fname: str, **args) -> None:
    for name, t in args.items():
        if t is not None and t._requires_grad and _is_grad_enabled():
            raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument '{name}'. "
                               "This input cannot have requires_grad True.")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), the logs clamped at -100 (one node, torch's finite gradients at 0 and 1)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_same_size(input, target)
    if target._dtype != input._dtype:
        raise RuntimeError(f"Found dtype {_IP._title(target._dtype)} but expected {_IP._title(input._dtype)}")
    _no_complex("binary_cross_entropy", input)  # the kernel's dtype dispatch comes before its range check
    x = _all_examples(input)
    if x.size and ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        _broadcast_pair(input, weight)
        if tuple(weight.shape) != tuple(input.shape):  # torch expands it (and saves the expanded view)
            weight = weight.expand(input.shape)
    _not_differentiable("binary_cross_entropy", weight=weight)
    return _N.BinaryCrossEntropy.apply(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed stably in one node; pos_weight scales positive
    terms."""
    _no_complex("log_sigmoid_cpu", input)
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    for extra in (weight, pos_weight):
        if extra is not None:
            _broadcast_pair(input, extra)
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _N.BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input is log-probabilities), reduced; 'batchmean': per sample."""
    if input._dtype.is_complex or target._dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _E.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    d = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    zeros = cos * 0
    pos = _I.where(target == 1, 1 - cos, zeros)
    neg = _I.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, "
                           f"target: {_size(target.shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with d the p-norm pairwise distance."""
    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _E.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps); full adds Stirling."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = target
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * t.log() - t + 0.5 * (t * (2 * math.pi)).log()
        loss = loss + _I.where(t > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 * (log(max(var, eps)) + (input - target)**2 / max(var, eps)) (+ 0.5 log(2 pi) when full)."""
    if not isinstance(var, Tensor):
        var = _F.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction)
    if (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    v = var + (var.detach().clamp_min(eps) - var.detach())  # clamped value, identity gradient (torch's no_grad clamp)
    d = input - target
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------- margin losses (compositions of ember ops)
__all__ += ["hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
            "multi_margin_loss", "triplet_margin_with_distance_loss"]


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1 (other targets get both terms, as torch's)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = _F.zeros_like(input)
    margin_term = _I.where(target != 1, (margin - input).clamp_min(0), zeros)
    self_term = _I.where(target != -1, input, zeros)
    return _reduce(margin_term + self_term, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross entropy of sigmoid(input) against 0/1 targets, averaged over the classes (last dim), reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


def _margin_frames(input: Tensor) -> tuple:
    """(frames, classes) of a multi-class margin loss input: (C), (N, C) or a 0-d single score; torch's error else."""
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if nd <= 1:
        return 1, input.shape[0] if nd else 1
    return input.shape[0], input.shape[1]


def _long_target(target: Tensor) -> np.ndarray:
    if target._dtype != _D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_IP._title(target._dtype)}")
    return target._data


def _frame_losses(loss: Tensor, scalar: bool, reduction: str) -> Tensor:
    """Per-frame losses (N,) reduced; ``scalar``: the one frame of an unbatched input is returned 0-d."""
    return _reduce(loss.reshape(()) if scalar else loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j (listed in ``target`` up to the first -1) and non-target classes i of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes, per sample; reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    nf, c = _margin_frames(input)
    t = _B.to_host(_long_target(target))  # (host bookkeeping of the listed classes)
    ok = t.ndim <= 1 and t.size == c if input.dim() <= 1 else t.shape == (nf, c)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    t = t.reshape(nf, c)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # entries before the first -1
    counts = np.zeros((nf, c), input._data.dtype)
    np.add.at(counts, (np.nonzero(listed)[0], t[listed]), 1)  # a class listed twice counts twice
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]  # (frame, target class j, non-target class i)
    x = input.reshape(nf, c)
    hinge = _N.activation("Threshold", 1 - x.unsqueeze(2) + x.unsqueeze(1), 0.0, 0.0)  # its gradient joins x's graph
    loss = (hinge * _wrap(_B.like(input._data, pairs), input._dtype)).sum((1, 2)) / c
    return _frame_losses(loss, input.dim() <= 1, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """sum over classes i != y of max(0, margin - x[y] + x[i])**p (times weight[y]) over the number of classes, per
    sample; reduced. p is 1 or 2."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nf, c = _margin_frames(input)
    t = _long_target(target)
    if t.ndim > 1 or t.size != nf:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nf}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    t = t.reshape(nf)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    x = input.reshape(nf, c)
    idx = _wrap(t.astype(np.int64), _D.int64)
    hinge = _N.activation("Threshold", margin - x.gather(1, idx.unsqueeze(1)) + x, 0.0, 0.0)
    if p == 2:
        hinge = hinge * hinge
    others = _wrap((np.arange(c) != t[:, None]).astype(input._data.dtype), input._dtype)
    hinge = hinge * others
    if weight is not None:
        hinge = hinge * weight[idx].unsqueeze(1)
    return _frame_losses(hinge.sum(1) / c, target.dim() == 0, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) for any distance function d (default: pairwise_distance); swap uses
    min(d(a, n), d(p, n))."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _E.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)
