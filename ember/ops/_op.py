"""How an op is declared once and applied: forward on arrays, backward in ember ops.

# NOTE [declaring an op]
An op is a subclass of ``Op`` (itself a graph ``Node``: one instance per recorded call):

    class Mul(Op):
        '''d(self*other) = grad*other, grad*self'''
        save = ("self", "other")             # what backward needs, by input name or "result"
        @staticmethod
        def forward(ctx, self, other):        # arrays (tensor inputs) and plain values
            return self * other
        def backward(ctx, grad):              # ember Tensors in, one grad per tensor input out
            self, other = ctx.saved_tensors
            return grad * other, grad * self

``Mul.apply(a, b)`` decides once whether a graph is needed (grad mode on and some input requires
grad). If not, it only runs ``forward(None, ...)`` and wraps the array. Otherwise it creates the
node, links ``next_functions``, runs forward with the node as ``ctx`` (where it may keep
attributes declared in ``__slots__``), saves what ``save`` names, and wraps
the outputs.

``save_for = {"self": ("other",), "other": ("self",)}`` says which inputs' gradients use a saved value: it
is saved only when one of them requires grad (None in its place otherwise, and ``grad_fn._saved_<name>`` is
None, as torch's). A value missing from ``save_for`` is always saved. Saving less keeps constants out of the
graph (``x * w`` with a constant ``x`` and a weight ``w`` does not keep ``w``) and means a saved-tensor hook
sees only what backward will use, as torch's. ``inputs`` names the tensor slots as torch's derivative
formulas do (``("self", "mat2")`` for mm), so the ``_saved_*`` attributes have torch's names.

Inputs: the first ``len(args) - nattrs`` arguments are tensor slots (a Python number there is a
constant with an empty edge, as torch's wrapped scalars); the trailing ``nattrs`` are attributes. Naming them,
``attrs = ("dim", "keepdim")``, declares them once: ``forward(ctx, ...)`` keeps them on the node and backward
reads ``ctx.dim``.
Backward formulas never unbroadcast: the engine sums each gradient back to its input's shape. A backward may
skip the gradients nobody needs: ``ctx.needs_input_grad[i]`` (torch's name) is False for a slot whose input
does not require grad, and None takes its place.

# NOTE [raw backward]
A backward formula is written in ember ops so that create_graph=True differentiates it again. Without a
graph (grad mode off while the engine runs) and with no forward-AD / vmap level active (``_mode.interpose``
is None: a level must see every op), a few hot formulas (mm/addmm, log_softmax, nll_loss, the elementwise
mul/div/sub/rsub/neg/exp/log/tanh/sigmoid/sqrt/reciprocal, the engine's broadcast reductions) compute the same NumPy kernels on arrays directly, skipping the dispatches. An op
declares such a path as ``raw(ctx, grad, *saved)`` next to its ``backward``: the same formula with the saved
values as arrays (``_apply`` calls it instead of ``backward`` in that case), each step the ``forward`` kernel
of the op the differentiable formula dispatches to, on the arrays that dispatch would see, results wrapped
by ``wrap_raw`` as ``apply`` wraps them. Each such path is tested bit-equal to its differentiable formula
(tests/ops/test_raw_backward.py and tests/autograd/test_engine_fast_paths.py).

# NOTE [device check]
torch refuses an op whose tensors live on two devices ("Expected all tensors to be on the same device, but found
at least two devices, cuda:0 and cpu!"), except 0-d CPU tensors, which enter a CUDA op as scalars. ``apply``
pays one type check per tensor input for it: an input whose array is not exactly ``numpy.ndarray`` sends the
call to ``_on_device``, which checks the devices (NOTE [device seam] in ember/_backend.py), moves 0-d CPU
tensors to the op's device, and then runs the op as ``apply`` does. Kernels never see mixed devices. An op
whose result is on another device by design (the device move) declares ``moves = True``.
While the engine runs backward formulas (``_mode.in_backward``), CPU tensors are moved to the gradient's device
instead of refused: formulas build constants (masks, identity matrices, index arrays a host kernel saved) as
host arrays. Composite ops do the same through ``const``: a host constant (marked in its ``_ext``) joins a device
op on that op's device, as a 0-d CPU tensor does.

# NOTE [host results]
A kernel may return a host array for device inputs where it makes its result from no array (``np.full`` of an
empty reduction, a constant gradient, ``np.asarray`` of a Python value): ``_on_device`` moves such results (and
the saved copies of them) to the op's device, on CuPy as on the stand-in, and notes the op in
``_backend.host_results``. A kernel that mixes host and device arrays fails instead (CuPy refuses both ways) and
takes the host fallback below.

# NOTE [host fallback]
A kernel that cannot take device arrays (it converts an input with ``np.asarray``, or writes into a NumPy
buffer: CuPy refuses implicit host copies with a TypeError) runs on the CPU instead: ``_on_host_instead``
moves the inputs to the host and the results back, both recorded for autograd, and notes the op in
``_backend.host_fallbacks``. Correct and slow; tools/gpu_check.py lists those ops, each a candidate for the
namespace helpers of ember/_backend.py.

# NOTE [forward formulas]
Forward-mode AD (NOTE [forward AD] in ember/autograd/forward_ad.py) asks an op for
``cls.jvp(args, out, tangents)``: ``args`` as given to ``apply`` (tensors and attributes), ``out`` the result,
``tangents`` one per tensor slot (None: no tangent). It returns the output tangent(s) (None: zero), written in
ember ops so that it is itself differentiable; the level broadcasts it to the output's shape and casts it to its
dtype. An op declares it next to its backward, as one of:
  - ``jvp = linear``: the op is linear in its tensor slots (views, shape ops, sum, mean, cat ...), so the
    tangent is the op applied to the tangents (a view's tangent is then the same view of the tangent);
  - ``jvp = multilinear``: linear in each slot separately (mul, matmul, einsum ...): sum over slots of the op
    with that slot's tangent in place of its value;
  - ``jvp = unsupported("aten::name")``: torch has no forward derivative: raises torch's error;
  - a ``@staticmethod def jvp(args, out, tangents)`` of its own (families: a table column, e.g. elementwise
    unary ops reuse their backward column, since an elementwise Jacobian is diagonal);
  - nothing (``jvp = None``): derived from ``backward`` by the double-vjp trick (exact, ~3x the cost).

# NOTE [holomorphic formulas]
For complex inputs torch's backward of a holomorphic f is ``grad * conj(f'(z))`` (NOTE [complex autograd] in
ops/complex.py). A formula written for real inputs, ``grad * f'(x)`` (linear in grad, analytic in the saved
values: products, quotients, powers, exp, sin, matmul ...), becomes that by conjugating grad on the way in and
each gradient on the way out: conj(f'(z) * conj(grad)) = grad * conj(f'(z)). An op declares
``holomorphic = True`` to have ``_apply`` do so when its gradient is complex (its raw path too); real
gradients take the formula as written. Non-holomorphic ops (abs, angle, real, imag, conj, sgn, var ...) write
their complex formulas themselves.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._malloc import foreign_error as _foreign_error
from .._tensor import Tensor, _wrap, _wrap_out, _new
from ..autograd import graph as G
from ..autograd.grad_mode import _mode
from ..autograd import anomaly_mode as _anomaly
from ..autograd._fast import NUMPY_QUIET as _NUMPY_QUIET, set_numpy_errors as _set_np_err, reset_numpy_errors as _reset_np_err
from ._inplace import register_view as _register_view

_NO_EDGE = (None, 0)
_nd = np.ndarray
_BY_NUM = D._BY_NUM
# NumPy dtype -> ember dtype: one dict lookup per output (dtype objects hash and compare cheaply)
_BY_DT = D._BY_NP
_next_seq = G._next_seq
_make_saved = G._make_saved
_SavedTensor = G.SavedTensor
_registry: dict[str, type] = {}
# (shape, dtype) -> the ``_meta_out`` of a single-output node, shared by every node of that shape:
# two fewer GC-tracked tuples per recorded op (the collector's passes over a big graph cost as much
# as building it).
_META: dict = {}


def _dtype_of(arr) -> D.dtype:
    d = _BY_NUM.get(arr.dtype.num)
    return d if d is not None else D.from_numpy_dtype(arr.dtype)


class Op(G.Node):
    """Base of built-in ops: see NOTE [declaring an op] in this module."""

    __slots__ = ("_attrs",)
    # The trailing arguments of ``apply`` that are attributes, by name (NOTE [declaring an op]): ``forward`` keeps
    # them on its ctx (a recorded node) and backward reads ``ctx.<name>``. ``nattrs`` (their count) follows; an op that keeps derived values
    # instead sets ``nattrs`` and its own ``__slots__``.
    attrs: tuple = ()
    nattrs = 0
    save: tuple = ()
    inputs: tuple = ("self", "other", "third", "fourth")
    is_view = False
    # Forward runs on the stored 16-bit arrays rather than float32 copies (views, the dtype cast): NOTE [reduced
    # precision]. Views are always native.
    reduced_native = False
    # Tensor slots whose 0-d or Python-number operand enters in float32 as given rather than rounded to the 16-bit
    # dtype first (torch's kernel reads the original value: mul's and div's CPU scalar, lerp's weight).
    reduced_exact: tuple = ()
    # Attribute positions (in ``apply``'s arguments) of numbers torch converts to the 16-bit dtype (add's alpha).
    reduced_attrs: tuple = ()
    # Indices of outputs that carry gradients (None: all floating outputs).
    differentiable_outputs: tuple | None = None
    # Forward formula (NOTE [forward formulas]); None: derived from backward.
    jvp = None
    _save_idx: tuple = ()
    # NOTE [declaring an op]: saved name -> the input names whose gradient needs it (absent: always saved)
    save_for: dict | None = None
    _save_need: tuple | None = None  # per ``save`` entry: the input index (or indices) that need it; None: always
    # Optional ``raw(ctx, grad, *saved)``: ``backward`` on the saved values' arrays (NOTE [raw backward]).
    raw = None
    # The formulas serve complex gradients through conjugation (NOTE [holomorphic formulas]).
    holomorphic = False
    # torch's op name when it refuses to record the op for complex outputs ("... does not support automatic
    # differentiation for outputs with complex dtype.")
    no_complex_grad: str | None = None
    # The result is on another device than the inputs by design (a device move: NOTE [device check]).
    moves = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "_name" not in cls.__dict__:
            cls._name = cls.__name__ + "Backward0"
        # type(t.grad_fn).__name__ reads as in torch ("CopySlices" while name() is "torch::autograd::CopySlices")
        cls.__name__ = cls.__qualname__ = cls._name.rsplit("::", 1)[-1]
        cls._save_idx = tuple(-1 if n == "result" else cls.inputs.index(n) for n in cls.save)
        if cls.save_for:  # per saved value: the one input index (an int) or the indices whose gradient needs it
            need = [tuple(cls.inputs.index(i) for i in cls.save_for[n]) if n in cls.save_for else None
                    for n in cls.save]
            cls._save_need = tuple(w[0] if w is not None and len(w) == 1 else w for w in need)
        if "attrs" in cls.__dict__:
            cls.nattrs = len(cls.attrs)
            for i, name in enumerate(cls.attrs):
                setattr(cls, name, property(_attr_getter(i), doc=f"The attribute ``{name}`` of this call."))
        if cls.attrs and "forward" in cls.__dict__:
            if not isinstance(cls.__dict__["forward"], staticmethod):
                raise TypeError(f"{cls.__name__}: an op with named attrs declares a static forward")
            cls.forward = staticmethod(_keeping_attrs(cls.__dict__["forward"].__func__, cls.nattrs))
        # what ``grad_fn._saved_<name>`` reads besides the saved values (as torch's saved attributes)
        slots = tuple(a for c in cls.__mro__ for a in getattr(c, "__slots__", ()) if a != "_attrs")
        cls._attr_names = slots + cls.attrs
        if cls.is_view:
            cls.reduced_native = True
        fwd = cls.__dict__.get("forward")
        if fwd is not None and (cls.__dict__.get("quiet") or getattr(sys.modules.get(cls.__module__), "_QUIET_OPS", False)):
            # ops whose NumPy kernels can meet inf/nan (matmul inside conv, det, pooling sums ...) compute without
            # NumPy's RuntimeWarnings, as torch is silent there
            if isinstance(fwd, staticmethod):
                cls.forward = staticmethod(silent(fwd.__func__))
            elif isinstance(fwd, classmethod):
                cls.forward = classmethod(silent(fwd.__func__))
        # not in the registry: a family's base (``_abstract``: not an op of its own) and fused nodes that show the
        # names of other ops (``_alias``: the registry maps each name to the op that owns it)
        if not cls.__dict__.get("_abstract") and not cls.__dict__.get("_alias"):
            _registry[cls.__name__] = cls

    @classmethod
    def apply(cls, *args):
        """Run the op on Tensors / Python values, recording a node when a graph is needed."""
        try:  # (costs nothing unless raised: NOTE [foreign errors], NOTE [allocation failures] in ember/_malloc.py)
            if _mode.interpose is not None:  # a forward-AD or vmap level sees the op first
                return _mode.interpose.process(cls, args)
            if _mode.grad_enabled:
                for a in args:
                    if isinstance(a, Tensor) and a._requires_grad:
                        return _record(cls, args)
            # No graph: unwrap without building a list for the common arities (a 16-bit float input takes the
            # reduced-precision path, NOTE [reduced precision]).
            n = len(args)
            if n == 2:
                a, b = args
                if isinstance(a, Tensor):
                    if a._dtype._reduced:
                        return _apply_reduced(cls, args)
                    a = a._data
                    if type(a) is not _nd:  # NOTE [device check]
                        return _on_device(cls, args)
                if isinstance(b, Tensor):
                    if b._dtype._reduced:
                        return _apply_reduced(cls, args)
                    b = b._data
                    if type(b) is not _nd:  # NOTE [device check]
                        return _on_device(cls, args)
                out = cls.forward(None, a, b)
            elif n == 1:
                a = args[0]
                if isinstance(a, Tensor):
                    if a._dtype._reduced:
                        return _apply_reduced(cls, args)
                    a = a._data
                    if type(a) is not _nd:  # NOTE [device check]
                        return _on_device(cls, args)
                out = cls.forward(None, a)
            else:
                vals = []
                for a in args:
                    if isinstance(a, Tensor):
                        if a._dtype._reduced:
                            return _apply_reduced(cls, args)
                        a = a._data
                        if type(a) is not _nd:  # NOTE [device check]
                            return _on_device(cls, args)
                    vals.append(a)
                out = cls.forward(None, *vals)
        except (MemoryError, TypeError, ValueError, IndexError) as e:
            err = _foreign_error(_public_name(cls), args, e)
            if err is e:
                raise
            raise err from None
        if type(out) is tuple:
            return tuple(_wrap(o, _BY_DT.get(o.dtype) or _dtype_of(o)) for o in out)
        t = _wrap(out, _BY_DT.get(out.dtype) or _dtype_of(out))
        if cls.is_view:
            _link_view(t, args[0])
        return t

    @property
    def needs_input_grad(self) -> tuple:
        """Per tensor slot, whether its gradient is needed (torch's ``ctx.needs_input_grad``): a backward returns None
        for the others. (The hot arithmetic formulas read the edges, ``self._next``, directly.)"""
        return tuple([e[0] is not None for e in self._next])

    @property
    def saved_tensors(self) -> tuple:
        """The saved values in ``save`` order (tensors unpacked, version-checked)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(G._FREED_MSG)
        if len(saved) == 1:
            s = saved[0]
            return (s.unpack(self) if type(s) is _SavedTensor else s,)
        return tuple([s.unpack(self) if type(s) is _SavedTensor else s for s in saved])

    def _apply(self, grads):
        if len(grads) == 1:
            g = grads[0]
            if g is None:
                return (None,) * len(self._next)
            if self.holomorphic and g._dtype.is_complex:
                return _holomorphic(self, g)
            if (self.raw is not None and not _mode.grad_enabled and _mode.interpose is None and type(g) is Tensor
                    and not g._dtype._reduced):
                r = self.raw(g, *_raw_saved(self)) if self._saved else self.raw(g)  # NOTE [raw backward]
                return r if type(r) is tuple else (r,)
            r = self.backward(g)
        else:
            r = self.backward(*grads)
        return r if type(r) is tuple else (r,)

    def backward(self, grad):  # pragma: no cover - every op defines it
        raise NotImplementedError(f"the derivative for '{self._name}' is not implemented.")


def _holomorphic(node, g) -> tuple:
    """``node``'s gradients for a complex ``g``: its real formula between conjugations (NOTE [holomorphic formulas])."""
    from .complex_numbers import Conj, conj_array

    if node.raw is not None and not _mode.grad_enabled and _mode.interpose is None and type(g) is Tensor:
        g = wrap_raw(conj_array(g._data))
        r = node.raw(g, *_raw_saved(node)) if node._saved else node.raw(g)
        r = r if type(r) is tuple else (r,)
        return tuple(x if x is None or not x._dtype.is_complex else wrap_raw(conj_array(x._data)) for x in r)
    r = node.backward(Conj.apply(g))
    r = r if type(r) is tuple else (r,)
    return tuple(x if x is None or not x._dtype.is_complex else Conj.apply(x) for x in r)


def _raw_saved(node) -> list:
    """The saved values of ``node`` as ``saved_tensors`` gives them, tensors as their arrays."""
    out = []
    for s in node._saved:
        if type(s) is _SavedTensor:
            if s._unpack_hook is None and not s._freed:  # SavedTensor.unpack's checks, inlined
                vc = s._vc
                if s._is_output:
                    if vc is None or vc.value == s._version:
                        out.append(s._data)
                        continue
                else:
                    t = s._tensor
                    if vc is None:
                        vc = t._vc
                    if vc is None or vc.value == s._version:
                        out.append(t._data)
                        continue
            out.append(s.unpack(node)._data)  # hooks, freed or modified values: unpack's own path (and errors)
        else:
            out.append(s)
    return out


def const(arr) -> Tensor:
    """A constant (no history) tensor around an array (or anything ``np.asarray`` takes), of its dtype, on the
    array's device; a host constant joins a device op on the op's device (NOTE [device check])."""
    arr = _B.asarray(arr)
    t = _wrap(arr, _BY_DT.get(arr.dtype) or _dtype_of(arr))
    if type(arr) is _nd:
        t._ext = {"host_const": True}
    return t


def wrap_raw(arr) -> Tensor:
    """A raw backward's result array as a gradient tensor (as ``apply`` wraps its kernel's output)."""
    return _wrap(arr, _BY_DT.get(arr.dtype) or _dtype_of(arr))


def _zero_or_const(a):
    return a if not isinstance(a, Tensor) else _wrap(np.zeros_like(a._data, order="C"), a._dtype)


def _linear(cls, args, out, tangents):
    n = len(tangents)
    return cls.apply(*[t if t is not None else (0 if not isinstance(a, Tensor) else _zero_or_const(a))
                       for a, t in zip(args, tangents)], *args[n:])


def _multilinear(cls, args, out, tangents):
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = cls.apply(*args[:i], t, *args[i + 1:])
            if type(term) is tuple:
                term = term[0]
            total = term if total is None else total + term
    return total


linear = classmethod(_linear)
multilinear = classmethod(_multilinear)


def unsupported(name: str, why: str = ""):
    """A ``jvp`` for ops torch has no forward derivative for: raises torch's error naming the op."""
    def jvp(args, out, tangents):
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it{why}.")
    return staticmethod(jvp)


NOT_YET = " because it has not been implemented yet"


def refuse_tangents(name: str, *tensors: Tensor) -> None:
    """For composites whose torch counterpart has no forward derivative: torch's error when an input carries a
    tangent (the composite's own ops would otherwise give one)."""
    if _mode.interpose is None:
        return
    for t in tensors:
        ext = t._ext
        if ext is not None and ext.get("fw"):
            raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it{NOT_YET}.")


def _record(cls, args, checked: bool = False):
    """``apply`` recording a node; ``checked``: the devices are checked already (NOTE [device check])."""
    if not checked:
        for a in args:
            if isinstance(a, Tensor) and type(a._data) is not _nd:
                return _on_device(cls, args)
    node = _new(cls)
    node._seq = _next_seq()
    node._hooks = None
    node._saved = None
    nin = len(args) - cls.nattrs
    if nin == 1 and len(args) == 1:  # unary ops: no lists, no loop (the most common recorded call)
        a = args[0]
        if a._requires_grad:
            fn = a._grad_fn
            node._next = ((fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0),)
        else:
            node._next = (_NO_EDGE,)
        out = cls.forward(node, a._data) if not a._dtype._reduced else _forward_reduced(cls, node, (a._data,))
    elif nin == 2 and len(args) <= 3:  # binary ops (and one attribute, as add's alpha): unrolled
        a = args[0]
        b = args[1]
        reduced = False
        if isinstance(a, Tensor):
            va = a._data
            reduced = a._dtype._reduced
            if a._requires_grad:
                fn = a._grad_fn
                ea = (fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0)
            else:
                ea = _NO_EDGE
        else:
            va = a
            ea = _NO_EDGE
        if isinstance(b, Tensor):
            vb = b._data
            reduced = reduced or b._dtype._reduced
            if b._requires_grad:
                fn = b._grad_fn
                eb = (fn, b._output_nr) if fn is not None else (b._grad_accumulator(), 0)
            else:
                eb = _NO_EDGE
        else:
            vb = b
            eb = _NO_EDGE
        node._next = (ea, eb)
        vals = (va, vb) if len(args) == 2 else (va, vb, args[2]._data if isinstance(args[2], Tensor) else args[2])
        out = cls.forward(node, *vals) if not reduced else _forward_reduced(cls, node, vals)
    else:
        vals = []
        edges = []
        reduced = False
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                vals.append(a._data)
                reduced = reduced or a._dtype._reduced
                if i < nin and a._requires_grad:
                    fn = a._grad_fn
                    edges.append((fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0))
                    continue
            else:
                vals.append(a)
            if i < nin:
                edges.append(_NO_EDGE)
        node._next = tuple(edges)
        out = cls.forward(node, *vals) if not reduced else _forward_reduced(cls, node, vals)
    if type(out) is tuple:
        result = _wrap_outputs(cls, node, out)
        first = result[0]
    else:
        dt = _BY_DT.get(out.dtype) or _dtype_of(out)
        if dt.is_complex and cls.no_complex_grad:
            raise RuntimeError(f"{cls.no_complex_grad} does not support automatic differentiation for outputs with "
                               "complex dtype.")
        first = result = _wrap_out(out, dt, node, 0) if dt._differentiable else _wrap(out, dt)
        key = (out.shape, dt)
        meta = _META.get(key)
        if meta is None:
            if len(_META) >= 4096:
                _META.clear()
            meta = _META[key] = (key,)
        node._meta_out = meta
        if cls.is_view:
            _link_view(result, args[0])
    if cls._save_idx:
        node._saved = _save(cls, node, args, first)
    if _anomaly._enabled:
        _anomaly._on_record(node, args, result)
    return result


def _wrap_outputs(cls, node, out: tuple) -> tuple:
    """The outputs of a multi-output node: floating ones (those ``differentiable_outputs`` names) with history."""
    outs = []
    metas = []
    diff = cls.differentiable_outputs
    for i, o in enumerate(out):
        dt = _BY_DT.get(o.dtype) or _dtype_of(o)
        if dt.is_complex and cls.no_complex_grad and (diff is None or i in diff):
            raise RuntimeError(f"{cls.no_complex_grad} does not support automatic differentiation for outputs "
                               "with complex dtype.")
        if dt._differentiable and (diff is None or i in diff):
            t = _wrap_out(o, dt, node, i)
        else:
            t = _wrap(o, dt)
        outs.append(t)
        metas.append((o.shape, dt))
    node._meta_out = tuple(metas)
    return tuple(outs)


def _save(cls, node, args, first) -> list:
    """What ``cls.save`` names, for ``node``'s backward (a list: backward frees its values in place); None in
    place of a value no grad-requiring input needs (``save_for``)."""
    saved = []
    need = cls._save_need
    if need is None:
        for i in cls._save_idx:
            if i < 0:
                saved.append(_make_saved(first, True, 0))
            else:
                a = args[i]
                saved.append(_make_saved(a, False) if isinstance(a, Tensor) else a)
        return saved
    nxt = node._next
    for i, w in zip(cls._save_idx, need):
        if w is not None and (nxt[w][0] is None if type(w) is int else not _needed(nxt, w)):
            saved.append(None)  # no input whose gradient uses it requires grad (``save_for``)
        elif i < 0:
            saved.append(_make_saved(first, True, 0))
        else:
            a = args[i]
            saved.append(_make_saved(a, False) if isinstance(a, Tensor) else a)
    return saved


def _keeping_attrs(forward, n: int):
    """``forward`` that first keeps its trailing ``n`` arguments on ``ctx`` (a recorded node: ``Op.attrs``)."""
    def run(ctx, *vals):
        if ctx is not None:
            ctx._attrs = vals[-n:]
        return forward(ctx, *vals)
    run.__name__ = run.__qualname__ = getattr(forward, "__name__", "forward")
    run.__wrapped__ = forward
    return run


def _attr_getter(i: int):
    def get(node):
        return node._attrs[i]
    return get


def _public_name(cls) -> str:
    """The torch function name an op class stands for, for error messages (``LeakyReluBackward0`` -> leaky_relu)."""
    stem = cls._name.rsplit("::", 1)[-1].split("Backward")[0]
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(stem))


