"""In-place ops: version bumps, torch's leaf errors, and history rebasing (incl. views).

# NOTE [in-place and the graph]
``y.op_(...)`` computes ``op(y, ...)`` out of place on an *alias* of ``y`` (same array, same
grad_fn), writes the result into ``y``'s memory and makes the new node ``y``'s grad_fn. If the
node saved the alias (it needs ``y``'s old value), the alias gets a private copy first, so the
saved value stays the one backward needs. For a view ``v`` of a base ``b`` that is in a graph,
the new value is written into ``b`` through a ``CopySlices`` node (b's new grad_fn) and ``v``
becomes an ``AsStrided`` view of the new ``b``. Without a graph, it is just NumPy in place.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import _backend as _B

from .. import _dtype as D
from .._tensor import Tensor, _wrap
from ..autograd import graph as G
from ..autograd._interpose import made
from ..autograd.grad_mode import _mode

__all__ = ["inplace", "setitem", "copy_out"]

_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(self: Tensor) -> None:
    """torch's errors for in-place changes of leaves that require grad (and their views)."""
    if not _mode.grad_enabled:
        return
    if self._requires_grad and self._grad_fn is None:
        raise RuntimeError(_LEAF_MSG)
    base = self._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(_VIEW_LEAF_MSG)
    ext = self._ext
    if ext is not None and ext.get("inference") and not _mode.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                           "make a clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _can_cast(src: D.dtype, dst: D.dtype) -> bool:
    return src._kind <= dst._kind


def _cast_check(result_dtype: D.dtype, self: Tensor) -> None:
    if not _can_cast(result_dtype, self._dtype):
        raise RuntimeError(f"result type {_title(result_dtype)} can't be cast to the desired output type "
                           f"{_title(self._dtype)}")


def _complex_into_real(self: Tensor, args, kwargs) -> None:
    """torch checks that an in-place result fits ``self`` before the kernel runs: a complex operand of a real
    ``self`` fails on the cast even where the kernel has no complex version (clamp_, gcd_, xlogy_ ...)."""
    if self._dtype.is_complex:
        return
    for a in (*args, *kwargs.values()):
        if (isinstance(a, Tensor) and a._dtype.is_complex) or isinstance(a, complex):
            from .arithmetic import _rt

            result = D.from_numpy_dtype(_rt(self._data, a._data if isinstance(a, Tensor) else a))
            raise RuntimeError(f"result type {_title(result)} can't be cast to the desired output type "
                               f"{_title(self._dtype)}") from None


def _title(d: D.dtype) -> str:
    """The dtype as torch's messages name it ("Float", "ComplexDouble")."""
    return d._scalar_name


def _others_need_grad(args) -> bool:
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def _is_batched(x) -> bool:
    """``x`` is (or, as a key, holds) a batched tensor of some vmap level: its values are only a placeholder."""
    if isinstance(x, Tensor):
        return type(x._data) not in _B.ARRAYS
    if isinstance(x, tuple):
        return any(_is_batched(k) for k in x)
    return False


def _vmap_write_error(what: str) -> RuntimeError:
    return RuntimeError(f"vmap: {what}(self, *extra_args) is not possible because there exists a Tensor `other` in "
                        f"extra_args that has more elements than `self`. This happened due to `other` being vmapped "
                        f"over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators "
                        f"instead of {what}. If said operator is being called inside the PyTorch framework, please "
                        f"file a bug report instead.")


def _value_for(self: Tensor, src: Tensor, fn, args, kwargs) -> Tensor:
    """``fn(src, *args, **kwargs)`` (``src``: ``self`` or its alias), the value an in-place op writes into ``self``,
    checked to fit there (torch's errors for a result of another dtype or shape)."""
    try:
        out = fn(src, *args, **kwargs)
    except NotImplementedError:
        _complex_into_real(self, args, kwargs)
        raise
    _cast_check(out._dtype, self)
    _shape_check(out, self)
    return out


