"""The tracer: an interposition level that records one eager run as a program (NOTE [compile]).

``Tracer.process`` sees every ``Op.apply`` of the run (NOTE [interposition]), runs the op below itself (so the
eager run and its graph are exactly the uncompiled ones) and records a step: the op class, which arguments are
earlier values, inputs or constants, and whether the eager run gave the kernel a ctx. Values are arrays, known by
identity: an op's output array is the value it made; an array the run had before is an input (a tensor that existed
when the call began) or a constant (a tensor made during the call outside any op: ``zeros``, ``arange``, a mask).
The library reports what happens outside ops through ``_mode.tracer``: in-place writes (``_inplace``), a saved
value's private copy, random generators used, values read into Python (``.item()``, ``bool()`` ...: a break),
unexpected in-place changes (``Tensor._bump`` without a recorded write: a break), custom Functions and backward
passes inside the function (breaks), replayable helpers (NOTE [replayable steps]).

After the forward run, ``walk_backward`` runs the backward formulas of the nodes the run created, in the engine's
order (highest sequence number first, gradients summed in arrival order), on placeholder gradients, with the tracer
still active: the formulas are ember ops, so they are recorded as the backward program. The walk stops at edges
leaving the traced region (inputs' nodes and leaves); the gradients arriving there are the backward program's
results.
"""
from __future__ import annotations

import gc
import heapq
import os
import sys

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor, _wrap
from ..autograd import _interpose
from ..autograd import engine as _engine
from ..autograd import graph as G
from ..autograd.grad_mode import _mode
from ..ops import _op as _opmod
from ..ops.device import to_device as _to_device
from .program import Attr, Const, Item, Seq, Step, Value, Wrap