def _needed(edges: tuple, inputs: tuple) -> bool:
    for j in inputs:
        if edges[j][0] is not None:
            return True
    return False


# NOTE [reduced precision]
# torch's CPU kernels for the 16-bit floats (float16, bfloat16) load each value as float32, compute in float32 and
# round the result back once (round-to-nearest-even), per op. ember does the same at dispatch: when a tensor input of
# an op is a 16-bit float, its forward runs on float32 copies of those arrays and its float32 outputs are rounded
# back, so the kernels never see a 16-bit array (NumPy's float16 loops and ml_dtypes' bfloat16 ufuncs round after
# every step of a multi-step kernel, and ml_dtypes promotes some mixes to float32 on its own). Outputs round back only
# when every floating input has the same 16-bit dtype; a mix (an op handed float32 and bfloat16 arrays at once) keeps
# NumPy's float32 result. Views and the dtype cast run on the stored arrays (``reduced_native``): a view must share
# the 16-bit storage. Backward formulas are ember ops, so gradients compute the same way, in the input's dtype.
# Where torch's kernel accumulates in float32 across what are several ember ops (a composite such as a norm layer),
# ember rounds between them: docs/bfloat16.md lists these.
_F32 = np.dtype(np.float32)
_REDUCED_NP = D._REDUCED_NP


