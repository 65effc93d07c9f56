"""vmap: a function of one example run on a batch, through a level that sees every op (NOTE [vmap]).

# NOTE [vmap]
``vmap(f)(x)`` pushes a ``VmapLevel`` (see NOTE [interposition]) and hands ``f`` a ``BatchedTensor``: a
Tensor whose metadata (shape, dim, numel, len, dtype ...) is the LOGICAL value of one example, while the
values live in ``_phys``, an ordinary tensor (or a BatchedTensor of an outer level) with the batch
dimension first. Its ``_data`` is a read-only zero-strided placeholder of the logical shape: code that
reads shapes works unchanged, code that reads values raises instead of silently mixing examples.
Every op reaches ``VmapLevel.process``: ops without a batched argument of this level go straight to
the level below; otherwise the op's batching rule (``_batch_rules.RULES``, keyed by op class) runs
with the level below active and produces physical results, wrapped again. An op without a rule runs
once per example and the results are stacked; such fallbacks are counted per op
(``vmap_fallback_counts``). The physical results carry ordinary reverse-mode graphs, so autograd through
a vmapped function needs nothing special, and backward formulas (written in ember ops) run batched when
the gradients flowing in are BatchedTensors.
"""
from __future__ import annotations

import functools
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor
from ..autograd import _interpose
from ..autograd.grad_mode import _mode
from . import _pytree as P

__all__ = ["vmap", "BatchedTensor", "VmapLevel", "vmap_fallback_counts", "reset_vmap_fallback_counts"]


class _Placeholder(np.ndarray):
    """Logical-shaped stand-in for a batched tensor's values: metadata reads work, value reads raise."""

    def __array_ufunc__(self, *args, **kwargs):
        raise _values_error()

    def __array_function__(self, func, types, args, kwargs):
        if func in _METADATA_FUNCS:  # shape arithmetic only
            return super().__array_function__(func, types, args, kwargs)
        if func in _LIKE_FUNCS:  # zeros_like(x) ...: an unbatched array of the logical shape (same values)
            return super().__array_function__(func, types, args, dict(kwargs, subok=False))
        raise _values_error()

    def __getitem__(self, key):
        raise _values_error()

    def __bool__(self):
        raise _values_error()

    def item(self, *args):
        raise _values_error()

    def tolist(self):
        raise _values_error()

    def astype(self, dtype, *args, **kwargs):
        if np.dtype(dtype) == self.dtype and not kwargs.get("copy", True):
            return self  # a no-op conversion keeps the link to the batched tensor
        raise _values_error()

    def copy(self, *args, **kwargs):
        raise _values_error()

    __float__ = __int__ = __index__ = __bool__


_METADATA_FUNCS = frozenset((np.reshape, np.shape, np.ndim, np.size, np.result_type, np.broadcast_to,
                             np.broadcast_shapes, np.shares_memory, np.may_share_memory))


_LIKE_FUNCS = frozenset((np.empty_like, np.zeros_like, np.ones_like, np.full_like))


def _values_error() -> RuntimeError:
    return RuntimeError("vmap: this function reads the values of a batched tensor outside an op, which vmap "
                        "cannot batch. Please rewrite it with tensor operations or call it outside vmap.")


_BUFFERS: dict = {}


