"""Batching rules: how each op runs on physical batches (batch dim first) under vmap (NOTE [vmap]).

A rule is ``rule(level, cls, args)``; it runs with the level below active, so the ember ops it calls are
ordinary physical ops. It returns the op's result(s) wrapped for ``level`` (``level.wrap``), or
``NotImplemented`` to ask for the per-example fallback. Rules come from a few families: elementwise
(align the batch dim and pad the logical rank so broadcasting lines up), dim ops (shift dim arguments),
shape ops (adjust shape arguments), products, and decompositions (re-expressed through other ops at the
level itself).
"""
from __future__ import annotations

import string

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor
from ..autograd.grad_mode import _mode
from ..ops import (arithmetic, comparison, elementwise, gather_scatter, indexing, joining, linalg, masked, nn_ops,
                   piecewise, random as _random, rearrange, reduction, shape as _shape, sorting, triangular,
                   _fused_backward)
from ..ops._op import Op
from ..ops import fft as _fft
from ._vmap import _Placeholder
from ._vmap import batched_at as _bt

__all__ = ["RULES", "RANDOM", "rule_for", "random_rule"]

RULES: dict = {}


def _wrap_dim(d: int, n: int) -> int:
    m = max(n, 1)
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d % m


def _pad(p: Tensor, rank: int, target: int) -> Tensor:
    """Physical ``p`` (batch first, logical rank ``rank``) with unit dims after the batch dim up to ``target``."""
    if rank >= target:
        return p
    return p.reshape((p.shape[0],) + (1,) * (target - rank) + tuple(p.shape[1:]))


def _rank(x) -> int:
    return x.ndim if isinstance(x, Tensor) or _B.is_array(x) else 0


def _all_ops():
    from ..ops._op import _registry

    seen = set(_registry.values())
    stack = [Op]
    while stack:  # subclasses too: the registry keeps one class per node name
        for c in stack.pop().__subclasses__():
            stack.append(c)
            seen.add(c)
    return seen



# ----------------------------------------------------------------------------- elementwise
def _elementwise(operand_attrs: tuple = ()):
    """Rule for ops broadcasting their tensor inputs (and the attrs at ``operand_attrs``) elementwise."""

    def rule(level, cls, args):
        nin = len(args) - cls.nattrs
        pos = tuple(range(nin)) + operand_attrs
        for i in range(nin, len(args)):
            if i not in operand_attrs and _bt(args[i], level) is not None:
                return NotImplemented
        target = max(_rank(args[i]) for i in pos)
        cast = _promotion_fix(args[:nin], level)
        new = list(args)
        for i in pos:
            bt = _bt(args[i], level)
            if bt is not None:
                p = _pad(bt._phys, bt.ndim, target)
                if cast is not None and i < nin and p._dtype is not cast:
                    p = p.to(cast)
                new[i] = p._data if i >= nin and not isinstance(args[i], Tensor) else p
        return level.wrap(cls.apply(*new))

    return rule


def _promotion_fix(tensors, level):
    """The dtype torch's promotion gives the LOGICAL operands when it differs from what the physical ones would
    give (a batched 0-d operand is 1-d physically, so it would win over 0-d operands of another dtype)."""
    zero_batched = False
    dtypes = set()
    for a in tensors:
        if isinstance(a, Tensor):
            dtypes.add(a._dtype)
            if a.ndim == 0 and _bt(a, level) is not None:
                zero_batched = True
    if not zero_batched or len(dtypes) < 2:
        return None
    from .. import _dtype as D

    return D.result_type(*tensors)


def _reduced(cls_attr_reduction: int):
    """Rule for losses with a reduction attr: the 'none' form batched, then reduced per example."""
    ew = _elementwise()

    def rule(level, cls, args):
        reduction_ = args[cls_attr_reduction]
        if reduction_ == "none":
            return ew(level, cls, args)
        new = list(args)
        new[cls_attr_reduction] = "none"
        out = ew(level, cls, tuple(new))
        if out is NotImplemented:
            return out
        p = out._phys
        p = p.reshape(p.shape[0], out.numel())
        return level.wrap(p.mean(1) if reduction_ == "mean" else p.sum(1))

    return rule


# ----------------------------------------------------------------------------- dim ops
def _dim_rule(dim_pos: int, kind: str):
    """Rule for ops of one batched tensor with a dim argument at ``dim_pos``.

    kind: "reduce" (None or () means every dim), "one" (an int dim), "keep" (int, result keeps rank)."""

    def rule(level, cls, args):
        x = _bt(args[0], level)
        for a in args[1:]:
            if _bt(a, level) is not None:
                return NotImplemented
        n = x.ndim
        p = x._phys
        b = p.shape[0]
        d = args[dim_pos]
        new = list(args)
        keepdim = _keepdim(cls, args)
        if kind == "reduce" and (d is None or d == () or d == []):
            new[0] = p.reshape(b, x.numel())
            new[dim_pos] = 1
            out = cls.apply(*new)
            shape = (b,) + ((1,) * n if keepdim else ())
            return level.wrap(_reshape_all(out, shape))
        if n == 0:
            new[0] = p.reshape(b, 1)
            new[dim_pos] = _shift(d, 0, 1)
            return level.wrap(_reshape_all(cls.apply(*new), (b,)))
        new[0] = p
        new[dim_pos] = _shift(d, n, 1)
        return level.wrap(cls.apply(*new))

    return rule