def _forward_reduced(cls, ctx, vals):
    """``cls.forward(ctx, *vals)`` for arrays some of which are 16-bit floats (NOTE [reduced precision])."""
    if cls.reduced_native:
        return cls.forward(ctx, *vals)
    back = _common_float(vals)
    up = []
    if back in _REDUCED_NP:
        slots = len(vals) - cls.nattrs
        if back == np.float16 and any(type(v) is complex or getattr(v, "dtype", _F32).kind == "c" for v in vals[:slots]):
            if D.result_type(*vals[:slots]) is D.complex32:  # float16 meeting a weaker complex: torch's complex32
                raise D._no_complex32()
        for i, v in enumerate(vals):
            if _B.is_array(v):
                if v.dtype.kind in "fV" and v.dtype != _F32:  # the common dtype first (torch casts to it), then f32
                    exact = v.ndim == 0 and i in cls.reduced_exact
                    v = (v if v.dtype == back or exact else v.astype(back)).astype(_F32)
                elif v.dtype == _F32 and not (v.ndim == 0 and i in cls.reduced_exact):
                    v = v.astype(back).astype(_F32)
            elif type(v) in (float, int) and ((i < slots and i not in cls.reduced_exact) or i in cls.reduced_attrs):
                v = float(_B.asarray(v, _F32).astype(back))  # a wrapped scalar takes the common dtype too
            up.append(v)
        return _round_back(cls.forward(ctx, *up), back)
    for v in vals:  # a wider float meets a 16-bit one: the 16-bit arrays go up, the result is the wider dtype
        up.append(v.astype(_F32) if _B.is_array(v) and v.dtype in _REDUCED_NP else v)
    return cls.forward(ctx, *up)