def inplace(self: Tensor, fn, *args, **kwargs) -> Tensor:
    """Apply ``fn(self, *args)`` in place on ``self`` with correct autograd history."""
    if type(self._data) not in _B.ARRAYS:  # a batched tensor under vmap: its level writes the physical value
        return self._inplace_batched(fn, args, kwargs)
    if _mode.interpose is not None and (_is_batched(args) or _is_batched(tuple(kwargs.values()))):
        raise _vmap_write_error("inplace arithmetic")  # an unbatched tensor cannot hold every example's result
    check_inplace(self)
    graph = _mode.grad_enabled and (self._requires_grad or _others_need_grad(args)
                                    or (bool(kwargs) and _others_need_grad(kwargs.values())))
    if not graph:
        if len(args) == 1 and not kwargs and _mode.interpose is None:  # a vmap / forward-AD level sees every op
            uf = _IN_PLACE_UFUNCS.get(fn)
            if uf is not None and _ufunc_in_place(self, uf, args[0]):
                return self
        out = _value_for(self, self, fn, args, kwargs)  # records nothing: no input requires grad, or grad mode is off
        if _mode.tracer is not None:  # ember.compile records the write (NOTE [compile])
            _mode.tracer.write(self, out)
        _write(self._data, out._data)
        self._bump()
        _tangent_written(self, out, fn)
        return self
    if self._base is not None:
        return _inplace_on_view(self, fn, args, kwargs)
    alias = _alias(self)
    out = _value_for(self, alias, fn, args, kwargs)
    node = out._grad_fn
    _protect_saved(node, alias)
    if _mode.tracer is not None:
        _mode.tracer.write(self, out)
    _write(self._data, out._data)
    self._bump()
    _retarget_saved_result(node, out, self)
    _rebase(self, node, out._output_nr if node is not None else 0)
    _rebase_views(self)
    _tangent_written(self, out, fn)
    return self


# NOTE [in-place without a graph]: ``p -= lr * g`` (an optimizer step) computes straight into ``p``'s
# array when no graph is recorded, as NumPy's ``-=`` does, instead of a new array copied back: the
# same ufunc on the same dtype gives the same bits. Only floating ``self`` with an operand of its own
# dtype or a Python number (a weak scalar either way); anything else, or an operand that does not
# broadcast to ``self``, takes the general path (promotion, torch's errors).
_IN_PLACE_UFUNCS: dict = {}  # arithmetic function (add, sub, mul) -> its silent ufunc; filled by ops.arithmetic


# Functions torch declares no derivative for at all (logical_and ...): their in-place forms leave the target's
# forward-AD tangent as it was, where a zero-derivative op (eq_) zeroes it. Filled by ops.comparison.
_KEEPS_TANGENT: set = set()


def _ufunc_in_place(self: Tensor, uf, other) -> bool:
    arr = self._data
    ta = type(arr)
    if arr.dtype.kind != "f" or not _B.writeable(arr):  # (a device array too: written by its own kernel, no copy)
        return False
    t = type(other)
    if t is float or t is int:
        o = other
    elif isinstance(other, Tensor) and other._data.dtype == arr.dtype and type(other._data) is ta and (
            ta is np.ndarray or _B.SINGLE_DEVICE[0] or _B.device_of(other._data) == _B.device_of(arr)):
        o = other._data  # (another device, or a 0-d CPU tensor beside a device one: the general path)
    else:
        return False
    try:
        uf(arr, o, arr)
    except ValueError:  # does not broadcast to self: the general path raises torch's error
        return False
    self._bump()
    return True


def _shape_check(out: Tensor, self: Tensor) -> None:
    if out._data.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f"{list(out._data.shape)}")


def _alias(t: Tensor) -> Tensor:
    a = _wrap(t._data, t._dtype)
    a._requires_grad = t._requires_grad
    a._grad_fn = t._grad_fn
    a._output_nr = t._output_nr
    a._acc = t._acc
    ext = t._ext
    if ext is not None and "fw" in ext:  # forward AD: the op sees (a copy of) the tangents, which it may save
        a._ext = {"fw": {level: tangent.clone() for level, tangent in ext["fw"].items()}}
    return a


def _tangent_written(target: Tensor, out: Tensor, fn) -> None:
    """Forward AD: ``target`` now holds ``out``'s values, so its tangents become ``out``'s, zero at a level where
    ``out`` has none (e.g. a comparison written into a float tensor) (NOTE [forward AD])."""
    base = target._base
    if out._ext is None and (fn in _KEEPS_TANGENT or (target._ext is None and (base is None or base._ext is None))):
        return
    fw = out._ext.get("fw") if out._ext is not None else None
    held = [t._ext.get("fw") for t in (target, target._base) if t is not None and t._ext is not None]
    stale = {level for h in held if h for level in h if not fw or level not in fw}
    if fw or stale:
        from ..autograd.forward_ad import _after_inplace

        _after_inplace(target, fw or {}, stale)