def _placeholder(bt: "BatchedTensor", shape: tuple, npdtype) -> _Placeholder:
    buf = _BUFFERS.get(npdtype)
    if buf is None:
        buf = _BUFFERS[npdtype] = bytes(max(np.dtype(npdtype).itemsize, 1))
    arr = _Placeholder(shape, npdtype, buffer=buf, strides=(0,) * len(shape))
    arr.bt = weakref.ref(bt)
    return arr


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: one example's logical view of a physical batch (see NOTE [vmap])."""

    __slots__ = ("_phys", "_lvl")

    def detach(self) -> "BatchedTensor":
        return _wrap_batched(self._phys.detach(), self._lvl)

    def _set_requires_grad(self, requires_grad: bool, kinds: str) -> "BatchedTensor":
        self._phys._set_requires_grad(requires_grad, kinds)
        self._requires_grad = self._phys._requires_grad
        return self

    @property
    def data(self) -> "BatchedTensor":
        return self.detach()

    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                           "bug report.")

    def _control_flow(self, *args):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please file an issue at "
                           "https://github.com/pytorch/pytorch/issues .")

    __bool__ = __float__ = __int__ = __index__ = _control_flow

    def tolist(self):
        raise RuntimeError("vmap: It looks like you're calling .tolist() on a Tensor; vmap cannot batch reading "
                           "values into Python.")

    def numpy(self, *, force: bool = False):
        raise RuntimeError("vmap: It looks like you're calling .numpy() on a Tensor; vmap cannot batch reading "
                           "values into NumPy.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def _inplace_batched(self, fn, args, kwargs) -> "BatchedTensor":
        """``self.op_(...)``: the op out of place at this level, its value copied into the physical tensor. As in
        eager mode the op sees an alias of ``self``, given its own copy of the old values if the op saved it."""
        from ..ops import _inplace as _IP

        alias = _alias_batched(self)
        out = fn(alias, *args, **kwargs)
        if tuple(out.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(out.shape)}")
        _IP._protect_saved(_innermost(out)._grad_fn, _innermost(alias))
        return self._write(out, None)

    def stride(self, dim: int | None = None):
        """One example's strides (its physical value's, without the batch dim), as torch reports them."""
        st = tuple(self._phys.stride())[1:]
        if dim is None:
            return st
        from .._tensor import _wrap_dim_strict

        return st[_wrap_dim_strict(dim, len(st))]

    def storage_offset(self) -> int:
        """The physical value's storage offset (the first example's), as torch's vmap reports it."""
        return self._phys.storage_offset()

    def is_contiguous(self, memory_format=None) -> bool:
        expect = 1
        for n, st in zip(reversed(self.shape), reversed(self.stride())):
            if n != 1 and st != expect:
                return False
            expect *= n
        return True

    def _rewrap(self, phys: Tensor) -> "BatchedTensor":
        """``phys`` (batch dim first, like ``_phys``) as a tensor of this one's level."""
        return _wrap_batched(phys, self._lvl)

    def _take_over(self, new: "BatchedTensor") -> "BatchedTensor":
        """In-place view ops (``t_``, ``transpose_`` ...): this tensor becomes ``new``, a view of it."""
        bt = batched_at(new, self._lvl)
        if bt is None:
            raise RuntimeError("vmap: an in-place view op changed which levels a batched tensor is batched at")
        self._phys = bt._phys
        self._data = _placeholder(self, bt._data.shape, bt._data.dtype)
        self._requires_grad, self._grad_fn, self._output_nr = bt._requires_grad, bt._grad_fn, bt._output_nr
        return self

    def zero_(self) -> "BatchedTensor":
        return self._write(0, None)

    def fill_(self, value) -> "BatchedTensor":
        if isinstance(value, Tensor) and value.dim():
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               f"dimensions.")
        return self._write(value, None)

    def _setitem_batched(self, key, value) -> None:
        """``self[key] = value``: the physical value written at the key with the batch dim in front. Index tensors
        must be adjacent (so NumPy keeps their result dims in place); batched ones must also lead the key, and
        join an arange over the batch (each example writes its own slice)."""
        if not isinstance(key, tuple):
            key = (key,)
        adv = [i for i, k in enumerate(key) if isinstance(k, (Tensor, list)) or _B.is_array(k)]
        if adv and adv[-1] - adv[0] + 1 != len(adv):
            raise RuntimeError("vmap: indexed assignment into a batched tensor with index tensors separated by "
                               "slices is not supported")
        level = self._lvl
        batched = [i for i in adv if isinstance(key[i], Tensor) and _is_batched_at(key[i], level)]
        if not batched:
            return self._write(value, (slice(None),) + key)
        if adv[0] != 0 or any(key[i]._dtype.name == "bool" for i in batched):
            raise RuntimeError("vmap: indexed assignment with batched index tensors is supported only for integer "
                               "indices leading the key")
        nd = max(np.ndim(k) for k in (key[i] for i in adv))
        ar = np.arange(self._lvl.size).reshape((self._lvl.size,) + (1,) * nd)
        phys_key = tuple(batched_at(k, level)._phys if i in batched else k for i, k in enumerate(key))
        self._write(value, (ar,) + phys_key)

    def _write(self, value, key) -> "BatchedTensor":
        level = self._lvl
        saved = _mode.interpose
        _mode.interpose = level.below
        try:
            phys = self._phys
            target = phys if key is None else phys[key]
            vb = batched_at(value, level) if isinstance(value, Tensor) else None
            if vb is not None:
                src = vb._phys
                src = src.reshape((src.shape[0],) + (1,) * (target.dim() - src.dim()) + tuple(src.shape[1:]))
            else:
                src = value
            if key is not None:
                phys[key] = src
            elif isinstance(src, Tensor):
                phys.copy_(src)
            else:
                phys.fill_(src)
        finally:
            _mode.interpose = saved
        self._requires_grad, self._grad_fn, self._output_nr = phys._requires_grad, phys._grad_fn, phys._output_nr
        return self

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"BatchedTensor(lvl={self._lvl.depth}, bdim=0, value=\n{self._phys!r}\n)"

    __str__ = __repr__