def _round_back_kernel(out, back):
    """The float32 outputs of a kernel rounded to the 16-bit ``back`` (overflow to inf silently, as torch:
    ``_round_back`` below is this, silent)."""
    if type(out) is tuple:
        return tuple(o.astype(back) if o.dtype == _F32 else o for o in out)
    return out.astype(back) if out.dtype == _F32 else out


def _common_float(vals):
    """torch's result dtype of the floating arrays among ``vals`` (dimensioned ones over 0-d ones)."""
    dim = zero = None
    for v in vals:
        if _B.is_array(v) and (v.dtype.kind == "f" or v.dtype in _REDUCED_NP):
            d = _BY_DT.get(v.dtype) or _dtype_of(v)
            if v.ndim:
                dim = d if dim is None else D.promote_types(dim, d)
            else:
                zero = d if zero is None else D.promote_types(zero, d)
    d = dim if dim is not None else zero
    return d.np if d is not None else None


def _on_host(args) -> bool:
    """Whether every tensor in ``args`` holds a plain NumPy array (NOTE [device check])."""
    for a in args:
        if isinstance(a, Tensor) and type(a._data) is not _nd:
            return False
    return True


def _mixed(first, second) -> RuntimeError:
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {first} "
                        f"and {second}!")


def _on_device(cls, args):
    """``apply`` for inputs not all on plain host arrays: the device check, then the op (NOTE [device check])."""
    dev = None  # the first device other than the CPU, as torch's common device
    kind = None  # its array type: further arrays of that type are on it when there is one device
    host = scalars = grad = reduced = False  # a CPU tensor of 1+ dims, a 0-d one, one requiring grad, 16-bit
    one = _B.SINGLE_DEVICE[0]
    for a in args:
        if isinstance(a, Tensor):
            grad = grad or a._requires_grad
            reduced = reduced or a._dtype._reduced
            arr = a._data
            t = type(arr)
            if t is kind and one:
                continue
            if t is _nd or _B.is_cpu_array(arr):
                if arr.ndim and (a._ext is None or not a._ext.get("host_const")):
                    host = True
                else:
                    scalars = True
                continue
            d = _B.device_of(arr)
            if dev is None:
                dev, kind = d, t
            elif d != dev:
                raise _mixed(dev, d)
    if dev is not None and not cls.moves:
        if host and not _mode.in_backward:
            raise _mixed(dev, _B._cpu)
        if scalars or host:
            from .device import to_device

            args = tuple(to_device(a, dev) if isinstance(a, Tensor) and _B.is_cpu_array(a._data) else a
                         for a in args)
    try:
        if grad and _mode.grad_enabled:
            out = _record(cls, args, True)
        elif reduced:
            out = _reduced(cls, args)
        else:
            res = cls.forward(None, *[a._data if isinstance(a, Tensor) else a for a in args])
            if type(res) is tuple:
                out = tuple(_wrap(o, _BY_DT.get(o.dtype) or _dtype_of(o)) for o in res)
            else:
                out = _wrap(res, _BY_DT.get(res.dtype) or _dtype_of(res))
                if cls.is_view:
                    _link_view(out, args[0])
    except TypeError as e:
        if dev is None or cls.moves or not _B.is_host_only(e):
            raise
        return _on_host_instead(cls, args, dev)
    if dev is not None and not cls.moves:
        for t in out if type(out) is tuple else (out,):
            if isinstance(t, Tensor) and type(t._data) is _nd:  # NOTE [host results]
                _B.host_results.add(cls.__name__)
                _B._sync("host result " + cls.__name__)  # (NOTE [stand-in counters])
                t._data = _B.to_device(t._data, dev)
                node = t._grad_fn
                for sv in (node._saved or ()) if node is not None else ():
                    if type(sv) is _SavedTensor and sv._is_output and type(sv._data) is _nd:
                        sv._data = _B.to_device(sv._data, dev)
    return out