def _shift(d, n: int, by: int):
    if isinstance(d, (tuple, list)):
        return tuple(_wrap_dim(int(i), n) + by for i in d)
    return _wrap_dim(int(d), n) + by


def _keepdim(cls, args) -> bool:
    idx = _KEEPDIM_POS.get(cls)
    return idx is not None and idx < len(args) and bool(args[idx])


_KEEPDIM_POS: dict = {}


def _reshape_all(out, shape):
    if isinstance(out, tuple):
        vals = [o.reshape(shape) for o in out]
        return type(out)(*vals) if type(out) is not tuple else tuple(vals)
    return out.reshape(shape)


# ----------------------------------------------------------------------------- shape ops
def _only_self(level, args):
    for a in args[1:]:
        if _bt(a, level) is not None:
            return None
    return _bt(args[0], level)


def _view_rule(level, cls, args):
    x = _only_self(level, args)
    if x is None:
        return NotImplemented
    p = x._phys
    return level.wrap(p.reshape((p.shape[0],) + tuple(args[1])))


def _expand_rule(level, cls, args):
    x = _only_self(level, args)
    if x is None:
        return NotImplemented
    shape = tuple(args[1])
    p = _pad(x._phys, x.ndim, len(shape))
    return level.wrap(cls.apply(p, (p.shape[0],) + shape))


def _unsqueeze_rule(level, cls, args):
    x = _only_self(level, args)
    return level.wrap(cls.apply(x._phys, _wrap_dim(args[1], x.ndim + 1) + 1))


def _squeeze_rule(level, cls, args):
    x = _only_self(level, args)
    p = x._phys
    shape = x.shape
    if args[1] is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = tuple(i for i in (_wrap_dim(d, x.ndim) for d in args[1]) if x.ndim and shape[i] == 1)
    if not dims:
        return level.wrap(p.view(p.shape))
    return level.wrap(_shape.SqueezeDims.apply(p, tuple(d + 1 for d in dims)))


def _transpose_rule(level, cls, args):
    x = _only_self(level, args)
    n = x.ndim
    if n == 0:
        _wrap_dim(args[1], 0), _wrap_dim(args[2], 0)  # torch's range check
        return level.wrap(x._phys.view(x._phys.shape))
    return level.wrap(_shape.Transpose.apply(x._phys, _wrap_dim(args[1], n) + 1, _wrap_dim(args[2], n) + 1))


def _t_rule(level, cls, args):
    x = _only_self(level, args)
    p = x._phys
    return level.wrap(_shape.Transpose.apply(p, 1, 2) if x.ndim == 2 else p.view(p.shape))


def _permute_rule(level, cls, args):
    x = _only_self(level, args)
    return level.wrap(cls.apply(x._phys, (0,) + tuple(_wrap_dim(d, x.ndim) + 1 for d in args[1])))


def _shift_attr(*positions):
    """Rule for ops whose attrs at ``positions`` are dims of the (only batched) self."""

    def rule(level, cls, args):
        x = _only_self(level, args)
        if x is None:
            return NotImplemented
        new = list(args)
        new[0] = x._phys
        for i in positions:
            if new[i] is not None:
                new[i] = _shift(new[i], x.ndim, 1)
        return level.wrap(cls.apply(*new))

    return rule


def _passthrough(level, cls, args):
    """Ops acting on trailing dims with any leading dims (tril, triu, linalg): the batch dim is one more."""
    x = _only_self(level, args)
    if x is None:
        return NotImplemented
    return level.wrap(cls.apply(x._phys, *args[1:]))


def _repeat_rule(level, cls, args):
    x = _only_self(level, args)
    reps = tuple(args[1])
    p = _pad(x._phys, x.ndim, len(reps))
    return level.wrap(cls.apply(p, (1,) + reps))


def _roll_rule(level, cls, args):
    x = _only_self(level, args)
    p = x._phys
    if args[2] is None:
        b = p.shape[0]
        return level.wrap(cls.apply(p.reshape(b, x.numel()), tuple(args[1]), (1,)).reshape(p.shape))
    return level.wrap(cls.apply(p, args[1], _shift(args[2], x.ndim, 1)))


def _batched_all(level, tensors):
    """Physical values of ``tensors``, each batched (unbatched ones expanded along the batch)."""
    out = []
    for t in tensors:
        bt = _bt(t, level)
        if bt is not None:
            out.append(bt._phys)
        else:
            out.append(t.unsqueeze(0).expand((level.size,) + tuple(t.shape)))
    return out