def _alias_batched(t: Tensor) -> Tensor:
    """A tensor with ``t``'s values, graph position and batching whose innermost physical tensor is a new object."""
    if type(t) is BatchedTensor:
        return _wrap_batched(_alias_batched(t._phys), t._lvl)
    from ..ops._inplace import _alias

    return _alias(t)


def _innermost(t: Tensor) -> Tensor:
    while type(t) is BatchedTensor:
        t = t._phys
    return t


def _wrap_batched(phys: Tensor, level: "VmapLevel") -> BatchedTensor:
    """``phys`` (batch dim first) as a BatchedTensor of ``level``."""
    t = object.__new__(BatchedTensor)
    t._data = _placeholder(t, phys._data.shape[1:], phys._data.dtype)
    t._dtype = phys._dtype
    t._requires_grad = phys._requires_grad
    t._grad_fn = phys._grad_fn
    t._output_nr = phys._output_nr
    t._grad = t._vc = t._base = t._acc = t._ext = None
    t._phys = phys
    t._lvl = level
    return t


def batched_at(x, level: "VmapLevel") -> BatchedTensor | None:
    """``x`` (a tensor or a placeholder array) as a BatchedTensor of ``level``, or None."""
    if type(x) is BatchedTensor:
        return x if x._lvl is level else None
    if type(x) is _Placeholder:
        bt = x.bt()
        return bt if bt is not None and bt._lvl is level else None
    return None


# ----------------------------------------------------------------------------- fallback counting
_FALLBACKS: dict[str, int] = {}
_WARNED: set = set()


def vmap_fallback_counts() -> dict[str, int]:
    """How many times each op ran once per example under vmap (no batching rule), by node name."""
    return dict(_FALLBACKS)


def reset_vmap_fallback_counts() -> None:
    """Forget the fallback counts (and warn again on the next fallback of each op)."""
    _FALLBACKS.clear()
    _WARNED.clear()


def _note_fallback(name: str) -> None:
    _FALLBACKS[name] = _FALLBACKS.get(name, 0) + 1
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{name}. ember runs it once per example (ember.func.vmap_fallback_counts() counts these).",
                      UserWarning, stacklevel=4)


