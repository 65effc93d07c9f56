"""The compiled program: values, steps, dead-code elimination, buffer reuse and Python source generation.

A program is what one traced eager run did, as a flat list of steps over values (NOTE [compile]):

- a ``Value`` is one array (or, for ctx objects and opaque results, one Python object) of the run: an external
  input, a constant, a random generator's stream, an op's output, a gradient fed to the backward program;
- a ``Step`` makes values: ``op`` (an op's array kernel, ``Op.forward``, with a fresh ctx when the eager run
  recorded a node), ``opaque`` (a replayable helper called again, NOTE [replayable steps]), ``write`` / ``setitem``
  (in-place changes), ``copy`` and ``view`` (arrays made outside ops: a saved value's private copy, a view taken
  on arrays), ``ufunc`` (an op whose kernel is one NumPy ufunc, called directly, possibly into a dead buffer).

Arguments of steps are expressions over values: the value itself, a constant, a tuple/list of expressions, a
tensor wrapping a value (``_T(t3, float32)``, for tensors nested in an op's attributes) or an attribute of a ctx
(``c5.indices``: what a forward kernel stored for the backward program).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B

__all__ = ["Value", "Step", "Const", "Seq", "Wrap", "Attr", "Item", "dce", "plan_buffers", "Source"]


class Value:
    """One array or object of the traced run."""

    __slots__ = ("n", "kind", "name", "shape", "dtype", "edt", "const", "arr", "tensor", "snapshot", "edge",
                 "gen", "written", "root", "src", "requires_grad", "expr", "escapes", "owner", "index")

    def __init__(self, n: int, kind: str, arr=None) -> None:
        self.n = n
        self.kind = kind      # in, rng, k (constant), t (forward), c (ctx), o (opaque result), g (grad), b (backward)
        self.name = None
        self.arr = arr
        self.shape = getattr(arr, "shape", None)
        self.dtype = getattr(arr, "dtype", None)
        self.edt = None       # the ember dtype of the tensor this array belongs to (outputs, wrapped tensors)
        self.const = False
        self.tensor = None    # inputs: the tensor of the traced call
        self.snapshot = None  # inputs and constants: the values before the run changed them
        self.edge = None      # inputs: (node, nr) the gradient goes to, at the traced call
        self.gen = None       # rng: the ember Generator
        self.written = False  # some step writes into this array (or a view of it)
        self.root = None      # the value whose memory this one views (views of values)
        self.src = None       # inputs: where the tensor is found on each call (guards.Source)
        self.requires_grad = False
        self.expr = None      # values taken out of an opaque step's result: the access path
        self.escapes = False  # an opaque step saw it (it may keep a reference)
        self.owner = None     # the step that makes it
        self.index = -1       # inputs: position in the input list

    def __repr__(self) -> str:
        return f"<{self.name or self.kind + str(self.n)} {self.shape} {self.dtype}>"


class Const:
    """A constant argument."""

    __slots__ = ("obj",)

    def __init__(self, obj) -> None:
        self.obj = obj


class Seq:
    """A tuple or list whose items are expressions."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: type, items: list) -> None:
        self.kind = kind
        self.items = items


class Wrap:
    """A tensor around a value's array (an op attribute that is a tensor, an opaque step's tensor argument)."""

    __slots__ = ("value", "edt", "requires_grad")

    def __init__(self, value: Value, edt, requires_grad: bool = False) -> None:
        self.value = value
        self.edt = edt
        self.requires_grad = requires_grad


class Attr:
    """An object stored on a ctx by a forward kernel: ``ctx.name`` then items / ``._data`` along ``path``."""

    __slots__ = ("ctx", "path")

    def __init__(self, ctx: Value, path: tuple) -> None:
        self.ctx = ctx
        self.path = path


class Item:
    """A part of an opaque step's result: ``result[i]`` / ``._data`` along ``path``."""

    __slots__ = ("value", "path")

    def __init__(self, value: Value, path: tuple) -> None:
        self.value = value
        self.path = path


class Step:
    """One line of the program."""

    __slots__ = ("kind", "fn", "args", "kwargs", "outs", "ctx", "reduced", "site", "label", "ufunc", "out_into",
                 "random", "multi", "ctx_off", "fast", "orig_args")

    def __init__(self, kind: str, fn, args: list, outs: list, label: str = "") -> None:
        self.kind = kind      # op, ufunc, opaque, write, setitem, copy, view, init (a constant's fresh copy)
        self.fn = fn
        self.args = args
        self.kwargs = None
        self.outs = outs      # Values made (None for outputs nobody can see)
        self.ctx = None       # op: the ctx Value, or None (forward called with ctx=None)
        self.reduced = False  # op: 16-bit inputs, forward through _forward_reduced
        self.site = None      # (filename, lineno) of the user code that ran it
        self.label = label    # the op's node name, for the generated comments
        self.ufunc = None     # op: the NumPy ufunc computing it (checked on the traced arrays)
        self.out_into = None  # ufunc: the dead Value whose buffer receives the result
        self.random = False   # draws from a generator: never removed
        self.multi = False    # op: forward returns a tuple
        self.ctx_off = False  # op: the ctx is made by the eager run but read by no backward program
        self.fast = None      # fast: the NumPy lines standing for the op's kernel (kernels.fast_form)
        self.orig_args = None  # ufunc/fast: the op's arguments (a rebuild goes back to the op)

    def uses(self):
        """Every Value this step reads."""
        out = []
        _collect(self.args, out)
        if self.kwargs:
            _collect(list(self.kwargs.values()), out)
        if self.ctx is not None and self.kind != "op":
            out.append(self.ctx)
        if self.out_into is not None:  # the dead buffer it writes into (its name stays its until here)
            out.append(self.out_into)
        return out