def _cat_rule(level, cls, args):
    tensors, dim = args[:-1], args[-1]
    legacy = [t for t in tensors if t.ndim == 1 and t.shape[0] == 0]  # 1-d empty tensors: skipped, as torch
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    if legacy and ref.ndim != 1:
        tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return level.wrap(cls.apply(*_batched_all(level, tensors), _wrap_dim(dim, ref.ndim) + 1))


def _stack_rule(level, cls, args):
    tensors, dim = args[:-1], args[-1]
    return level.wrap(cls.apply(*_batched_all(level, tensors), _wrap_dim(dim, tensors[0].ndim + 1) + 1))


# ----------------------------------------------------------------------------- products
def _matmul_rule(level, cls, args):
    """The matmul family: batched vectors become matrices, the batched operand's logical rank is padded so
    NumPy's batch broadcasting lines up, and the added dims are squeezed away."""
    a, b = args
    ba, bb = _bt(a, level), _bt(b, level)
    ra, rb = a.ndim, b.ndim
    pa = ba._phys if ba is not None else a
    pb = bb._phys if bb is not None else b
    conv_a = ba is not None and ra == 1
    conv_b = bb is not None and rb == 1
    b_vector = rb == 1
    if conv_a:
        pa, ra = pa.unsqueeze(1), 2
    if conv_b:
        pb, rb = pb.unsqueeze(-1), 2
    target = max(ra, rb)
    if ba is not None:
        pa = _pad(pa, ra, target)
    if bb is not None:
        pb = _pad(pb, rb, target)
    out = cls.apply(pa, pb)
    if conv_b:
        out = out.squeeze(-1)
    if conv_a:
        out = out.squeeze(-1 if b_vector else -2)
    return level.wrap(out)


def _einsum_rule(level, cls, args):
    n = len(args) - 3
    ops, (subs, out, sizes) = args[:n], args[n:]
    used = set("".join(subs) + out)
    letter = next(c for c in string.ascii_letters if c not in used)
    new_subs, phys = [], []
    for sub, op in zip(subs, ops):
        bt = _bt(op, level)
        if bt is not None:
            new_subs.append(letter + sub)
            phys.append(bt._phys)
        else:
            new_subs.append(sub)
            phys.append(op)
    new_sizes = dict(sizes)
    new_sizes[letter] = level.size
    return level.wrap(linalg.Einsum.run(new_subs, letter + out, new_sizes, phys))


def _decompose(fn):
    """Rule re-expressing an op through other ops run at the level itself (their own rules apply)."""

    def rule(level, cls, args):
        saved = _mode.interpose
        _mode.interpose = level
        try:
            return fn(*args)
        finally:
            _mode.interpose = saved

    return rule


def _beta_alpha(prod, self, beta, alpha):
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return out
    return out + (self if beta == 1 else self * beta)


_ADD_PRODUCT_DECOMPOSITIONS = {
    "AddmmBackward0": lambda s, a, b, beta, alpha: _beta_alpha(a @ b, s, beta, alpha),
    "AddmvBackward0": lambda s, a, v, beta, alpha: _beta_alpha(a @ v, s, beta, alpha),
    "AddrBackward0": lambda s, u, v, beta, alpha: _beta_alpha(u.unsqueeze(-1) * v, s, beta, alpha),
    "BaddbmmBackward0": lambda s, a, b, beta, alpha: _beta_alpha(a @ b, s, beta, alpha),
    "AddbmmBackward0": lambda s, a, b, beta, alpha: _beta_alpha((a @ b).sum(0), s, beta, alpha),
}


# ----------------------------------------------------------------------------- indexing
def _gather_rule(level, cls, args):
    x, dim, idx = args
    bx, bi = _bt(x, level), _bt(idx, level)
    n = x.ndim
    px = bx._phys if bx is not None else x.unsqueeze(0).expand((level.size,) + tuple(x.shape))
    if bi is not None:
        pi = bi._phys._data
    else:
        arr = idx._data if isinstance(idx, Tensor) else _B.asarray(idx)
        pi = np.broadcast_to(arr, (level.size,) + arr.shape)
    if n == 0:
        return level.wrap(cls.apply(px.reshape(-1, 1), 1, pi.reshape(-1, 1)).reshape(-1))
    return level.wrap(cls.apply(px, _wrap_dim(dim, n) + 1, pi))