class VmapLevel(_interpose.Level):
    """One active vmap: batch size, randomness mode, nesting depth."""

    __slots__ = ("size", "randomness", "depth")

    def __init__(self, size: int, randomness: str, depth: int) -> None:
        self.size, self.randomness, self.depth = size, randomness, depth

    def process(self, cls, args: tuple):
        random = cls in _batch_rules.RANDOM
        for a in args:
            t = type(a)
            if t is BatchedTensor:
                if a._lvl is self:
                    break
            elif t is _Placeholder:
                if batched_at(a, self) is not None:
                    break
            elif t is tuple and any(batched_at(k, self) is not None for k in a if type(k) is _Placeholder):
                break  # a batched index inside a key
        else:
            if random:
                return _batch_rules.random_rule(self, cls, args, False)
            return _interpose.call_below(self, cls, args)
        saved = _mode.interpose
        _mode.interpose = self.below
        try:
            if random:
                return _batch_rules.random_rule(self, cls, args, True)
            rule = _batch_rules.rule_for(cls)
            if rule is not None:
                out = rule(self, cls, args)
                if out is not NotImplemented:
                    return out
            return self.fallback(cls, args)
        finally:
            _mode.interpose = saved

    def process_function(self, cls, args: tuple, kwargs: dict):
        """A custom ``autograd.Function`` under vmap: once per example (its forward and backward are opaque)."""
        saved = _mode.interpose
        _mode.interpose = self.below
        try:
            if not any(batched_at(a, self) is not None for a in args):
                return cls.apply(*args, **kwargs)
            _note_fallback(cls.__name__ + "(autograd.Function)")
            from ..ops.shape import stack

            outs = [cls.apply(*[a._phys[k] if batched_at(a, self) is not None else a for a in args], **kwargs)
                    for k in range(self.size)]
            if isinstance(outs[0], tuple):
                return tuple(self.wrap(stack([o[j] for o in outs])) for j in range(len(outs[0])))
            return self.wrap(stack(outs))
        finally:
            _mode.interpose = saved

    def wrap(self, out):
        """Physical result(s) of an op (batch dim first) as BatchedTensors of this level."""
        if type(out) is tuple:
            return tuple(_wrap_batched(o, self) for o in out)
        if isinstance(out, tuple):  # named tuples of multi-output ops
            return type(out)(*[_wrap_batched(o, self) for o in out])
        return _wrap_batched(out, self)

    def fallback(self, cls, args: tuple):
        """Run ``cls`` once per example (the level below active) and stack the results."""
        _note_fallback(cls.__name__)
        from ..ops.shape import stack

        n = self.size

        def example(x, k):
            a = batched_at(x, self)
            if a is None:
                return tuple(example(y, k) for y in x) if type(x) is tuple else x
            part = a._phys[k] if n else _zeros_sample(a)
            return part if isinstance(x, Tensor) else part._data

        outs = [cls.apply(*[example(a, k) for a in args]) for k in range(max(n, 1))]
        first = outs[0]
        if isinstance(first, tuple):
            cols = [stack([o[j] for o in outs]) for j in range(len(first))]
            res = tuple(c if n else c[:0] for c in cols)
            return self.wrap(type(first)(*res) if type(first) is not tuple else res)
        res = stack(outs)
        return self.wrap(res if n else res[:0])


def _zeros_sample(a: BatchedTensor) -> Tensor:
    from .._factories import zeros

    return zeros(a._phys.shape[1:], dtype=a._dtype)


def active_levels() -> list[VmapLevel]:
    """The active vmap levels, outermost first."""
    out = []
    lvl = _mode.interpose
    while lvl is not None:
        if type(lvl) is VmapLevel:
            out.append(lvl)
        lvl = lvl.below
    out.reverse()
    return out


# ----------------------------------------------------------------------------- moving between levels
def to_level(x: Tensor, level: VmapLevel) -> BatchedTensor:
    """``x`` batched at ``level`` (expanded along a new batch dim if it is not); runs under ``level``."""
    bt = batched_at(x, level) if type(x) is BatchedTensor else None
    if bt is not None:
        return bt
    saved = _mode.interpose
    _mode.interpose = level.below
    try:
        phys = x.unsqueeze(0).expand((level.size,) + tuple(x.shape))
    finally:
        _mode.interpose = saved
    return _wrap_batched(phys, level)