def _collect(expr, out: list) -> None:
    if isinstance(expr, Value):
        out.append(expr)
    elif isinstance(expr, (list, tuple)):
        for e in expr:
            _collect(e, out)
    elif isinstance(expr, Seq):
        _collect(expr.items, out)
    elif isinstance(expr, Wrap):
        out.append(expr.value)
    elif isinstance(expr, Attr):
        out.append(expr.ctx)
    elif isinstance(expr, Item):
        out.append(expr.value)


class Source:
    """Where an input tensor is found on each call (the guard code reads it from there)."""

    __slots__ = ("kind", "expr", "label", "obj")

    def __init__(self, kind: str, expr: str, label: str, obj=None) -> None:
        self.kind = kind      # arg, param, buffer, attr, closure, global, held (the traced tensor itself), grad, base
        self.expr = expr      # Python expression in the guard function
        self.label = label    # readable: "x", "fc1.weight", "closure xs[3]"
        self.obj = obj        # what the expression needs bound (a module, a cell, a dict, the tensor)


# ----------------------------------------------------------------------------- dead code
def dce(steps: list, live: set) -> list:
    """``steps`` without the ones whose results nobody needs. ``live``: the Values that must exist at the end
    (outputs, saved values); writes, opaque steps and random draws always stay."""
    keep = []
    need = set(live)
    for st in reversed(steps):
        side = st.kind in ("write", "setitem", "opaque") or st.random
        if not side:
            made = [v for v in st.outs if v is not None]
            if st.ctx is not None:
                made.append(st.ctx)
            if not any(v in need for v in made):
                continue
        keep.append(st)
        for v in st.uses():
            need.add(v)
            if v.root is not None:
                need.add(v.root)
        if st.kind in ("write", "setitem"):  # the written array must exist (its root too)
            tgt = st.args[0]
            if isinstance(tgt, Value):
                need.add(tgt)
    keep.reverse()
    return keep


# ----------------------------------------------------------------------------- common subexpressions
def cse(steps: list, keep: set) -> list:
    """``steps`` with repeated pure steps (the same kernel on the same values and constants) made once: later
    uses read the first result. Only op steps without a ctx and without random draws, whose results are never
    written, take part; a write or an opaque step in between ends every earlier match (values may have changed)."""
    seen: dict = {}
    alias: dict = {}
    out = []
    for st in steps:
        if alias:
            st.args = _rename(st.args, alias)
            if st.kwargs:
                st.kwargs = {k: _rename(v, alias) for k, v in st.kwargs.items()}
        if st.kind in ("write", "setitem", "opaque"):
            seen.clear()
        elif st.kind == "op" and not st.random and (st.ctx is None or st.ctx_off) \
                and not any(v is None or v.written for v in st.outs):
            key = _key(st)
            if key is not None:
                first = seen.get(key)
                if first is not None and all(v not in keep for v in st.outs):
                    for a, b in zip(st.outs, first.outs):
                        alias[a] = b
                    continue
                seen[key] = st
        out.append(st)
    return out


def _rename(expr, alias: dict):
    if isinstance(expr, Value):
        return alias.get(expr, expr)
    if isinstance(expr, list):
        return [_rename(e, alias) for e in expr]
    if isinstance(expr, tuple):
        return tuple(_rename(e, alias) for e in expr)
    if isinstance(expr, Seq):
        return Seq(expr.kind, [_rename(e, alias) for e in expr.items])
    if isinstance(expr, Wrap):
        return Wrap(alias.get(expr.value, expr.value), expr.edt, expr.requires_grad)
    return expr


def _key(st: Step):
    """A hashable description of what a step computes (None: do not merge it)."""
    parts = [st.kind, st.label if st.kind != "ufunc" else st.ufunc.__name__, st.fn if st.kind == "op" else None,
             st.reduced]
    for a in st.args:
        if isinstance(a, Value):
            parts.append(("v", a.n))
        elif isinstance(a, Const):
            lit = literal(a.obj)
            if lit is None:
                if not isinstance(a.obj, (np.dtype, type(None))):
                    return None
                lit = repr(a.obj)
            parts.append(("c", type(a.obj).__name__, lit))
        else:
            return None
    return tuple(parts)