# ----------------------------------------------------------------------------- random ops
# the samplers; the gradients of Gamma samples live beside them but are deterministic elementwise functions
_GAMMA_GRADS = (_random.StandardGammaGrad, _random.LogStandardGammaGrad)
RANDOM = frozenset(c for c in _all_ops() if c.__module__ == _random.__name__ and c not in _GAMMA_GRADS)

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def random_rule(level, cls, args, batched: bool):
    from ..autograd import _interpose

    if level.randomness == "error":
        raise RuntimeError(_RANDOM_ERROR)
    if not batched:
        if level.randomness == "same":
            return _interpose.call_below(level, cls, args)
        saved = _mode.interpose
        _mode.interpose = level.below
        try:
            outs = [cls.apply(*args) for _ in range(level.size)]
            from ..ops.shape import stack

            return level.wrap(stack(outs))
        finally:
            _mode.interpose = saved
    return _elementwise()(level, cls, args)


# ----------------------------------------------------------------------------- the table
def _register(names, rule) -> None:
    from ..ops._op import _registry

    for n in names.split() if isinstance(names, str) else names:
        RULES[_registry[n]] = rule


_EW = _elementwise()
_EW_MODULES = {m.__name__ for m in (arithmetic, comparison, elementwise, piecewise, _fused_backward)}


for _c in _all_ops():
    if _c.__module__ in _EW_MODULES or _c in _GAMMA_GRADS:
        RULES[_c] = _EW
_register("EluBackward0 CeluBackward0 LeakyReluBackward0 HardtanhBackward0 HardsigmoidBackward0 HardswishBackward0 "
          "SoftplusBackward0 GeluBackward0 SiluBackward0 MishBackward0 ThresholdBackward0 CloneBackward0 "
          "AliasBackward0 ToCopyBackward0 LogSigmoidBackward0 HardshrinkBackward0 SoftshrinkBackward0 "
          "RreluWithNoiseBackward0", _EW)
RULES[indexing.Where] = _elementwise((2,))
RULES[masked.MaskedFill] = _elementwise((1,))
_MASKED_FILL_TENSOR = _elementwise((2,))
_register("MseLossBackward0", _reduced(2))

# reductions (dim at 1) and ops of one dim
for _c in (reduction.Sum, reduction.SumAll, reduction.Mean, reduction.MeanAll, reduction.Prod, reduction.ProdAll,
           reduction.Nansum, reduction.Logsumexp, reduction.Var, reduction.Std, reduction.VarMean, reduction.StdMean,
           reduction.MaxAll, reduction.MinAll, reduction.Amax, reduction.Amin):
    RULES[_c] = _dim_rule(1, "reduce")
    _KEEPDIM_POS[_c] = 3 if _c in (reduction.Var, reduction.Std, reduction.VarMean, reduction.StdMean) else 2
RULES[reduction.Norm] = _dim_rule(2, "reduce")
_KEEPDIM_POS[reduction.Norm] = 3
for _c in (reduction.MaxDim, reduction.MinDim, reduction.MedianDim, reduction.Cummax, reduction.Cummin,
           reduction.Cumsum, reduction.Cumprod, nn_ops.Softmax, nn_ops.LogSoftmax):
    RULES[_c] = _dim_rule(1, "one")
    if _c in (reduction.MaxDim, reduction.MinDim, reduction.MedianDim):
        _KEEPDIM_POS[_c] = 2
_register("SortBackward0 SortBackward1 TopkBackward0 KthvalueBackward0", _dim_rule(1, "one"))

# shape ops
for _c in (_shape.View, _shape.UnsafeView, _shape.ReshapeAlias):
    RULES[_c] = _view_rule
RULES[_shape.Expand] = _expand_rule
RULES[_shape.Unsqueeze] = _unsqueeze_rule
for _c in (_shape.Squeeze, _shape.SqueezeAll, _shape.SqueezeDims):
    RULES[_c] = _squeeze_rule
RULES[_shape.Transpose] = _transpose_rule
RULES[_shape.T] = _t_rule
RULES[_shape.Permute] = _permute_rule
RULES[_shape.Select] = _shift_attr(1)
RULES[indexing.Slice] = _shift_attr(1)
RULES[joining.Split] = _shift_attr(1)
RULES[joining.SplitWithSizes] = _shift_attr(1)
RULES[joining.Unbind] = _shift_attr(1)
RULES[rearrange.Flip] = _shift_attr(1)
RULES[triangular.Diagonal] = _shift_attr(2, 3)
RULES[rearrange.Repeat] = _repeat_rule
RULES[rearrange.Roll] = _roll_rule
RULES[joining.Cat] = _cat_rule
RULES[joining.Stack] = _stack_rule
_register("TrilBackward0 TriuBackward0", _passthrough)
RULES[gather_scatter.Gather] = _gather_rule
RULES[triangular.Trace] = _decompose(lambda x: x.diagonal().sum())

# products
for _c in (linalg.Matmul, linalg.Mm, linalg.Dot, linalg.Mv, linalg.Bmm, linalg.VecMat, linalg.MatBatch):
    RULES[_c] = _matmul_rule
for _n, _fn in _ADD_PRODUCT_DECOMPOSITIONS.items():
    _register(_n, _decompose(_fn))