def lift(x: Tensor, levels: list[VmapLevel]) -> Tensor:
    """``x`` batched at every level of ``levels`` (outermost first), the current levels being active."""
    for lvl in levels:
        if not _is_batched_at(x, lvl):
            x = _lift_one(x, lvl)
    return x


def _is_batched_at(x, level) -> bool:
    while type(x) is BatchedTensor:
        if x._lvl is level:
            return True
        x = x._phys
    return False


def _lift_one(x: Tensor, level: VmapLevel) -> Tensor:
    """Make ``x`` batched at ``level`` while keeping its batching at the (newer) levels it already has."""
    if type(x) is BatchedTensor and x._lvl.depth > level.depth:
        return _wrap_batched(_lift_one(x._phys, level), x._lvl)
    return to_level(x, level)


def unwrap_all(x: Tensor, levels: list[VmapLevel]) -> Tensor:
    """``x`` lifted to ``levels`` with their wrappers removed: their batch dims lead (outermost first); the
    wrappers of newer levels stay, over this physical value."""
    return _strip(lift(x, levels), set(map(id, levels)))


def _strip(x: Tensor, ids: set) -> Tensor:
    if type(x) is not BatchedTensor:
        return x
    inner = _strip(x._phys, ids)
    if id(x._lvl) in ids:
        return inner
    # a newer level stays a wrapper: its batch dim leads, before the stripped (older) ones
    return _wrap_batched(_movedim(inner, _count_stripped(x._phys, ids), 0), x._lvl)


def _count_stripped(x, ids) -> int:
    n = 0
    while type(x) is BatchedTensor:
        n += id(x._lvl) in ids
        x = x._phys
    return n


def _movedim(t: Tensor, src: int, dst: int) -> Tensor:
    """``t`` with logical dim ``src`` moved to ``dst``, done on the physical values under every wrapper."""
    if src == dst:
        return t
    if type(t) is BatchedTensor:
        return _wrap_batched(_movedim(t._phys, src + 1, dst + 1), t._lvl)
    saved = _mode.interpose
    _mode.interpose = _below_vmaps()  # physical values: dual levels (which sit under the vmaps) still see them
    try:
        return t.movedim(src, dst)
    finally:
        _mode.interpose = saved


def _below_vmaps():
    """The level under the oldest active vmap level (a dual level or None): what sees physical values."""
    lvl = found = _mode.interpose
    while lvl is not None:
        if type(lvl) is VmapLevel:
            found = lvl.below
        lvl = lvl.below
    return found


def rewrap_all(g: Tensor, levels: list[VmapLevel]) -> Tensor:
    """Inverse of ``unwrap_all``: ``g`` physical w.r.t. ``levels`` (maybe wrapped by newer levels) as a
    tensor batched at ``levels`` again."""
    if type(g) is BatchedTensor and g._lvl not in levels:
        inner = _movedim(g._phys, 0, len(levels))
        return _wrap_batched(rewrap_all(inner, levels), g._lvl)
    for lvl in levels:
        g = _wrap_batched(g, lvl)
    return g