# ----------------------------------------------------------------------------- buffer reuse
def plan_buffers(steps: list, keep: set, kind: str) -> None:
    """Let ``ufunc`` steps write into the buffer of a value that died before them (same shape and dtype), so a
    step allocates nothing. A buffer is reused only when nothing else can see it: a ``kind`` value (this program's
    own: ``t`` forward, ``b`` backward) made by an op or ufunc, owning its memory and not viewed, never written,
    not kept (outputs, saved values) and not passed to an opaque step."""
    last = {}
    viewed = set()
    for i, st in enumerate(steps):
        for v in st.uses():
            last[v] = i
        for v in st.outs:
            if v is not None and v.root is not None:
                viewed.add(v.root)
    free: dict = {}
    for i, st in enumerate(steps):
        dying = [v for v in dict.fromkeys(st.uses()) if last.get(v) == i and _reusable(v, keep, viewed, kind)]
        if st.kind == "ufunc":
            # a ufunc may write into one of its own dying arguments (NumPy handles the exact overlap)
            for v in dying:
                free.setdefault((v.shape, v.dtype), []).append(v)
            dying = []
            v = st.outs[0]
            pool = free.get((v.shape, v.dtype))
            if pool:
                st.out_into = pool.pop()
        for v in dying:  # free after the step
            free.setdefault((v.shape, v.dtype), []).append(v)


def _reusable(v: Value, keep: set, viewed: set, kind: str) -> bool:
    return (v.kind == kind and v not in keep and v not in viewed and v.root is None and not v.written
            and not v.escapes and v.expr is None and v.owner is not None and v.owner.kind in ("ufunc", "op", "fast")
            and isinstance(v.shape, tuple) and len(v.shape) > 0 and v.dtype is not None)


# ----------------------------------------------------------------------------- source
_LITERAL_TYPES = (bool, int, str, type(None), type(Ellipsis))


def literal(obj) -> str | None:
    """A Python literal for ``obj`` when one reads back as an equal object of the same type, else None."""
    t = type(obj)
    if t in _LITERAL_TYPES:
        return repr(obj)
    if t is float:
        return repr(obj) if math.isfinite(obj) else None
    if t is slice:
        parts = [literal(p) for p in (obj.start, obj.stop, obj.step)]
        return None if None in parts else f"slice({', '.join(parts)})"
    if t is tuple:
        parts = [literal(p) for p in obj]
        if None in parts:
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return None


def same_value(a, b) -> bool:
    """Whether two constants (of two traces) are the same: equal arrays bit for bit on one device, equal plain
    values."""
    if _B.is_array(a) or _B.is_array(b):
        return _same_arrays(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b) or a is b
    except Exception:  # noqa: BLE001 - objects without a usable ==: identity
        return a is b


def _bits(a) -> bytes:
    return _B.to_host(a).tobytes()  # (C order, whatever its strides)


def _same_arrays(a, b) -> bool:
    """Two arrays of one type (so one kind of device: a host result where the eager run had a device array is a
    difference), on one device, with the same shape, dtype and bytes."""
    return (type(a) is type(b) and _B.is_array(a) and a.shape == b.shape and a.dtype == b.dtype
            and _B.device_of(a) == _B.device_of(b) and _bits(a) == _bits(b))


def same_array(a, b) -> bool:
    """Bit-for-bit equality of two arrays (the check of a replay against the eager run)."""
    if not (_B.is_array(a) and _B.is_array(b)):
        return same_value(a, b)
    return _same_arrays(a, b)


# ----------------------------------------------------------------------------- local names
def allocate_names(steps: list, live_out, prefix: str) -> None:
    """Name the values ``steps`` make with recycled local names: a name whose value is dead is given to the next
    value made, so arrays are dropped as soon as they are dead (the generated function keeps no more alive than
    the eager run would) and freed memory is reused while hot. A ufunc writing into a dead buffer takes its name."""
    last = {}
    for i, st in enumerate(steps):
        for v in st.uses():
            last[v] = i
    end = len(steps)
    for v in live_out:
        last[v] = end
    mine = set()
    for st in steps:
        for v in st.outs:
            if v is not None and v.kind in ("t", "b", "bo", "o"):
                mine.add(v)
    pool: list = []
    count = 0
    for i, st in enumerate(steps):
        dying = [v.name for v in dict.fromkeys(st.uses()) if v in mine and last.get(v) == i and v.name is not None]
        # one call binds its result after reading its arguments: it may take a dying argument's name; lines of
        # several statements write their result first, so their arguments' names are free only after them
        late = st.kind == "fast" and len(st.fast) > 1
        if not late:
            pool.extend(dying)
        for j, v in enumerate(st.outs):
            if v is None or v not in mine:
                continue
            if v not in last:
                v.name = "_"
                continue
            if j == 0 and st.out_into is not None and st.out_into.name in pool:
                pool.remove(st.out_into.name)
                v.name = st.out_into.name
            elif pool:
                v.name = pool.pop()
            else:
                v.name = f"{prefix}{count}"
                count += 1
        if late:
            pool.extend(dying)