def _protect_saved(node, alias: Tensor) -> None:
    """If ``node`` saved the alias (it needs the old value), give it a private copy."""
    saved = getattr(node, "_saved", None) if node is not None else None
    if not saved or isinstance(saved, str):
        return
    for s in saved:
        if type(s) is G.SavedTensor and s._tensor is alias:
            old = alias._data
            alias._data = old.copy()
            if _mode.tracer is not None:
                _mode.tracer.copied(old, alias._data)
            return


def _retarget_saved_result(node, out: Tensor, target: Tensor) -> None:
    """A node that saved its own result now sees it in ``target``'s memory, at its new version, so
    a later in-place change of ``target`` is caught as torch does."""
    saved = getattr(node, "_saved", None) if node is not None else None
    if not saved or isinstance(saved, str):
        return
    for s in saved:
        if type(s) is G.SavedTensor and s._is_output and s._data is out._data:
            vc = target._version_counter()
            s._data = target._data
            s._vc = vc
            s._version = vc.value


def _write(dst: np.ndarray, src: np.ndarray) -> None:
    if not _B.writeable(dst):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    np.copyto(dst, src, casting="unsafe")


def _rebase(self: Tensor, node, output_nr: int) -> None:
    retains = self.retains_grad
    self._grad_fn = node
    self._output_nr = output_nr
    self._requires_grad = node is not None or self._requires_grad
    if retains and node is not None:
        self._install_retain_hook()


# ----------------------------------------------------------------------------- views
# NOTE [views after an in-place change]
# A root tensor keeps weak references to its views (``_ext["views"]``) unless it is a leaf that
# requires grad (those can never be changed in place while recording). When an in-place op with a
# graph changes the root or any of its views, every live view gets an ``AsStridedBackward0`` node
# over the root's new history, as torch regenerates a view's grad_fn when its base was modified.

def register_view(view: Tensor, root: Tensor) -> None:
    """Remember ``view`` on ``root`` so its history can follow in-place changes of ``root``."""
    if root._requires_grad and root._grad_fn is None:
        return
    ext = root._ext
    if ext is None:
        ext = root._ext = {}
    reg = ext.get("views")
    if reg is None:
        reg = ext["views"] = [[], 16]
    refs = reg[0]
    refs.append(weakref.ref(view))
    if len(refs) > reg[1]:
        refs[:] = [r for r in refs if r() is not None]
        reg[1] = max(16, 2 * len(refs))


def _rebase_views(root: Tensor) -> None:
    from .indexing import AsStrided

    ext = root._ext
    reg = ext.get("views") if ext is not None else None
    if not reg:
        return
    live = []
    for r in reg[0]:
        v = r()
        if v is not None:
            live.append(r)
            target, varr, _, _ = _same_kind(root, v._data, None)
            node = AsStrided.apply(target, view_geometry(varr, target._data), varr)._grad_fn
            if varr is not v._data:  # a complex view of real memory: its pairs, back as complex numbers
                from .complex_numbers import ViewAsComplex

                node = ViewAsComplex.apply(_wrap_out_of(node, varr))._grad_fn
            _rebase(v, node, 0)
    reg[0][:] = live


# NOTE [views of complex memory]: the in-place machinery addresses a view by the flat positions of its elements in
# its root's memory, which needs one element type. A real view of complex memory (real, imag, view_as_real) is
# written through view_as_real(root), whose gradient leads back to the root's history; a complex view of real
# memory (view_as_complex) writes its (real, imaginary) pairs into the root.
def _same_kind(root: Tensor, view: np.ndarray, value):
    """(target, view array, value, finish): ``view`` and ``value`` addressed in ``target`` with one element type;
    ``finish`` turns the written target back into the root's type (None: nothing to do)."""
    from .complex_numbers import ViewAsComplex, ViewAsReal, _as_real

    if root._dtype.is_complex == (view.dtype.kind == "c"):
        return root, view, value, None
    if root._dtype.is_complex:  # a real view of complex memory
        return ViewAsReal.apply(root), view, value, ViewAsComplex
    pairs = _as_real(view)  # a complex view of real memory
    if isinstance(value, Tensor):
        value = ViewAsReal.apply(value.contiguous() if value._dtype.is_complex else value.to(
            D.from_numpy_dtype(view.dtype)).contiguous())
    return root, pairs, value, None