# ----------------------------------------------------------------------------- vmap itself
def _fn_name(func) -> str:
    return getattr(func, "__name__", repr(func))


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a dimension of its inputs (``in_dims``), results stacked at ``out_dims``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if chunk_size is not None:
            return _chunked(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapped


def _chunked(func, in_dims, out_dims, randomness, chunk_size: int, args, kwargs):
    """vmap over slices of at most ``chunk_size`` examples, the results concatenated along ``out_dims``."""
    from ..ops.shape import cat

    leaves, spec, dims = _check_in_dims(func, in_dims, args)
    size = next((x.shape[d] for x, d in zip(leaves, dims) if d is not None and isinstance(x, Tensor)), None)
    if size is None or size <= chunk_size:
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)
    parts = []
    for lo in range(0, size, chunk_size):
        chunk = [x.narrow(d % x.dim(), lo, min(chunk_size, size - lo)) if d is not None and isinstance(x, Tensor)
                 else x for x, d in zip(leaves, dims)]
        parts.append(_vmap_call(func, in_dims, out_dims, randomness, P.tree_unflatten(chunk, spec), kwargs))
    out_leaves = [P.tree_flatten(p)[0] for p in parts]
    out_spec = P.tree_flatten(parts[0])[1]
    odims = P.broadcast_prefix(out_dims, parts[0], out_spec)
    joined = [leaf[0] if d is None else cat(list(leaf), d) for leaf, d in zip(zip(*out_leaves), odims)]
    return P.tree_unflatten(joined, out_spec)


def _check_in_dims(func, in_dims, args) -> list:
    name = _fn_name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         f"trying to vmap over a function with no inputs. The latter is unsupported.")
    return _leaves_and_dims(args, in_dims, f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)", "in")


def _leaves_and_dims(tree, dims, call: str, side: str) -> tuple:
    """The leaves of ``tree`` (vmap's inputs or outputs: ``side`` "in" or "out"), its structure and each leaf's dim
    (``dims`` broadcast as a prefix of that structure); torch's error for ``dims`` of another structure."""
    leaves, spec = P.tree_flatten(tree)
    per_leaf = P.broadcast_prefix(dims, tree, spec)
    if per_leaf is None:
        raise ValueError(f"{call}: {side}_dims is not compatible with the structure of `{side}puts`. {side}_dims has "
                         f"structure {P.tree_flatten(dims)[1]} but {side}puts has structure {spec}.")
    return leaves, spec, per_leaf


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    name = _fn_name(func)
    leaves, spec, dims = _check_in_dims(func, in_dims, args)
    size = None
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be int or None "
                             f"for each input, got {d}.")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        nd = x.dim()
        if not -nd <= d < nd:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {nd} so expected in_dim to satisfy "
                             f"-{nd} <= in_dim < {nd}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                         f"mapped over a dimension (in_dims all None).")
    size = sizes[0]
    if any(s != size for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    depth = len(active_levels()) + 1
    level = VmapLevel(size, randomness, depth)
    # inputs move their batch dim first under the current (outer) levels, before ours is pushed
    new_leaves = []
    for x, d in zip(leaves, dims):
        if d is None or not isinstance(x, Tensor):
            new_leaves.append(x)
        else:
            new_leaves.append(_wrap_batched(x.movedim(d, 0) if d % x.dim() else x, level))
    _interpose.push(level)
    try:
        out = func(*P.tree_unflatten(new_leaves, spec), **kwargs)
    finally:
        _interpose.pop(level)
    return _unwrap_out(func, out, out_dims, level)


def _unwrap_out(func, out, out_dims, level: VmapLevel):
    name = _fn_name(func)
    leaves, spec, dims = _leaves_and_dims(out, out_dims, f"vmap({name}, ..., out_dims={out_dims})(<inputs>)", "out")
    res = []
    for x, d in zip(leaves, dims):
        if d is None:
            if isinstance(x, Tensor) and batched_at(x, level) is not None:
                raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): can not return a BatchedTensor "
                                 f"when out_dim is None")
            res.append(x)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you "
                             f"mean to set out_dims= to None for output?")
        bt = batched_at(x, level) if type(x) is BatchedTensor else None
        if bt is not None:
            phys = bt._phys
        else:
            phys = x.unsqueeze(0).expand((level.size,) + tuple(x.shape))
        res.append(phys.movedim(0, d) if d != 0 else phys)
    return P.tree_unflatten(res, spec)


from . import _batch_rules  # noqa: E402 - the rules use the classes above