def _host_attr(a):
    """An op's attribute with its device arrays (an index array a forward kept ...) copied to the host."""
    if type(a) in _B.ARRAYS:
        return _B.to_host(a)
    if type(a) is tuple or type(a) is list:
        return type(a)(_host_attr(v) for v in a)
    return a


def _on_host_instead(cls, args, dev):
    """``cls`` on the CPU for a kernel that cannot run on ``dev`` (NOTE [host fallback]): its tensors moved to the
    host and its results back, both recorded for autograd."""
    from .device import to_device

    _B.host_fallbacks.add(cls.__name__)
    _B._sync("host fallback " + cls.__name__)  # (NOTE [stand-in counters]; the moves count too)
    out = cls.apply(*[to_device(a, _B._cpu) if isinstance(a, Tensor) else _host_attr(a) for a in args])
    if type(out) is tuple:
        return tuple(to_device(o, dev) if isinstance(o, Tensor) else o for o in out)
    return to_device(out, dev)


def _apply_reduced(cls, args):
    """``apply`` without a graph for ops with a 16-bit float input."""
    return _reduced(cls, args) if _on_host(args) else _on_device(cls, args)


def _reduced(cls, args):
    out = _forward_reduced(cls, None, [a._data if isinstance(a, Tensor) else a for a in args])
    if type(out) is tuple:
        return tuple(_wrap(o, _BY_DT.get(o.dtype) or _dtype_of(o)) for o in out)
    t = _wrap(out, _BY_DT.get(out.dtype) or _dtype_of(out))
    if cls.is_view:
        _link_view(t, args[0])
    return t