RULES[linalg.Einsum] = _einsum_rule
# complex numbers and FFTs: the parts are elementwise or act on the trailing pair; transforms act on dims
_register("ConjBackward0 ConjPhysicalBackward0 ComplexBackward0 PolarBackward0 SgnBackward0", _EW)
_register("ViewAsRealBackward0 ViewAsComplexBackward0", _passthrough)
for _c in (_fft.FftC2C, _fft.FftR2C, _fft.FftC2R):
    RULES[_c] = _shift_attr(1)

_CACHE: dict = {}


def rule_for(cls):
    """The rule of ``cls`` or of its nearest op base class that has one (None: fallback)."""
    try:
        return _CACHE[cls]
    except KeyError:
        pass
    rule = None
    for c in cls.__mro__:
        rule = RULES.get(c)
        if rule is not None:
            break
    _CACHE[cls] = rule
    return rule


def _basic_index_rule(level, cls, args):
    x = _only_self(level, args)
    if x is None:
        return NotImplemented
    key = args[1]
    return level.wrap(cls.apply(x._phys, (slice(None),) + (key if isinstance(key, tuple) else (key,))))


def _index_rule(level, cls, args):
    """Advanced indexing. Unbatched index arrays that stay adjacent: the batch dim is one more slice (NumPy
    keeps their result dims in place). Batched index arrays leading the key: an arange over the batch joins
    them as one more index array, so each example indexes its own slice."""
    x, key = args
    key = key if isinstance(key, tuple) else (key,)
    adv = [i for i, k in enumerate(key) if isinstance(k, (Tensor, list)) or _B.is_array(k)]
    bx = _bt(x, level)
    batched_key = [i for i, k in enumerate(key) if _bt(k, level) is not None]
    if adv and adv[-1] - adv[0] + 1 != len(adv):
        if batched_key:
            return NotImplemented
        # separated index arrays: NumPy puts their result dims first, before the batch dim (a leading slice)
        nd = max(1 if _B.is_array(k) and k.dtype == np.bool_ else np.ndim(k) for k in
                 (key[i] for i in adv))
        return level.wrap(cls.apply(bx._phys, (slice(None),) + key).movedim(nd, 0))
    if not batched_key:
        return level.wrap(cls.apply(bx._phys, (slice(None),) + key))
    if adv[0] != 0 or any(_B.is_array(k) and k.dtype == np.bool_ for k in key):
        return NotImplemented
    px = bx._phys if bx is not None else x.unsqueeze(0).expand((level.size,) + tuple(x.shape))
    new_key = []
    nd = 0
    for k in key:
        bk = _bt(k, level)
        if bk is not None:
            k = bk._phys._data
            nd = max(nd, k.ndim - 1)
        elif _B.is_array(k):
            nd = max(nd, k.ndim)
        new_key.append(k)
    ar = np.arange(level.size).reshape((level.size,) + (1,) * nd)
    return level.wrap(cls.apply(px, (ar,) + tuple(new_key)))


RULES[indexing.BasicIndex] = _basic_index_rule
RULES[indexing.Index] = _index_rule


# ----------------------------------------------------------------------------- ops with a leading N dim
def _fold(data_slots: tuple = (0,)):
    """Rule for ops whose ``data_slots`` inputs lead with a sample dim N (conv, pooling, padding ...): the batch
    dim is folded into N (B*N samples) and unfolded from every output; other tensor inputs must be unbatched."""

    def rule(level, cls, args):
        nin = len(args) - cls.nattrs
        for i, a in enumerate(args):
            if _bt(a, level) is not None and (i not in data_slots or i >= nin):
                return NotImplemented
        bts = [_bt(args[i], level) for i in data_slots if i < len(args)]
        ref = next(bt for bt in bts if bt is not None)
        if any(bt is None and args[i] is not None for i, bt in zip(data_slots, bts)) or ref.ndim < 1:
            return NotImplemented
        b, n = level.size, ref.shape[0]
        new = list(args)
        for i, bt in zip(data_slots, bts):
            if bt is not None:
                new[i] = bt._phys.reshape((b * n,) + tuple(bt.shape[1:]))
        out = cls.apply(*new)
        return level.wrap(_map_out(out, lambda o: o.reshape((b, n) + tuple(o.shape[1:]))))

    return rule


def _map_out(out, fn):
    if isinstance(out, tuple):
        vals = [fn(o) for o in out]
        return type(out)(*vals) if type(out) is not tuple else tuple(vals)
    return fn(out)