def _wrap_out_of(node, arr: np.ndarray) -> Tensor:
    from .._tensor import _wrap_out

    return _wrap_out(arr, D.from_numpy_dtype(arr.dtype), node, 0)


def view_geometry(view: np.ndarray, base: np.ndarray) -> tuple:
    """(offset, shape, strides, base shape, base strides) of ``view`` in ``base``'s memory, in elements."""
    item = base.itemsize
    offset = (_B.address(view) - _B.address(base)) // item
    return (offset, view.shape, tuple(s // item for s in view.strides), base.shape,
            tuple(s // item for s in base.strides))


def _offsets(shape: tuple, strides: tuple, start: int = 0) -> np.ndarray:
    out = np.full(shape, start, dtype=np.int64)
    for k, (n, st) in enumerate(zip(shape, strides)):
        if n > 1 and st:
            out += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(shape) - k - 1))
    return out


def flat_positions(geom: tuple) -> np.ndarray:
    """Index in the base's row-major order of every element of the view described by ``geom`` (geometry only: a
    constant of compiled programs, NOTE [compile])."""
    offset, vshape, vstrides, bshape, bstrides = geom
    vmem = _offsets(vshape, vstrides, offset)
    bmem = _offsets(bshape, bstrides).reshape(-1)
    if bmem.size == 0 or np.array_equal(bmem, np.arange(bmem.size)):
        return made(vmem)
    lo = int(bmem.min())
    lookup = np.full(int(bmem.max()) - lo + 1, -1, dtype=np.int64)
    lookup[bmem - lo] = np.arange(bmem.size, dtype=np.int64)
    return made(lookup[vmem - lo])


def _flat_index(view: Tensor) -> np.ndarray:
    return flat_positions(view_geometry(view._data, view._base._data))


def _inplace_on_view(self: Tensor, fn, args, kwargs) -> Tensor:
    from .indexing import CopySlices

    base = self._base
    alias = _alias(self)
    out = _value_for(self, alias, fn, args, kwargs)
    _protect_saved(out._grad_fn, alias)
    target, varr, value, finish = _same_kind(base, self._data, out)  # NOTE [views of complex memory]
    _write_base(base, CopySlices.apply(target, value, (flat_positions(view_geometry(varr, target._data)),), True),
                finish)
    _retarget_saved_result(out._grad_fn, out, self)
    _tangent_written(self, out, fn)
    return self


def _write_base(base: Tensor, new_base: Tensor, finish) -> None:
    """``new_base`` (``base`` with a view's region written, as _same_kind reads it; ``finish`` reads it back) becomes
    ``base``'s value and history, and its views' (NOTE [views after an in-place change])."""
    _become(base, new_base if finish is None else finish.apply(new_base))


def _become(t: Tensor, new: Tensor) -> None:
    """``new`` (``t``'s new value, computed out of place on a graph) becomes ``t``'s value and history, and its
    views' (NOTE [views after an in-place change])."""
    if _mode.tracer is not None:
        _mode.tracer.write(t, new)
    _write(t._data, new._data)
    t._bump()
    _rebase(t, new._grad_fn, 0)
    _rebase_views(t)


def _leaf_setitem_error(self: Tensor, key: tuple) -> None:
    """torch indexes first (a view, for basic keys not covering the whole tensor), then copies."""
    if not (_mode.grad_enabled and self._requires_grad and self._grad_fn is None):
        return
    shape = self._data.shape
    ell = key.index(Ellipsis) if Ellipsis in key else len(key)
    for i, k in enumerate(key):
        if k is Ellipsis:
            continue
        if isinstance(k, slice):
            d = i if i < ell else len(shape) - (len(key) - i)
            if 0 <= d < len(shape) and k.indices(shape[d]) == (0, shape[d], 1):
                continue
        raise RuntimeError(_VIEW_LEAF_MSG)


def setitem_shape_error(value: np.ndarray, region: tuple, basic: bool) -> RuntimeError:
    """torch's error when ``value`` cannot fill an indexing result of shape ``region``: basic keys
    expand the value (leading 1s dropped), advanced ones broadcast it."""
    vshape = tuple(np.shape(value))
    if not basic:
        return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
                            f"result of shape {list(region)}")
    while vshape and vshape[0] == 1 and len(vshape) > len(region):
        vshape = vshape[1:]
    if len(vshape) > len(region):
        name = G._type_name(D.from_numpy_dtype(_B.asarray(value).dtype))
        return RuntimeError(f"expand(torch.{name}{{{list(vshape)}}}, size={list(region)}): the number of sizes "
                            f"provided ({len(region)}) must be greater or equal to the number of dimensions in the "
                            f"tensor ({len(vshape)})")
    off = len(region) - len(vshape)
    for i in range(len(region) - 1, off - 1, -1):
        v = vshape[i - off]
        if v != 1 and v != region[i]:
            return RuntimeError(f"The expanded size of the tensor ({region[i]}) must match the existing size ({v}) at "
                                f"non-singleton dimension {i}.  Target sizes: {list(region)}.  Tensor sizes: "
                                f"{list(np.shape(value))}")
    return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
                        f"result of shape {list(region)}")