def _link_view(out: Tensor, base: Tensor) -> None:
    """Make ``out`` a view of ``base``: same root base, shared version counter."""
    arr = out._data
    if arr.base is None and arr is not base._data and not _B.same_memory(arr, base._data):
        return  # NumPy had to copy (not a view after all)
    root = base._base if base._base is not None else base
    out._base = root
    out._vc = root._version_counter() if base._vc is None else base._vc
    if base._vc is None:
        base._vc = out._vc
    # A view is an inference tensor exactly when its base is (whatever the mode it is made in).
    bext = base._ext
    if bext is not None and bext.get("inference"):
        if out._ext is None:
            out._ext = {"inference": True}
    elif out._ext is not None:
        out._ext = None
    if bext is not None and bext.get("conj") and out._dtype.is_complex:  # NOTE [lazy conjugation]: views keep it
        out._ext = dict(out._ext or (), conj=True)
    _register_view(out, root)


def _set_inference(t: Tensor) -> None:
    t._ext = {"inference": True}


# NOTE [silent kernels]: torch computes x/0, log(0), 0*inf, exp(1000) ... to inf/nan without a word;
# NumPy warns (RuntimeWarning). ``silent(kernel)`` runs a kernel with NumPy's floating-point error
# reporting off, through the engine's switch of NumPy's error state (NOTE [NumPy error state] in
# ember/autograd/_fast.py).
def silent(kernel):
    """``kernel`` computing without NumPy's floating-point RuntimeWarnings."""
    set_state, reset_state = _set_np_err, _reset_np_err

    def run(*args):
        token = set_state(_NUMPY_QUIET)
        try:
            return kernel(*args)
        finally:
            reset_state(token)
    run.__name__ = run.__qualname__ = getattr(kernel, "__name__", "kernel")
    run._quiet_kernel = kernel  # (ember.compile calls the kernel itself inside one quiet region)
    return run


_round_back = silent(_round_back_kernel)


def cast_to(arr, dtype: D.dtype):
    """``arr`` as ``dtype`` (no copy when it already is)."""
    return arr if arr.dtype == dtype.np else arr.astype(dtype.np)


__all__ = ["Op", "cast_to", "const", "silent", "np", "linear", "multilinear", "unsupported", "wrap_raw"]
