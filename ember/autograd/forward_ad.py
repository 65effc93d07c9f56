"""Forward-mode AD: dual tensors whose tangents follow every op (torch.autograd.forward_ad).

# NOTE [forward AD]
A dual level is an interposition ``Level`` (NOTE [interposition]). A tangent lives on its tensor in
``_ext["fw"]`` (a dict level -> tangent), so ordinary tensors pay nothing. ``process(cls, args)`` runs the op
with the levels below active; when a tensor input has a tangent at this level it adds output tangents from
the op's forward formula (NOTE [forward formulas] in ember/ops/_op.py):
  - ``cls.jvp(args, out, tangents)`` where the op declares one, next to its backward;
  - otherwise one derived from the backward formula (double vjp): ``g(u) = J^T u`` is linear in the dummy
    cotangent ``u``, so ``J t = d<g(u), t>/du``, computed by ember's own engine.
Formulas run with the levels below this one active and in the caller's grad mode, so tangents are themselves
differentiable (reverse-over-forward) and outer levels see them (forward-over-forward). Integer and
non-differentiable outputs get no tangent. In-place ops write the new tangent into the target's tangent
(``_after_inplace``), so a view's tangent, itself a view of its base's tangent, updates the base's too.
Exiting a level drops every tangent it attached. The public API allows one level at a time, as torch does;
the machinery nests (``_DualLevel`` objects are independent), for transforms built on top.
"""
from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from . import _interpose
from ._interpose import Level, call_below
from .function import _FunctionMeta, _ctx_sink
from .graph import SavedTensor
from .grad_mode import _mode, enable_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class _State(threading.local):
    level = None  # the level entered through this module's public API


_state = _State()


def _tangent(t: Tensor, level) -> Tensor | None:
    ext = t._ext
    if ext is None:
        return None
    fw = ext.get("fw")
    return None if fw is None else fw.get(level)


def _set_tangent(t: Tensor, level: "_DualLevel", tangent: Tensor) -> None:
    ext = t._ext
    if ext is None:
        ext = t._ext = {}
    fw = ext.get("fw")
    if fw is None:
        fw = ext["fw"] = {}
    if level not in fw:
        duals = level.duals
        duals.append(weakref.ref(t))
        if len(duals) > level.limit:  # a long loop inside one level: forget the tensors already gone
            duals[:] = [r for r in duals if r() is not None]
            level.limit = max(1024, 2 * len(duals))
    fw[level] = tangent


def _fit(tangent: Tensor, out: Tensor) -> Tensor:
    """``tangent`` with the shape and dtype of its primal ``out`` (broadcast inputs, promoted dtypes)."""
    if tangent._data.shape != out._data.shape:
        tangent = tangent.expand(out._data.shape)
    if tangent._dtype is not out._dtype:
        tangent = tangent.to(out._dtype)
    return tangent


class _DualLevel(Level):
    """One forward-AD level: adds output tangents to every op that sees a tangent of this level."""

    __slots__ = ("index", "duals", "limit")

    def __init__(self, index: int) -> None:
        self.index = index
        self.duals: list = []  # weak references to the tensors holding a tangent of this level
        self.limit = 1024

    def process(self, cls, args: tuple):
        if isinstance(cls, _FunctionMeta):
            return self._function(cls, args)
        nin = len(args) - cls.nattrs
        tangents = None
        for i in range(nin):
            a = args[i]
            if isinstance(a, Tensor) and a._ext is not None:
                t = _tangent(a, self)
                if t is not None:
                    if tangents is None:
                        tangents = [None] * nin
                    tangents[i] = t
        out = call_below(self, cls, args)
        if tangents is not None:
            self._attach(cls, args, out, tuple(tangents))
        return out

    def _attach(self, cls, args: tuple, out, tangents: tuple) -> None:
        outs = out if type(out) is tuple else (out,)
        diff = cls.differentiable_outputs
        wanted = [i for i, o in enumerate(outs)
                  if isinstance(o, Tensor) and o._dtype._differentiable and (diff is None or i in diff)]
        if not wanted:
            return
        saved = _mode.interpose
        _mode.interpose = self.below
        try:
            if cls.jvp is None:
                res = _double_vjp(cls, args, wanted, tangents)
            else:
                res = cls.jvp(args, out, tangents)
                res = res if type(res) is tuple else (res,)
            for i in wanted:
                t = res[i] if i < len(res) else None
                o = outs[i]
                if t is None:
                    t = _zeros_like(o)
                else:
                    t = _fit(t, o)
                    if not cls.is_view and _aliases(t, tangents):  # e.g. x + 1: a tangent of its own
                        t = t.clone()
                _set_tangent(o, self, t)
                if o._grad_fn is not None:
                    _keep_saved_output(o)
        finally:
            _mode.interpose = saved

    def _function(self, cls, args: tuple):
        """A custom Function: its ``jvp(ctx, *tangents)`` gives the output tangents (torch's rules)."""
        tangents = [(_tangent(a, self) if a._ext is not None else None) if isinstance(a, Tensor) else None
                    for a in args]
        if all(t is None for t in tangents):
            return call_below(self, cls, args)
        prev = _ctx_sink.ctxs
        _ctx_sink.ctxs = []
        try:
            out = call_below(self, cls, args)
            ctx = _ctx_sink.ctxs[0]
        finally:
            _ctx_sink.ctxs = prev
        saved = _mode.interpose
        _mode.interpose = self.below
        try:
            grads = [t if t is not None else (_zeros_like(a) if isinstance(a, Tensor) else None)
                     for a, t in zip(args, tangents)]
            keep = getattr(ctx, "_saved", None)
            ctx._saved = tuple(getattr(ctx, "_to_save_fwd", ()))
            try:
                res = cls.jvp(ctx, *grads)
            finally:
                ctx._saved = keep
            outs = out if isinstance(out, tuple) else (out,)
            res = res if isinstance(res, tuple) else (res,)
            for o, t in zip(outs, res):
                if isinstance(o, Tensor) and o._dtype._differentiable and t is not None:
                    _set_tangent(o, self, _fit(t, o))
                    if o._grad_fn is not None:
                        _keep_saved_output(o)
        finally:
            _mode.interpose = saved
        return out

    def _clear(self) -> None:
        for r in self.duals:
            t = r()
            if t is not None and t._ext is not None:
                fw = t._ext.get("fw")
                if fw is not None:
                    fw.pop(self, None)
                    if not fw:
                        del t._ext["fw"]
        self.duals = []