__all__ = ["Tracer", "Break", "user_site"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A developer's switch: a bare array made outside the ops, not certified by ``made``, that reaches an op breaks the
# call naming the library frame that made it (to find helpers that need ``made`` or ``replayable``). Without it such
# an array is a constant, which the confirming trace compares (NOTE [compile]).
_STRICT = os.environ.get("EMBER_COMPILE_STRICT") == "1"
_ARRAYS = _B.ARRAYS  # every device's array type (CuPy's joins when CuPy is imported)
_is_array = _B.is_array
_STAND_IN = _B.StandInArray
# the root of views of memory no value owns (an input's base, a constant's): never a reusable buffer
_FOREIGN = Value(-1, "k")
_FOREIGN.name = "_foreign"
_NODE_SLOTS = frozenset(G.Node.__slots__)
# Ops whose output shape depends on the input's values: a replayed program would build on one run's sizes.
_DATA_SHAPED = frozenset({"ArgwhereBackward0", "MaskedSelectBackward0", "Unique2Backward0", "UniqueBackward0",
                          "UniqueConsecutiveBackward0", "NonzeroBackward0", "NonzeroStaticBackward0"})


class Break:
    """Why a traced call cannot be replayed, and where (user file:line)."""

    __slots__ = ("reason", "site", "permanent")

    def __init__(self, reason: str, site, permanent: bool = True) -> None:
        self.reason = reason
        self.site = site
        self.permanent = permanent

    def where(self) -> str:
        return f"{self.site[0]}:{self.site[1]}" if self.site else "unknown location"

    def __str__(self) -> str:
        return f"{self.where()}: {self.reason}"


def user_site(depth: int = 2):
    """(filename, lineno) of the innermost frame outside the ember package."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


def _own_attrs(cls) -> tuple:
    attrs = cls.__dict__.get("_compile_attrs")
    if attrs is None:
        # what a forward kernel keeps on its ctx: the op's own __slots__ and its named attrs (NOTE [declaring an op])
        attrs = tuple(a for a in getattr(cls, "_attr_names", ()) if a not in _NODE_SLOTS and a != "__weakref__")
        cls._compile_attrs = attrs
    return attrs


def _add_to(buffers: dict, fn, nr: int, g) -> None:
    """Add gradient ``g`` of output ``nr`` of node ``fn`` to its buffer."""
    buf = buffers.get(fn)
    if buf is None:
        buf = buffers[fn] = [None] * len(fn._meta_out)
    buf[nr] = g if buf[nr] is None else buf[nr] + g


class Tracer(_interpose.Level):
    """Records the eager run of one call (NOTE [compile])."""

    decomposes = False  # it records fused nodes and raw backward steps as they run (NOTE [fused nodes under levels])

    def __init__(self, fullgraph: bool = False) -> None:
        self.fullgraph = fullgraph
        self.steps: list = []
        self.fwd_steps: list = []
        self.vals: dict = {}          # id(array or object) -> Value
        self.keep: list = []          # strong references: ids stay unique while the trace lives
        self.inputs: list = []        # input Values, in the order first seen
        self.gens: dict = {}          # id(ember Generator) -> rng Value
        self.nodes: dict = {}         # graph node made by a recorded op -> (its step, ctx Value or None)
        self.ctx_attrs: dict = {}     # backward phase: id(object stored on a ctx) -> Attr
        self.expected: dict = {}      # id(array) -> pending bumps a recorded write announced
        self.count = 0
        self.off = False
        self.broken: Break | None = None
        self.phase = "fwd"
        self.seq0 = G._next_seq()
        self.preexisting = None
        self.pre_arrays: dict = {}
        self.certified: set = set()   # ids of arrays made by factories (constants the program may hold)
        self.loose = False            # an array constant not made by a factory (it may come from the data)
        self.ops = 0
        self.bwd_site = None          # backward phase: the forward site of the node whose formula runs
        self.owners: dict = {}        # stand-in: id(hidden host array) -> the known stand-in array over all of it

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Remember every tensor alive now (those met later are inputs, the rest were made by the call)."""
        tensors = [o for o in gc.get_objects() if issubclass(type(o), Tensor)]
        self.keep.append(tensors)
        self.preexisting = {id(t) for t in tensors}
        # arrays of those tensors: an op attribute that is one (embedding's indices) is that tensor's input
        self.pre_arrays = {id(t._data): t for t in tensors if type(t._data) in _ARRAYS}
        for t in tensors:
            if type(t._data) is _STAND_IN:
                self._own(t._data)
        if G._hook_state.stack or G._hook_blocks[0]:
            self.fail("saved_tensors_hooks are active (activation checkpointing or offloading)", permanent=True)

    def new_value(self, kind: str, arr=None) -> Value:
        v = Value(self.count, kind, arr)
        self.count += 1
        return v

    def _register(self, obj, v: Value) -> None:
        self.vals[id(obj)] = v
        self.keep.append(obj)
        if type(obj) is _STAND_IN:
            self._own(obj)

    def _own(self, arr) -> None:
        """Stand-in only: remember ``arr`` as the known array over all of its hidden host array (a stand-in array
        is a view of a host one, and NumPy functions' views of it have that host array as their base, where a CuPy
        view's base is the CuPy array: NOTE [compiled on devices])."""
        o = _host_owner(arr)
        if (o is not None and id(o) not in self.owners and o.size == arr.size and o.dtype == arr.dtype
                and _B.address(o) == _B.address(arr) and arr.flags.c_contiguous):
            self.owners[id(o)] = arr

    # ------------------------------------------------------------------ breaks
    def fail(self, reason: str, permanent: bool = True, site=None) -> None:
        """Stop recording: the call goes on eagerly and is not replayed."""
        if self.broken is None:
            self.broken = Break(reason, site or user_site(3), permanent)
        self.off = True
        if _mode.tracer is self:
            _mode.tracer = None
        if self.fullgraph:
            from .._dynamo.exc import Unsupported

            raise Unsupported(f"ember.compile(fullgraph=True): graph break at {self.broken}")

    def read(self, t: Tensor, what: str) -> None:
        """``t``'s value was read into Python: a break (even a tensor made from constants: functions computing on
        arrays outside the ops make data look constant)."""
        if self.off:
            return
        self.fail(f"a tensor's value was read into Python ({what}); the result would depend on it")

    def unsupported(self, reason: str) -> None:
        if not self.off:
            self.fail(reason)

    def bumped(self, t: Tensor) -> None:
        """``t`` was changed in place: it must be a write this tracer recorded."""
        if self.off:
            return
        k = id(t._data)
        n = self.expected.get(k, 0)
        if n:
            if n == 1:
                del self.expected[k]
            else:
                self.expected[k] = n - 1
            return
        self.fail("a tensor was changed in place outside ember's ops (its writes cannot be replayed)")

    def generator(self, gen) -> None:
        """A random generator is about to be used (its stream is an input of the program; also inside replayable
        steps, whose draws the replay repeats)."""
        if self.broken is not None:
            return
        v = self.gens.get(id(gen))
        if v is None:
            v = self.new_value("rng")
            v.gen = gen
            v.snapshot = gen._rng.bit_generator.state
            v.name = f"rng{len(self.gens)}"
            self.gens[id(gen)] = v
            self.keep.append(gen)
        rng = gen._rng
        if self.vals.get(id(rng)) is not v:
            self._register(rng, v)

    # ------------------------------------------------------------------ values
    def value_of(self, t: Tensor) -> Value:
        """The Value of a tensor's array (made known on first sight: input, view or constant)."""
        arr = t._data
        v = self.vals.get(id(arr))
        if v is not None:
            return v
        if type(arr) not in _ARRAYS:  # (a device's array is one: NOTE [compiled on devices])
            self.fail("a batched tensor (vmap inside the compiled function)")
            return self.new_value("k", arr)
        if self.phase != "fwd":
            a = self.ctx_attrs.get(id(arr))
            if a is not None:
                return self._attr_value(a, arr)
        if id(t) in self.preexisting:
            return self._input(t)
        v = self._view_of_known(arr)
        if v is not None:
            return v
        if id(arr) not in self.certified:
            self.fail("a tensor computed outside ember's ops (from the data?) reaches an op" + _library_frame()
                      + ": the program could not recompute it", site=user_site(3))
        return self._constant(arr, t)

    def made(self, arr) -> None:
        """``arr`` was made by a factory from shapes and Python values (a constant the program may hold)."""
        if not self.off:
            self.certified.add(id(arr))
            self.keep.append(arr)

    def _input(self, t: Tensor) -> Value:
        arr = t._data
        v = self.new_value("in", arr)
        v.tensor = t
        v.edt = t._dtype
        v.snapshot = arr.copy()
        v.requires_grad = t._requires_grad
        if t._requires_grad:
            fn = t._grad_fn
            v.edge = (fn, t._output_nr) if fn is not None else (t._grad_accumulator(), 0)
        v.index = len(self.inputs)
        v.name = f"in{v.index}"
        self.inputs.append(v)
        self._register(arr, v)
        self.keep.append(t)
        return v

    def _constant(self, arr, t: Tensor | None = None) -> Value:
        v = self.new_value("k", arr)
        v.const = True
        v.snapshot = arr.copy()
        if t is not None:
            v.edt = t._dtype
        v.name = f"k{v.n}"
        self._register(arr, v)
        return v

    def _view_of_known(self, arr) -> Value | None:
        """A view taken on a known value's memory outside ops (``__iter__``, ``x._data[i]``): a ``view`` step."""
        base = arr.base
        if not _is_array(base):
            return None
        if type(arr) is _STAND_IN and id(base) not in self.vals:
            base = self.owners.get(id(_host_owner(arr)), base)
        root = self.vals.get(id(base))
        if root is None:
            t = self.pre_arrays.get(id(base))
            if t is not None and t._data is base:
                root = self._input(t)
        if root is None and self.phase != "fwd":  # a view of what a forward kernel kept on its ctx
            a = self.ctx_attrs.get(id(base))
            if a is not None:
                root = self._attr_value(a, base)
        if root is None or root.arr is not base or not base.flags.c_contiguous or arr.dtype != base.dtype:
            return None
        item = arr.itemsize
        off = _B.address(arr) - _B.address(base)
        if off % item or any(s % item for s in arr.strides):
            return None
        v = self.new_value("t" if self.phase == "fwd" else "b", arr)
        v.root = root
        v.const = root.const
        v.name = self._name(v)
        st = Step("view", None, [root, Const(off // item), Const(arr.shape), Const(tuple(s // item for s in arr.strides))],
                  [v], "view")
        st.site = user_site(3)
        v.owner = st
        self.steps.append(st)
        self._register(arr, v)
        return v

    def _attr_value(self, attr: Attr, arr) -> Value:
        v = self.new_value("b", arr)
        v.expr = attr
        v.name = self._name(v)
        st = Step("attr", None, [attr], [v], "saved by the forward kernel")
        v.owner = st
        self.steps.append(st)
        self._register(arr, v)
        return v

    def _name(self, v: Value) -> str:
        return ("t" if self.phase == "fwd" else "b") + str(v.n)

    def arg(self, a, top: bool):
        """The expression for one argument of an op (``top``: a positional argument, whose tensor the kernel
        receives as its array) or of an opaque step."""
        if isinstance(a, Tensor):
            v = self.value_of(a)
            return v if top else Wrap(v, a._dtype, a._requires_grad)
        if _is_array(a):
            v = self.vals.get(id(a))
            if v is not None:
                return v
            if self.phase != "fwd":
                at = self.ctx_attrs.get(id(a))
                if at is not None:
                    return self._attr_value(at, a)
            t = self.pre_arrays.get(id(a))
            if t is not None and t._data is a:
                return self._input(t)
            v = self._view_of_known(a)
            if v is not None:
                return v
            if id(a) not in self.certified and a.size > 1:
                if _STRICT:
                    self.fail("an array computed outside ember's ops (from the data?) is an op's argument"
                              + _library_frame() + ": the program could not recompute it", site=user_site(3))
                self.loose = True
            self.keep.append(a)
            return Const(a)
        if isinstance(a, (tuple, list)) and a:
            v = self.vals.get(id(a))
            if v is not None:  # an opaque step's result passed on whole
                return v
            if self.phase != "fwd":
                at = self.ctx_attrs.get(id(a))
                if at is not None:
                    return at
            items = [self.arg(x, False) for x in a]
            if all(type(x) is Const for x in items):
                return Const(a)
            return Seq(type(a), items)
        if isinstance(a, dict) and a:
            items = {k: self.arg(x, False) for k, x in a.items()}
            if all(type(x) is Const for x in items.values()):
                return Const(a)
            return Seq(dict, list(items.items()))
        if isinstance(a, np.random.Generator):
            v = self.vals.get(id(a))
            if v is None:
                self.fail("a NumPy random generator that is no ember Generator's stream")
                return Const(a)
            return v
        if self.phase != "fwd":
            at = self.ctx_attrs.get(id(a))
            if at is not None:  # a record of arrays a forward kernel kept on its ctx (ctc's label layout)
                return at
            if isinstance(a, G.Node):  # a node's raw backward (a replayable step) reads the replay's ctx
                made = self.nodes.get(a)
                if made is not None and made[1] is not None:
                    return Attr(made[1], ())
                self.fail(f"a {a.name()} node the program did not make reaches a replayed step", site=self.bwd_site)
                return Const(a)
        if _slot_arrays(a):
            self.fail(f"a {type(a).__name__} holding arrays computed during the call reaches an op"
                      + _library_frame() + ": the program could not recompute it", site=user_site(3))
        return Const(a)

    # ------------------------------------------------------------------ ops
    def process(self, cls, args: tuple):
        if self.off:
            return _interpose.call_below(self, cls, args)
        if G._hook_state.stack and self.phase == "fwd":
            self.fail("saved_tensors_hooks are active (activation checkpointing or offloading)")
            return _interpose.call_below(self, cls, args)
        if cls._name in _DATA_SHAPED or (cls._name == "IndexBackward0" and _bool_key(args)):
            self.fail(f"an op whose output shape depends on the data ({cls._name[:-9] or cls._name})")
            return _interpose.call_below(self, cls, args)
        if not cls.moves:
            args = self._moved(args)
        refs = [self.arg(a, True) for a in args]
        if self.off:
            return _interpose.call_below(self, cls, args)
        needs = False
        reduced = False
        if _mode.grad_enabled:
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    needs = True
                    break
        for a in args:
            if isinstance(a, Tensor) and a._dtype._reduced:
                reduced = True
        out = _interpose.call_below(self, cls, args)
        if self.off:
            return out
        if cls.__name__ in _B.host_fallbacks and _on_a_device(args):  # NOTE [compiled on devices]
            self.fail(f"{cls._name[:-9] or cls._name}'s kernel refuses device arrays (eager code runs it on the host: "
                      "NOTE [host fallback])")
            return out
        self.ops += 1
        outs = out if type(out) is tuple else (out,)
        st = Step("op", cls, refs, [], cls._name)
        st.multi = type(out) is tuple
        st.reduced = reduced and not cls.reduced_native
        st.site = user_site(3) if self.phase == "fwd" else self.bwd_site
        const = True
        for r in refs:
            if isinstance(r, Value) and not r.const:
                const = False
            if isinstance(r, Value) and r.kind == "rng":
                st.random = True
                const = False
            elif isinstance(r, (Seq, Wrap)):
                const = False
        node = None
        for o in outs:
            if not isinstance(o, Tensor):  # (no op returns other things; be safe)
                self.fail(f"{cls._name} returned a {type(o).__name__}")
                return out
            arr = o._data
            v = self.new_value("t" if self.phase == "fwd" else "b", arr)
            v.edt = o._dtype
            v.const = const
            v.name = self._name(v)
            v.owner = st
            base = arr.base
            if _is_array(base):  # a view: of which value's memory (None: of memory no value owns)
                v.root = self.vals.get(id(base)) or _FOREIGN
            st.outs.append(v)
            self._register(arr, v)
            if node is None and o._grad_fn is not None and type(o._grad_fn) is cls:
                node = o._grad_fn
        if needs and _own_attrs(cls):
            ctx = self.new_value("c")
            ctx.name = f"c{ctx.n}"
            ctx.owner = st
            st.ctx = ctx
        if node is not None:
            self.nodes[node] = (st, st.ctx)
        self.steps.append(st)
        return out

    def _moved(self, args: tuple) -> tuple:
        """``args`` with the CPU tensors that ``Op.apply`` would move to the op's device (0-d ones, constants of a
        backward formula: NOTE [device check] in ember/ops/_op.py) moved by a recorded ``to_device``, so the program
        hands the kernel device arrays as the eager run did (NOTE [compiled on devices])."""
        dev = None
        for a in args:
            if isinstance(a, Tensor) and not _B.is_cpu_array(a._data):
                dev = _B.device_of(a._data)
                break
        if dev is None:
            return args
        out = list(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and _B.is_cpu_array(a._data) and type(a._data) in _ARRAYS and (
                    not a._data.ndim or _mode.in_backward or (a._ext is not None and a._ext.get("host_const"))):
                out[i] = _to_device(a, dev)
        return tuple(out)

    def process_function(self, cls, args: tuple, kwargs: dict):
        """A custom autograd.Function: its forward and backward are Python the trace cannot see into."""
        self.unsupported(f"a custom autograd.Function ({cls.__name__})")
        saved = _mode.interpose
        _mode.interpose = self.below
        try:
            return cls.apply(*args, **kwargs)
        finally:
            _mode.interpose = saved

    # ------------------------------------------------------------------ outside ops
    def write(self, dst: Tensor, src: Tensor) -> None:
        """``dst``'s memory is about to receive ``src``'s values (an in-place op)."""
        if self.off:
            return
        if dst._data.shape != src._data.shape:
            self.fail("an out= tensor was resized")
            return
        d = self.value_of(dst)
        s = self.value_of(src)
        if self.off:
            return
        self._mark_written(d)
        st = Step("write", None, [d, s], [], "copy_")
        st.site = user_site(3)
        self.steps.append(st)
        k = id(dst._data)
        self.expected[k] = self.expected.get(k, 0) + 1

    def setitem(self, dst: Tensor, key, value) -> None:
        """``dst[key] = value`` without a graph is about to run."""
        if self.off:
            return
        d = self.value_of(dst)
        k = self.arg(key if isinstance(key, tuple) else (key,), False)
        val = self.arg(value, False)
        if self.off:
            return
        self._mark_written(d)
        st = Step("setitem", None, [d, Const(dst._dtype), k, val], [], "index_put_")
        st.site = user_site(3)
        self.steps.append(st)
        a = id(dst._data)
        self.expected[a] = self.expected.get(a, 0) + 1

    def restrided(self, t: Tensor) -> None:
        """``t`` took over a view op's result in place (``t_()``, ``as_strided_`` ...): its bump is expected."""
        if self.off:
            return
        k = id(t._data)
        self.expected[k] = self.expected.get(k, 0) + 1

    def _mark_written(self, v: Value) -> None:
        v.written = True
        if v.root is not None:
            v.root.written = True
        if v.kind == "k":
            v.const = False

    def copied(self, old, new) -> None:
        """``new`` is a private copy of ``old`` (a saved value protected from an in-place change)."""
        if self.off:
            return
        src = self.vals.get(id(old))
        if src is None:
            self.fail("an array copied outside ember's ops")
            return
        v = self.new_value("t", new)
        v.const = src.const
        v.name = self._name(v)
        st = Step("copy", None, [src], [v], "clone")
        v.owner = st
        self.steps.append(st)
        self._register(new, v)

    def opaque(self, fn, args: tuple, kwargs: dict):
        """A replayable helper (NOTE [replayable steps]): run it untraced, record one step calling it again."""
        if self.off:
            return fn(*args, **kwargs)
        a = [self.arg(x, False) for x in args]
        kw = {k: self.arg(x, False) for k, x in kwargs.items()}
        if self.off:
            return fn(*args, **kwargs)
        for e in a + list(kw.values()):
            _mark_escaping(e)
        self.off = True  # its own ops, writes and reads are not recorded; the generators it uses are
        try:
            result = fn(*args, **kwargs)
        finally:
            self.off = self.broken is not None
        res = self.new_value("o" if self.phase == "fwd" else "bo")  # (a backward program's own: never saved)
        res.name = f"o{res.n}"
        st = Step("opaque", fn, a, [res], getattr(fn, "__name__", "replayable"))
        st.kwargs = kw
        st.random = True
        st.site = user_site(3) if self.phase == "fwd" else self.bwd_site
        res.owner = st
        self.steps.append(st)
        if isinstance(result, (tuple, list)) or _is_array(result):
            self._register(result, res)
        else:
            self.keep.append(result)
        self._unpack(result, res, ())
        return result

    def _unpack(self, obj, res: Value, path: tuple) -> None:
        """Values for the arrays (tensors) inside an opaque step's result."""
        if isinstance(obj, Tensor):
            self._item(obj._data, res, path + ("_data",), obj._dtype)
        elif _is_array(obj):
            if path:
                self._item(obj, res, path, None)
        elif isinstance(obj, (tuple, list)) and len(path) < 3:
            if path:
                self._register(obj, self._item_value(obj, res, path))
            for i, x in enumerate(obj):
                self._unpack(x, res, path + (i,))

    def _item(self, arr, res: Value, path: tuple, edt) -> None:
        v = self._item_value(arr, res, path)
        v.edt = edt
        self._register(arr, v)

    def _item_value(self, obj, res: Value, path: tuple) -> Value:
        v = self.new_value("t" if self.phase == "fwd" else "b", obj if _is_array(obj) else None)
        v.name = self._name(v)
        v.expr = Item(res, path)
        st = Step("attr", None, [v.expr], [v], "")
        v.owner = st
        self.steps.append(st)
        return v

    # ------------------------------------------------------------------ backward
    def index_ctx_attrs(self) -> None:
        """Map what forward kernels stored on their ctx (arrays, tensors, tuples of them) to ``Attr`` expressions,
        for the backward formulas that read them."""
        for node, (_st, ctx) in self.nodes.items():
            if ctx is None:
                continue
            for name in _own_attrs(type(node)):
                try:
                    obj = object.__getattribute__(node, name)
                except AttributeError:
                    continue
                self._index_attr(obj, ctx, (name,), 0)

    def _index_attr(self, obj, ctx: Value, path: tuple, depth: int) -> None:
        if _is_array(obj):
            if id(obj) not in self.vals:
                self.ctx_attrs[id(obj)] = Attr(ctx, path)
                self.keep.append(obj)
                if type(obj) is _STAND_IN:
                    self._own(obj)
        elif isinstance(obj, Tensor):
            if id(obj._data) not in self.vals:
                self.ctx_attrs[id(obj._data)] = Attr(ctx, path + ("_data",))
                self.keep.append(obj)
        elif isinstance(obj, (tuple, list)) and depth < 2 and obj and _holds_arrays(obj):
            self.ctx_attrs.setdefault(id(obj), Attr(ctx, path))
            self.keep.append(obj)
            for i, x in enumerate(obj):
                self._index_attr(x, ctx, path + (i,), depth + 1)
        elif depth < 2 and _slot_arrays(obj):  # a record of arrays (__slots__): read from the replay's ctx
            self.ctx_attrs.setdefault(id(obj), Attr(ctx, path))
            self.keep.append(obj)
            for name in _slot_arrays(obj):
                self._index_attr(getattr(obj, name), ctx, path + (name,), depth + 1)

    def internal(self, node) -> bool:
        return node in self.nodes

    def walk_backward(self, roots: list) -> dict | None:
        """Run the backward formulas of the recorded nodes from ``roots`` ((tensor, gradient tensor) pairs) as the
        engine would, recording them; returns {input Value: gradient tensor} (None after a break)."""
        self.phase = "bwd"
        self.steps = []
        deps = self._dependencies(roots)
        buffers: dict = {}
        for t, g in roots:
            _add_to(buffers, t._grad_fn, t._output_nr, g)
        heap = [(-fn._seq, id(fn), fn) for fn in buffers if deps.get(fn, 0) == 0]
        heapq.heapify(heap)
        ext: dict = {}
        prev, prev_backward = _mode.grad_enabled, _mode.in_backward
        _mode.grad_enabled = False
        _mode.in_backward = True  # formulas' host constants follow the gradient's device, as in the engine
        try:
            while heap:
                fn = heapq.heappop(heap)[2]
                if not self._run_node(fn, buffers.pop(fn), buffers, deps, ext, heap):
                    return None
        finally:
            _mode.grad_enabled, _mode.in_backward = prev, prev_backward
        if buffers:
            self.fail("the backward graph could not be walked in full")
            return None
        return self._input_gradients(ext)

    def _dependencies(self, roots: list) -> dict:
        """{recorded node: how many recorded edges lead into it} over the graph reachable from ``roots``."""
        deps: dict = {}
        seen = set()
        stack = []
        for t, _ in roots:
            fn = t._grad_fn
            if fn not in seen:
                seen.add(fn)
                stack.append(fn)
        while stack:
            fn = stack.pop()
            for nxt, _ in fn._next:
                if nxt is None or not self.internal(nxt):
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return deps

    def _run_node(self, fn, grads: list, buffers: dict, deps: dict, ext: dict, heap: list) -> bool:
        """One node's formula on its gradients, each result added to the next node's buffer (recorded nodes) or to
        ``ext`` (edges leaving the trace); False after a break."""
        if fn._hooks is not None and (fn._hooks.pre or fn._hooks.post or fn._tensor_pre_hooks()):
            self.fail("a gradient hook on a tensor made inside the compiled function")
            return False
        edges = fn._next
        made = self.nodes.get(fn)
        self.bwd_site = made[0].site if made is not None else None
        result = fn._apply(grads)
        if self.off:
            return False
        if edges and len(result) != len(edges):
            _engine._validate(fn, result, edges)
        for (nxt, nr), g in zip(edges, result):
            if nxt is None:
                continue
            inside = self.internal(nxt)
            if g is not None:
                shape, dt = nxt._meta_out[nr]
                if type(g) is not Tensor or g._dtype is not dt or g._data.shape != shape:
                    g = _engine._fixed(fn, result, edges, nxt, nr, g)
                if inside:
                    _add_to(buffers, nxt, nr, g)
                else:
                    old = ext.get((nxt, nr))
                    ext[(nxt, nr)] = g if old is None else old + g
            elif inside and nxt not in buffers:
                buffers[nxt] = [None] * len(nxt._meta_out)
            if inside:
                d = deps[nxt] = deps[nxt] - 1
                if d == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
        return True

    def _input_gradients(self, ext: dict) -> dict | None:
        """{input Value: gradient} from the gradients that left the trace (None, a break, for one reaching a node
        no input of the trace stands for)."""
        by_edge = {}
        for v in self.inputs:
            if v.edge is not None:
                by_edge.setdefault((v.edge[0], v.edge[1]), v)
        out = {}
        for (node, nr), g in ext.items():
            v = by_edge.get((node, nr))
            if v is None:
                if type(node) is G.AccumulateGrad:
                    self.fail("a tensor that requires grad was made inside the compiled function (a new leaf)")
                else:
                    self.fail("a gradient reaches a node the trace did not record (a custom Function?)")
                return None
            out[v] = g
        return out


_PLUMBING = tuple(os.path.join(_PKG_DIR, p) for p in ("_compile", os.path.join("ops", "_op.py"), "_tensor.py",
                                                       os.path.join("autograd", "_interpose.py")))


def _library_frame() -> str:
    """`` (at ember/...:line in fn)``: the innermost library frame outside the compiler and the dispatch."""
    f = sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        if path.startswith(_PKG_DIR) and not path.startswith(_PLUMBING):
            return f" (at ember{path[len(_PKG_DIR):]}:{f.f_lineno} in {f.f_code.co_name})"
        f = f.f_back
    return ""


def _on_a_device(args) -> bool:
    return any(isinstance(a, Tensor) and not _B.is_cpu_array(a._data) for a in args)


def _host_owner(arr):
    """The host array owning a stand-in array's memory (the end of its chain of bases)."""
    o = arr.base
    while _is_array(o) and o.base is not None:
        o = o.base
    return o if type(o) is np.ndarray else None


def _slot_arrays(obj) -> tuple:
    """The ``__slots__`` of a plain record object that hold arrays (none for tensors, arrays and builtins)."""
    slots = getattr(type(obj), "__slots__", None)
    if not slots or isinstance(obj, Tensor) or _is_array(obj) or type(obj).__module__ == "builtins":
        return ()
    if isinstance(slots, str):
        slots = (slots,)
    return tuple(n for n in slots if _is_array(getattr(obj, n, None)))


def _holds_arrays(obj) -> bool:
    """A tuple/list with arrays or tensors in it (a tuple of sizes is a constant: shapes are guarded)."""
    return any(isinstance(x, Tensor) or _is_array(x) or (isinstance(x, (tuple, list)) and _holds_arrays(x))
               for x in obj)


def _bool_key(args) -> bool:
    key = args[1] if len(args) > 1 else ()
    for k in key if isinstance(key, tuple) else (key,):
        if _is_array(k) and k.dtype == np.bool_:
            return True
    return False


def _mark_escaping(e) -> None:
    if isinstance(e, Value):
        e.escapes = True
    elif isinstance(e, Wrap):
        e.value.escapes = True
    elif isinstance(e, Seq):
        for x in e.items:
            _mark_escaping(x[1] if isinstance(x, tuple) and len(x) == 2 and e.kind is dict else x)


def wrap_array(arr, edt) -> Tensor:
    """A plain tensor around a replayed array (opaque steps' arguments, tensors inside attributes)."""
    return _wrap(arr, edt if edt is not None else _opmod._dtype_of(arr))