def _embedding_rule(level, cls, args):
    """Unbatched weight: the indices' batch dim is one more index dim. Batched weight: each example's rows picked
    by advanced indexing (batch, index); a padding row's picks are detached, so it gets no gradient."""
    weight, idx, padding_idx = args[0], args[1], args[2]
    bw, bi = _bt(weight, level), _bt(idx, level)
    if bw is None:
        new = list(args)
        new[1] = bi._phys._data if type(idx) is _Placeholder else bi._phys
        return level.wrap(cls.apply(*new))
    if args[4]:  # scale_grad_by_freq counts indices per example: not expressible this way
        return NotImplemented
    b = level.size
    if bi is not None:
        pi = bi._phys
    else:
        arr = idx._data if isinstance(idx, Tensor) else _B.asarray(idx)
        pi = _as_tensor(np.broadcast_to(arr, (b,) + arr.shape))
    ar = np.arange(b).reshape((b,) + (1,) * (pi.ndim - 1))
    out = bw._phys[ar, pi]
    if padding_idx is not None:
        from .. import where

        out = where((pi == padding_idx).unsqueeze(-1), out.detach(), out)
    return level.wrap(out)


def _as_tensor(arr: np.ndarray) -> Tensor:
    from .._tensor import _wrap_any

    return _wrap_any(_B.ascontiguousarray(arr))


def _linalg_rule(level, cls, args):
    """Decompositions take any leading batch dims: the vmap batch dim is one more (self only batched)."""
    return _passthrough(level, cls, args)


def _along(dim_pos: int, idx_pos: int, per_element_idx: bool, data: tuple):
    """Rule for scatter/index_add-like ops: the ``data`` tensors batched (expanded when not), the dim shifted;
    an index of one entry per element (scatter) is batched too, a 1-d index along dim (index_add) must not be."""

    def rule(level, cls, args):
        n = args[0].ndim
        bi = _bt(args[idx_pos], level)
        if n == 0 or (bi is not None and not per_element_idx):
            return NotImplemented
        for i, a in enumerate(args):
            if i not in data and i != idx_pos and _bt(a, level) is not None:
                return NotImplemented
        new = list(args)
        for i in data:
            t = args[i]
            if isinstance(t, Tensor):  # (a Python number stays one)
                bt = _bt(t, level)
                new[i] = bt._phys if bt is not None else t.unsqueeze(0).expand((level.size,) + tuple(t.shape))
        if per_element_idx:
            if bi is not None:
                new[idx_pos] = bi._phys._data
            else:
                idx = args[idx_pos]
                arr = idx._data if isinstance(idx, Tensor) else _B.asarray(idx)
                new[idx_pos] = np.broadcast_to(arr, (level.size,) + arr.shape)
        new[dim_pos] = _wrap_dim(args[dim_pos], n) + 1
        return level.wrap(cls.apply(*new))

    return rule


def _searchsorted_rule(level, cls, args):
    """Unbatched 1-d boundaries take any values as they are; otherwise both sides become batched n-d (a 1-d
    sequence per example searched by that example's values, flattened)."""
    seq, vals, right, out_int32 = args
    bs, bv = _bt(seq, level), _bt(vals, level)
    if bs is None and seq.ndim <= 1:
        return level.wrap(cls.apply(seq, bv._phys, right, out_int32))
    b = level.size
    ps = bs._phys if bs is not None else seq.unsqueeze(0).expand((b,) + tuple(seq.shape))
    if not isinstance(vals, Tensor):
        pv = ps.new_full((b,), vals)
    else:
        pv = bv._phys if bv is not None else vals.unsqueeze(0).expand((b,) + tuple(vals.shape))
    if seq.ndim <= 1:
        vshape = tuple(pv.shape)
        return level.wrap(cls.apply(ps.reshape(b, -1), pv.reshape(b, -1), right, out_int32).reshape(vshape))
    return level.wrap(cls.apply(ps, pv, right, out_int32))


_FOLD_CONV = _fold((0,))