def _aliases(t: Tensor, tangents: tuple) -> bool:
    data = t._data
    for tin in tangents:
        if tin is not None and np.may_share_memory(data, tin._data):
            return True
    return False


def _keep_saved_output(out: Tensor) -> None:
    """A node that saved its own output keeps that tensor (with its tangent) instead of only the array, so a
    backward run inside the level sees the tangent (forward-over-reverse). This makes a reference cycle
    (node -> output -> node) that the garbage collector frees: only under forward AD."""
    saved = out._grad_fn._saved
    if not saved or isinstance(saved, str):
        return
    for s in saved:
        if type(s) is SavedTensor and s._is_output and s._data is out._data:
            s._is_output = False
            s._tensor = out
            s._data = None


def _zeros_like(t: Tensor) -> Tensor:
    from .._factories import zeros_like

    return zeros_like(t)


def _tangent_slot(t: Tensor, level: "_DualLevel") -> Tensor:
    """``t``'s tangent at ``level``, made zero if missing; for a view, a view of its base's tangent."""
    ts = _tangent(t, level)
    if ts is not None:
        return ts
    base = t._base
    if base is not None and base._data.flags.c_contiguous:
        from ..ops._inplace import view_geometry
        from ..ops.indexing import AsStrided

        tb = _tangent_slot(base, level)
        if tb._data.flags.c_contiguous and tb._data.shape == base._data.shape:
            offset, shape, strides = view_geometry(t._data, base._data)[:3]
            item = tb._data.itemsize
            arr = np.lib.stride_tricks.as_strided(tb._data.reshape(-1)[offset:], shape, [s * item for s in strides])
            ts = AsStrided.apply(tb, view_geometry(arr, tb._data), arr)
            _set_tangent(t, level, ts)
            return ts
    ts = _zeros_like(t)
    _set_tangent(t, level, ts)
    return ts


def _after_inplace(target: Tensor, fw: dict, zero=()) -> None:
    """``target`` was overwritten by a result whose tangents are ``fw``: its tangents take their values (those at
    the levels in ``zero`` become zero)."""
    for level, t_out in [*fw.items(), *((lv, None) for lv in zero)]:
        saved = _mode.interpose
        _mode.interpose = level.below
        try:
            ts = _tangent_slot(target, level)
            if t_out is None:
                ts.zero_()
            elif ts is not t_out:
                ts.copy_(t_out)
        finally:
            _mode.interpose = saved


def _after_setitem(target: Tensor, key, value) -> None:
    """``target[key] = value``: the same write on the tangents (zeros where ``value`` has none)."""
    levels = set(target._ext.get("fw", ()) if target._ext is not None else ())
    if isinstance(value, Tensor) and value._ext is not None:
        levels.update(value._ext.get("fw", ()))
    for level in levels:
        saved = _mode.interpose
        _mode.interpose = level.below
        try:
            tv = _tangent(value, level) if isinstance(value, Tensor) else None
            _tangent_slot(target, level)[key] = tv if tv is not None else 0.0
        finally:
            _mode.interpose = saved