def _broadcastable(shape: tuple, to: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, to) == to
    except ValueError:
        return False


def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value`` (value: Tensor or number), recorded as CopySlices when needed."""
    _setitem(self, key, value)
    if _mode.interpose is not None and (self._ext is not None or getattr(value, "_ext", None) is not None):
        from ..autograd.forward_ad import _after_setitem

        _after_setitem(self, key, value)


def _setitem(self: Tensor, key, value) -> None:
    from .indexing import CopySlices, setitem_node, _convert_key, _torch_order, index_error

    if type(self._data) not in _B.ARRAYS:  # a batched tensor under vmap
        return self._setitem_batched(key, value)
    if _mode.interpose is not None:  # an unbatched tensor cannot hold every example's write
        if _is_batched(key if isinstance(key, tuple) else (key,)):
            raise _vmap_write_error("index_put_")
        if _is_batched(value):
            raise _vmap_write_error("inplace arithmetic")

    if not isinstance(value, Tensor):
        value = D.scalar_into(value, self._dtype)
    k, basic = _convert_key(key, stacklevel=5, ref=self._data)  # user -> __setitem__ -> setitem -> _setitem -> here
    node = setitem_node(k, basic, self._data.shape)
    if not basic:
        k = _torch_order(k, self._data.shape)
    if basic:
        _leaf_setitem_error(self, k)
    check_inplace(self)
    v = value
    graph = _mode.grad_enabled and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if not graph:
        arr = value._data if isinstance(value, Tensor) else value
        if _mode.tracer is not None:
            _mode.tracer.setitem(self, key, value)
        try:
            self._data[k] = arr
        except ValueError as e:
            if "read-only" in str(e):
                _write(self._data, arr)  # raises torch's overlap message
            raise setitem_shape_error(arr, np.shape(self._data[k]), basic) from None
        except IndexError as e:
            raise index_error(e, self._data.ndim) from None
        self._bump()
        return
    base = self._base
    if base is not None:
        target, varr, _, finish = _same_kind(base, self._data, None)  # NOTE [views of complex memory]
        sub = flat_positions(view_geometry(varr, target._data))[k]
        pairs = varr is not self._data  # a complex view of real memory: (real, imaginary) positions
        region = sub.shape[:-1] if pairs else sub.shape
        if pairs or isinstance(v, Tensor):
            if not isinstance(v, Tensor):
                v = _wrap(made(_B.asarray(v, self._data.dtype)), self._dtype)  # a Python value: a constant
            while v._data.ndim > len(region) and v._data.shape[0] == 1:
                v = v[0]
            if not _broadcastable(v._data.shape, region):
                raise setitem_shape_error(v._data, region, basic)
            v = v if v._data.shape == region else v.expand(region)
            if pairs:
                from .complex_numbers import ViewAsReal

                v = ViewAsReal.apply(v.to(self._dtype).contiguous())
            v = v.reshape(-1)
        _write_base(base, CopySlices.apply(target, v, (sub.reshape(-1),), True), finish)
        return
    if node is None:  # the whole tensor: torch records copy_ (CopyBackwards) or fill_ (FillBackward3)
        from .indexing import copy_value, fill_value

        if isinstance(v, Tensor):
            inplace(self, copy_value, v)
        else:
            inplace(self, fill_value, _wrap(_B.asarray(v, self._dtype.np), self._dtype))
        return
    _become(self, node.apply(self, v, k, False))


def copy_out(out: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` into ``out`` (the ``out=`` argument) as torch does (ember/_args.py ``write_out``)."""
    from .._args import write_out

    return write_out(out, result, None)