def _conv_rule(level, cls, args):
    """A batched input alone: the batch folds into N. A batched weight (per-example parameters, as under
    vmap(grad)): one grouped convolution, each example's channels a group block (B * groups groups)."""
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = args
    bw, bb = _bt(w, level), _bt(bias, level)
    if bw is None and bb is None:
        return _FOLD_CONV(level, cls, args)
    b = level.size
    px, pw = _batched_all(level, (x, w))
    n = x.shape[0]
    px = px.movedim(0, 1).reshape((n, b * x.shape[1]) + tuple(x.shape[2:]))
    pw = pw.reshape((b * w.shape[0],) + tuple(w.shape[1:]))
    pb = None if bias is None else _batched_all(level, (bias,))[0].reshape(-1)
    out = cls.apply(px, pw, pb, stride, padding, dilation, transposed, output_padding, b * groups)
    return level.wrap(out.reshape((n, b, out.shape[1] // b) + tuple(out.shape[2:])).movedim(1, 0))


def _median_all_rule(level, cls, args):
    """median() of each example: the lower median's value (MedianDim on the flattened examples), then every
    element equal to it (NaN matching NaN) takes an even share of the gradient, as the op's backward does."""
    x = _only_self(level, args)
    if x is None or x.numel() == 0:
        return NotImplemented
    p = x._phys
    flat = p.reshape(p.shape[0], -1)
    v = reduction.MedianDim.apply(flat.detach(), 1, True, None)[0]
    tie = (flat == v) | (flat.isnan() & v.isnan())
    out = indexing.Where.apply(flat, 0.0, tie).sum(1) / tie.sum(1)
    keepdim = len(args) > 2 and bool(args[2])
    return level.wrap(out.reshape((p.shape[0],) + ((1,) * x.ndim if keepdim else ())).to(p._dtype))


def _take_rule(level, cls, args):
    """take(x, idx) = the flattened example indexed by idx (advanced indexing; batched idx with an arange)."""
    x, idx = args
    bx, bi = _bt(x, level), _bt(idx, level)
    b = level.size
    if bx is not None:
        flat = bx._phys.reshape(b, -1)
        if bi is None:
            return level.wrap(flat[:, idx])
        pi = bi._phys
        return level.wrap(flat[np.arange(b).reshape((b,) + (1,) * (pi.ndim - 1)), pi])
    return level.wrap(x.reshape(-1)[bi._phys])


def _diag_embed_rule(level, cls, args):
    x = _only_self(level, args)
    _, offset, dim1, dim2 = args
    n = x.ndim + 1  # (a 0-d example raises torch's range error, as in eager mode)
    return level.wrap(cls.apply(x._phys, offset, _wrap_dim(dim1, n) + 1, _wrap_dim(dim2, n) + 1))


def _cross_rule(level, cls, args):
    a, b, dim = args
    pa, pb = _batched_all(level, (a, b))
    return level.wrap(cls.apply(pa, pb, _wrap_dim(dim, a.ndim) + 1))


def _masked_fill_tensor_rule(level, cls, args):
    """A batched value: where(mask, value, self) at the level (its rules batch it; the gradient is the same)."""
    x, value, mask = args
    if _bt(value, level) is None:
        return _MASKED_FILL_TENSOR(level, cls, args)
    cond = _bt(mask, level)
    if cond is None:
        from .._tensor import _wrap_any

        cond = _wrap_any(_B.asarray(mask))
    saved = _mode.interpose
    _mode.interpose = level
    try:
        return indexing.Where.apply(value.to(x.dtype), x, cond)
    finally:
        _mode.interpose = saved


def _solve_rule(level, cls, args):
    """linalg.solve: both sides batched (expanded when not), their logical batch ranks padded to match after the
    vmap dim; whether B is a vector was decided on the logical shapes."""
    a, b, vec, left = args
    pa, pb = _batched_all(level, (a, b))
    ra, rb = a.ndim - 2, b.ndim - (1 if vec else 2)
    t = max(ra, rb)
    return level.wrap(cls.apply(_pad(pa, ra, t), _pad(pb, rb, t), vec, left))


def _masked_scatter_rule(level, cls, args):
    """Each example's masked positions take its source's elements in order: position = running count of the
    mask - 1, gathered from the flattened source, then where(mask, gathered, self) (ember ops, so the gradient is
    the op's: zero at masked positions of self, picked positions of source)."""
    from .._tensor import _all_examples, _wrap_any

    x, source, mask = args
    b = level.size
    shape = tuple(x.shape)
    bm = _bt(mask, level)
    if bm is not None:
        pm = _pad(bm._phys, bm.ndim, len(shape)).expand((b,) + shape)
    else:
        try:
            arr = np.broadcast_to(mask, shape)
        except ValueError:
            return NotImplemented  # the op's own broadcast error
        pm = _wrap_any(_B.ascontiguousarray(np.broadcast_to(arr, (b,) + shape)))
    counts = _all_examples(pm).reshape(b if pm.ndim else 1, -1).sum(-1)
    m = source.numel()
    if counts.size and counts.max() > m:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    px, ps = _batched_all(level, (x, source))
    if m == 0:
        return level.wrap(px.clone())
    flat = pm.reshape(b, -1).long()
    pos = (flat.cumsum(1) - 1).clamp(0, m - 1)
    picked = ps.reshape(b, -1).gather(1, pos).reshape((b,) + shape)
    return level.wrap(indexing.Where.apply(picked, px, pm))


def _index_put_rule(level, cls, args):
    """index_put with an unbatched key of adjacent index arrays: the batch dim is one more leading slice (NumPy
    keeps the indexed dims in place); batched values get unit dims up to the indexed region's rank."""
    x, values, key, accumulate = args
    if any(_bt(k, level) is not None for k in key if type(k) is _Placeholder):
        return NotImplemented
    adv = [i for i, k in enumerate(key) if _B.is_array(k)]
    if adv and adv[-1] - adv[0] + 1 != len(adv):
        return NotImplemented
    bv = _bt(values, level)
    px = _batched_all(level, (x,))[0]  # (the op writes into a copy of it)
    pv = values
    if bv is not None:
        region = np.shape(np.empty(tuple(x.shape), np.bool_)[key])
        pv = _pad(bv._phys, bv.ndim, len(region))
    return level.wrap(cls.apply(px, pv, (slice(None),) + tuple(key), accumulate))


def _masked_select_rule(level, cls, args):
    """An unbatched mask selects as many elements from every example: a leading slice, then the mask."""
    x, mask = args
    bx = _bt(x, level)
    if bx is None or _bt(mask, level) is not None:
        return NotImplemented  # (a batched mask: counts may differ per example, as torch, once per example)
    try:
        shape = np.broadcast_shapes(tuple(x.shape), np.shape(mask))
    except ValueError:
        return NotImplemented  # the op's own broadcast error
    px = _pad(bx._phys, x.ndim, len(shape)).expand((level.size,) + shape)
    return level.wrap(px[(slice(None), np.broadcast_to(mask, shape))])


_INDEX_FILL_TENSOR = _along(2, 3, False, (0,))


def _index_fill_tensor_rule(level, cls, args):
    """A batched 0-d value: where(the filled slices, value, self) at the level (same values and gradients)."""
    x, value, dim, idx = args
    if _bt(value, level) is None:
        return _INDEX_FILL_TENSOR(level, cls, args)
    if type(idx) is _Placeholder:
        return NotImplemented
    from .._tensor import _wrap_any

    shape = tuple(x.shape)
    mask = np.zeros(shape if shape else (1,), np.bool_)
    d = _wrap_dim(dim, len(shape))
    mask[(slice(None),) * d + (_B.asarray(idx),)] = True
    saved = _mode.interpose
    _mode.interpose = level
    try:
        return indexing.Where.apply(value.to(x.dtype), x, _wrap_any(mask.reshape(shape)))
    finally:
        _mode.interpose = saved


def _register_late() -> None:
    from ..ops import conv, decompositions as dec, grid_sample, pixel_shuffle, pooling, resample

    RULES[conv.Convolution] = _conv_rule
    for c in (conv.Im2Col, conv.Col2Im, pixel_shuffle.PixelShuffle, pixel_shuffle.PixelUnshuffle,
              pooling._MaxPoolWithIndices, pooling._AvgPool, pooling._AdaptiveMaxPool):
        RULES[c] = _fold((0,))
    for c in (grid_sample._GridSampler, grid_sample.TapGather, grid_sample.TapScatter, pooling._MaxUnpool,
              pooling._FractionalMaxPool):
        RULES[c] = _fold((0, 1))  # both tensors lead with the sample dim
    RULES[resample._AxisMap] = _fold((0, 1))
    RULES[resample.ConstantPadNd] = _passthrough  # pads trailing dims
    RULES[indexing.Copy] = _EW  # src broadcast to self's shape, cast to its dtype
    for c in (gather_scatter.Scatter, gather_scatter.ScatterAdd, gather_scatter.ScatterReduce, gather_scatter.ScatterReduceLegacy):
        RULES[c] = _along(2, 3, True, (0, 1))
    RULES[gather_scatter.ScatterValue] = _along(1, 2, True, (0,))
    RULES[gather_scatter.IndexAdd] = RULES[gather_scatter.IndexCopy] = _along(2, 3, False, (0, 1))
    RULES[gather_scatter.IndexFill] = _along(1, 2, False, (0,))
    RULES[gather_scatter.IndexFillTensor] = _index_fill_tensor_rule
    from ..ops import solve, statistics

    RULES[solve.LuPivots] = RULES[solve.LuPermutation] = _passthrough  # any leading batch dims
    for c in (statistics.Mode, statistics.NanmedianDim):
        RULES[c] = _dim_rule(1, "one")
        _KEEPDIM_POS[c] = 2
    RULES[nn_ops.Embedding] = _embedding_rule
    RULES[gather_scatter.IndexSelect] = _shift_attr(1)
    RULES[sorting.SearchSorted] = _searchsorted_rule
    RULES[masked.MaskedFillTensor] = _masked_fill_tensor_rule
    RULES[reduction.MedianAll] = _median_all_rule
    RULES[gather_scatter.Take] = _take_rule
    RULES[triangular.DiagEmbed] = _diag_embed_rule
    RULES[linalg.LinalgCross] = _cross_rule
    RULES[dec.LinalgSolveEx] = _solve_rule
    RULES[masked.MaskedScatter] = _masked_scatter_rule
    RULES[indexing.IndexPutFunctional] = _index_put_rule
    RULES[masked.MaskedSelect] = _masked_select_rule
    RULES[rearrange.Rot90] = _shift_attr(2)
    for c in (dec.LinalgInvEx, dec.LinalgDet, dec.LinalgSlogdet, dec.LinalgCholeskyEx, dec.LinalgQr, dec.LinalgEigh,
              dec.LinalgSvd, dec.LinalgEig):
        RULES[c] = _linalg_rule
    _CACHE.clear()


_register_late()