def _double_vjp(cls, args: tuple, wanted: list, tangents: tuple) -> list:
    """Output tangents from the backward formula: J t = d<J^T u, t>/du (u a dummy cotangent)."""
    from . import grad as _grad

    # the tangent needs a graph only if something outside can differentiate it (not the private u and inputs)
    differentiable = _mode.grad_enabled and any(
        isinstance(a, Tensor) and a._requires_grad for a in (*args, *tangents))
    with enable_grad():
        new = list(args)
        xs, ts = [], []
        for i, t in enumerate(tangents):
            if t is None or not args[i]._dtype._differentiable:
                continue
            a = args[i]
            # an input of its own: a view of ``a`` keeps reverse mode flowing to ``a``'s history and the tangents
            # of outer dual levels (forward over forward); made a leaf of its own when ``a`` has no history
            x = _view_op().apply(a, a._data.shape)
            if not a._requires_grad:
                x.requires_grad_()
            new[i] = x
            xs.append(x)
            ts.append(t)
        out = cls.apply(*new)
        outs = out if type(out) is tuple else (out,)
        res: list = [None] * len(outs)
        ys = [i for i in wanted if outs[i]._requires_grad]
        if not ys or not xs:
            return res
        us = [_zeros_like(outs[i]).requires_grad_() for i in ys]
        try:
            gs = _grad([outs[i] for i in ys], xs, us, create_graph=True, allow_unused=True)
        except (RuntimeError, NotImplementedError) as e:  # no backward formula: no forward one either
            if "not implemented" not in str(e):
                raise
            raise NotImplementedError(f"Trying to use forward AD with {cls._name} that does not support it.") from e
        pairs = [(g, t if t._dtype is g._dtype else t.to(g._dtype)) for g, t in zip(gs, ts)
                 if g is not None and g._requires_grad]
        if not pairs:
            return res
        jts = _grad([g for g, _ in pairs], us, [t for _, t in pairs], create_graph=differentiable,
                    allow_unused=True)
    for i, jt in zip(ys, jts):
        res[i] = jt if differentiable or jt is None else jt.detach()
    return res


# ----------------------------------------------------------------------------- public API
class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None without one)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start a new forward-AD level; returns its index (torch allows one at a time)."""
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _DualLevel(0)
    _interpose.push(level)
    _state.level = level
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """End the current forward-AD level: every tangent made at it is dropped."""
    current = _state.level
    if level is None:
        if current is None:
            raise RuntimeError("Dual level must be a positive number.")
        level = current.index
    if current is None or level != current.index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _interpose.pop(current)
    _state.level = None
    current._clear()


def _level_for(level: int | None, fn: str) -> "_DualLevel | None":
    current = _state.level
    if level is None:
        return current
    if current is None or level != current.index:
        raise RuntimeError(f"Invalid level given to {fn}")
    return current


def _type_name(t: Tensor) -> str:
    return "torch." + t._dtype.name


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``."""
    if _state.level is None and level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    lvl = _level_for(level, "_make_dual")
    if not tensor._dtype._differentiable:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {_type_name(tensor)}")
    if not tangent._dtype._differentiable:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {_type_name(tangent)}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._data.shape)} while the "
                           f"given forward gradient is of size {list(tangent._data.shape)}.")
    if hasattr(tensor, "_phys") or hasattr(tangent, "_phys"):  # a vmap-batched value (ember.func's BatchedTensor)
        raise RuntimeError("Batching rule not implemented for aten::_make_dual; the fallback path doesn't work on "
                           "out= or view ops.")
    if _tangent(tensor, lvl) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {lvl.index} is not supported.")
    if tangent._data.strides != tensor._data.strides:
        tangent = tangent.clone()  # torch keeps the tangent itself only when its layout matches the primal's
    return _dual_at(lvl, tensor, tangent)


def _dual_at(level: _DualLevel, tensor: Tensor, tangent: Tensor) -> Tensor:
    """A view of ``tensor`` with ``tangent`` at ``level`` (no checks): for transforms that push their own levels."""
    dual = call_below(level, _view_op(), (tensor, tensor._data.shape))
    _set_tangent(dual, level, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view without the tangent) and the tangent of ``tensor`` at ``level``."""
    current = _state.level
    if level is None:
        if current is None:
            return UnpackedDualTensor(tensor, None)
        level = current.index
    lvl = current if current is not None and current.index == level else None
    if lvl is None:
        if tensor._ext is not None and tensor._ext.get("fw"):
            raise RuntimeError("Invalid level given to _fw_primal")
        return UnpackedDualTensor(_view_op().apply(tensor, tensor._data.shape), None)
    primal = call_below(lvl, _view_op(), (tensor, tensor._data.shape))
    return UnpackedDualTensor(primal, _tangent(tensor, lvl))


def _view_op():
    from ..ops.shape import View

    return View


class dual_level:
    """Context manager for one forward-AD level: ``with dual_level(): ...`` (tangents end with it)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()
