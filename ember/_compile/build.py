"""From a finished trace to a runnable program: outputs, backward patterns, saved values, Python source.

``build`` turns a ``Tracer`` that recorded a call (forward steps, one backward walk per pattern of outputs that
receive gradients) into a ``Program``: dead steps removed, elementwise ops bound to their NumPy ufuncs (each checked
bit for bit on the traced arrays), dead buffers reused by later ufuncs, and one Python module of source text holding
``forward`` and a ``backward_<k>`` per pattern, compiled with ``exec``. ``Program.code`` is that text.
"""
from __future__ import annotations

import linecache
import re
import math

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Tensor, _new
from ..ops import _op as _opmod
from .program import (Attr, Const, Item, Seq, Step, Value, Wrap, allocate_names, cse, dce, literal, plan_buffers,
                      same_array)
from .trace import wrap_array
from . import kernels as _kernels

__all__ = ["Program", "Output", "build", "UFUNCS"]

# Ops whose kernel is one NumPy ufunc on same-dtype arrays (attributes: their neutral values). A step uses the
# ufunc only when it reproduces the op's output bit for bit on the traced arrays.
UFUNCS = {
    "AddBackward0": (np.add, (1,)), "SubBackward0": (np.subtract, (1,)), "MulBackward0": (np.multiply, ()),
    "DivBackward0": (np.true_divide, ()), "NegBackward0": (np.negative, ()), "ExpBackward0": (np.exp, ()),
    "LogBackward0": (np.log, ()), "TanhBackward0": (np.tanh, ()), "SqrtBackward0": (np.sqrt, ()),
    "SinBackward0": (np.sin, ()), "CosBackward0": (np.cos, ()), "AbsBackward0": (np.absolute, ()),
    "MaximumBackward0": (np.maximum, ()), "MinimumBackward0": (np.minimum, ()),
}
# The program line of each step kind that is one call or expression of its arguments (``{args}``, their expressions
# joined) binding its outputs (``{lhs}``): a write into an array, an assignment through a key, a copy, a view at a
# geometry, a value the forward kernel saved, a tensor the call makes.
_TEMPLATES = {"write": "_copyto({args})", "setitem": "_setitem({args})", "copy": "{lhs} = {args}.copy()",
              "view": "{lhs} = _view({args})", "attr": "{lhs} = {args}", "init": "{lhs} = {args}.copy()"}


class Output:
    """How one leaf of the function's result is made on each call."""

    __slots__ = ("kind", "value", "index", "obj", "requires_grad", "edt", "nr", "version", "base", "conj")

    def __init__(self, kind: str) -> None:
        self.kind = kind          # value (a tensor around a program value), input (the input tensor itself),
        self.value = None         # same (an earlier leaf again), const (a plain Python leaf)
        self.index = -1           # input: the input's position; same: the leaf's position
        self.obj = None
        self.requires_grad = False
        self.edt = None
        self.nr = -1              # output number on the compiled node (requires_grad outputs)
        self.version = 0
        self.base = -1            # a view of input ``base`` (linked as eager links views)
        self.conj = False         # the conjugate bit is set (NOTE [lazy conjugation])


class Pattern:
    """The backward program for one set of outputs receiving gradients."""

    __slots__ = ("grads", "steps", "results", "fn", "name", "check")

    def __init__(self, grads: list, steps: list, results: dict) -> None:
        self.grads = grads        # grad Value per output number in the pattern (None: no gradient)
        self.steps = steps
        self.results = results    # input Value -> gradient Value
        self.fn = None
        self.name = ""
        self.check = None         # the eager gradients (input Value -> array), for verification


class Program:
    """One compiled trace (NOTE [compile])."""

    def __init__(self) -> None:
        self.inputs: list = []
        self.rngs: list = []
        self.fwd: list = []
        self.outputs: list = []
        self.spec = None
        self.patterns: dict = {}      # tuple of output numbers with gradients -> Pattern
        self.saved: list = []
        self.n_grad_out = 0           # outputs of the compiled node
        self.meta_out: tuple = ()
        self.grad_inputs: list = []   # input Values receiving gradients, in edge order
        self.written_inputs: list = []
        self.version_checks: list = []  # input Values saved for backward (their version is checked there)
        self.consts: dict = {}        # name -> object bound in the module
        self.forward = None
        self.code = ""
        self.filename = ""
        self.steps_count = 0
        self.bumps: list = []         # (input Value, writes into it): version bumps made on each call
        self.guard = None
        self.guard_code = ""
        self.guard_reasons: list = []
        self.sites: list = []         # user (file, line) of each line of ``code``
        self.loose = True             # holds array constants no factory made (NOTE [compile]: value guards)

    def release(self) -> None:
        """Drop what only tracing needed (the traced arrays and tensors); keep constants."""
        for v in self.inputs:
            v.tensor = None
            v.arr = None
            v.snapshot = None
        for v in self.rngs:
            v.snapshot = None
        for st in self.fwd:
            for v in st.outs:
                if v is not None:
                    v.arr = None
        for pat in self.patterns.values():
            pat.check = None
            for st in pat.steps:
                for v in st.outs:
                    if v is not None:
                        v.arr = None


# ----------------------------------------------------------------------------- ufunc binding
def _bind_ufunc(st: Step) -> None:
    """Make an elementwise op step call its ufunc directly when that is bit-identical on the traced arrays."""
    entry = UFUNCS.get(st.label)
    if entry is None or st.reduced or st.multi or len(st.outs) != 1:
        return
    uf, neutral = entry
    nin = uf.nin
    args = st.args
    if len(args) != nin + len(neutral) or any(not (isinstance(a, Const) and a.obj == n and type(a.obj) in (int, float))
                                               for a, n in zip(args[nin:], neutral)):
        return
    out = st.outs[0]
    if out.arr is None or not _B.is_array(out.arr) or out.arr.ndim == 0:
        return
    vals = []
    for a in args[:nin]:
        if isinstance(a, Value):
            if not _B.is_array(a.arr) or a.arr.dtype != out.arr.dtype:
                return
            vals.append(a.arr)
        elif isinstance(a, Const) and type(a.obj) in (int, float) and out.arr.dtype.kind == "f":
            vals.append(a.obj)
        else:
            return
    try:
        with np.errstate(all="ignore"):
            got = uf(*vals)
    except Exception:  # noqa: BLE001 - no ufunc path: the op's kernel stays
        return
    if same_array(got, out.arr):  # (an array of the same type: on the same device)
        st.orig_args = st.args
        st.kind = "ufunc"
        st.ufunc = uf
        st.args = list(args[:nin])


def _bind_fast(st: Step) -> None:
    """Write an op step as its NumPy calls (kernels.fast_form) when they reproduce the traced output exactly."""
    if (st.ctx is not None and not st.ctx_off) or len(st.outs) != 1 or st.outs[0] is None:
        return
    names, arrays = [], []
    for i, a in enumerate(st.args):
        if isinstance(a, Value) and _B.is_array(a.arr):
            names.append(f"@{i}@")  # (a slot: the value's name is given when the lines are written)
            arrays.append(a.arr)
        elif isinstance(a, Const):
            lit = literal(a.obj)
            if lit is None and not isinstance(a.obj, (np.generic,)):
                if a.obj is not None and not isinstance(a.obj, D.dtype):
                    return
            names.append(lit if lit is not None else "_")
            arrays.append(a.obj)
        else:
            return
    out = st.outs[0]
    if not _B.is_array(out.arr):
        return
    lines = _kernels.fast_form(st, names, arrays, "@out@")
    if lines and _kernels.check(lines, names, arrays, out.arr):
        st.orig_args = st.args
        st.kind = "fast"
        st.fast = lines


# ----------------------------------------------------------------------------- code generation
class _Gen:
    """Names every object the program needs and writes its lines."""

    def __init__(self) -> None:
        self.globs: dict = {"np": np, "_new": _new, "_T": wrap_array, "_fwd16": _opmod._forward_reduced,
                            "_copyto": _copyto, "_to_device": _to_device, "_setitem": _setitem, "_view": _view,
                            "_arr": _arr, "_arrs": _arrs}
        self.names: dict = {}    # id(obj) -> global name
        self.keep: list = []
        self.backward = False    # writing a backward program (inputs are saved arrays there)
        self.kernels: dict = {}  # op class -> the name of its kernel

    def bind(self, obj, stem: str) -> str:
        name = self.names.get(id(obj))
        if name is not None:
            return name
        name = stem
        k = 1
        while name in self.globs:
            name = f"{stem}_{k}"
            k += 1
        self.globs[name] = obj
        self.names[id(obj)] = name
        self.keep.append(obj)
        return name

    def const(self, obj) -> str:
        lit = literal(obj)
        if lit is not None:
            return lit
        if isinstance(obj, D.dtype):
            return self.bind(obj, obj.name)
        if isinstance(obj, np.dtype):
            return self.bind(obj, "np_" + obj.name)
        if isinstance(obj, float):
            return self.bind(obj, "nan" if math.isnan(obj) else ("inf" if obj > 0 else "ninf"))
        return self.bind(obj, "k")

    def expr(self, e) -> str:
        if isinstance(e, Value):
            return e.name
        if isinstance(e, Const):
            return self.const(e.obj)
        if isinstance(e, Seq):
            if e.kind is dict:
                return "{" + ", ".join(f"{self.const(k)}: {self.expr(v)}" for k, v in e.items) + "}"
            inner = ", ".join(self.expr(x) for x in e.items)
            if e.kind is list:
                return "[" + inner + "]"
            if e.kind is tuple:
                return "(" + inner + ("," if len(e.items) == 1 else "") + ")"
            return f"{self.bind(e.kind, e.kind.__name__)}([{inner}])"
        if isinstance(e, Wrap):
            if e.value.kind == "in" and not self.backward:  # the input tensor itself (its version, its dtype)
                return f"_tensors[{e.value.index}]"
            return f"_T({e.value.name}, {self.const(e.edt)})"
        if isinstance(e, Attr):
            return e.ctx.name + _path(e.path)
        if isinstance(e, Item):
            return e.value.name + _path(e.path)
        raise TypeError(f"cannot write {type(e).__name__}")

    def op_class(self, cls) -> str:
        return self.bind(cls, cls._name.rsplit("::", 1)[-1])

    def kernel(self, cls) -> str:
        """The op's forward kernel, without the NumPy error-state wrapper (the whole program runs quiet)."""
        name = self.kernels.get(cls)
        if name is None:
            name = self.kernels[cls] = self._kernel(cls)
        return name

    def _kernel(self, cls) -> str:
        fn = next(c.__dict__["forward"] for c in cls.__mro__ if "forward" in c.__dict__)
        # a silent kernel's own function: the program runs in one quiet region (other wrappers, such as the one
        # keeping an op's named attrs on its ctx, stay)
        if isinstance(fn, classmethod):  # bound to the op's own class, as cls.forward is
            raw = fn.__func__
            fn = getattr(raw, "_quiet_kernel", raw).__get__(cls)
        else:
            fn = getattr(fn, "__func__", fn)
            fn = getattr(fn, "_quiet_kernel", fn)
        stem = cls._name.rsplit("::", 1)[-1]
        for suffix in ("Backward0", "Backward1", "Backward2", "Backward3", "Backward4", "Backward"):
            if stem.endswith(suffix) and len(stem) > len(suffix):
                stem = stem[: -len(suffix)]
                break
        return self.bind(fn, stem)

    def line(self, st: Step) -> str:
        outs = st.outs
        lhs = ", ".join(v.name if v is not None else "_" for v in outs)
        if st.kind == "op":
            args = ", ".join(self.expr(a) for a in st.args)
            made = st.ctx is not None and not st.ctx_off
            ctx = st.ctx.name if made else "None"
            pre = f"{st.ctx.name} = _new({self.op_class(st.fn)}); " if made else ""
            if st.reduced:
                call = f"_fwd16({self.op_class(st.fn)}, {ctx}, ({args}{',' if len(st.args) == 1 else ''}))"
            else:
                call = f"{self.kernel(st.fn)}({ctx}{', ' if args else ''}{args})"
            if any(v is not None and v.shape == () for v in outs):  # NOTE [0-d results are arrays], as _wrap
                call = f"_arrs({call})" if st.multi else f"_arr({call})"
            dev = _host_result_device(st)
            if dev is not None:  # NOTE [host results]: moved to the op's device, as Op.apply moves them
                call = f"_to_device({call}, {self.bind(dev, 'cuda')})"
            if st.multi:
                lhs = lhs + ("," if len(outs) == 1 else "")
            return f"{pre}{lhs} = {call}"
        if st.kind == "fast":
            text = "; ".join(st.fast).replace("@out@", st.outs[0].name)
            return _SLOT.sub(lambda m: st.args[int(m.group(1))].name, text)
        if st.kind == "ufunc":
            args = ", ".join(self.expr(a) for a in st.args)
            into = f", out={st.out_into.name}" if st.out_into is not None else ""
            return f"{lhs} = np.{st.ufunc.__name__}({args}{into})"
        if st.kind == "opaque":
            parts = [self.expr(a) for a in st.args]
            parts += [f"{k}={self.expr(v)}" for k, v in (st.kwargs or {}).items()]
            return f"{lhs} = {self.bind(st.fn, '_' + getattr(st.fn, '__name__', 'step').lstrip('_'))}({', '.join(parts)})"
        template = _TEMPLATES.get(st.kind)
        if template is None:
            raise TypeError(st.kind)
        return template.format(lhs=lhs, args=", ".join(self.expr(a) for a in st.args))


def _host_result_device(st: Step):
    """The device an op step's kernel result must be moved to: the op's kernel returned host arrays for device
    inputs in this run (``_backend.host_results``, NOTE [host results] in ember/ops/_op.py), and its traced outputs
    are on a device. None otherwise."""
    if st.fn.__name__ not in _B.host_results:
        return None
    for v in st.outs:
        if v is not None and _B.is_array(v.arr) and not _B.is_cpu_array(v.arr):
            return _B.device_of(v.arr)
    return None


def _to_device(x, dev):
    """A kernel's result (an array or a tuple of them) on ``dev``."""
    if type(x) is tuple:
        return tuple(_to_device(a, dev) for a in x)
    return _B.to_device(x, dev) if _B.is_array(x) else x


def _path(path: tuple) -> str:
    out = []
    for p in path:
        out.append(f"[{p}]" if isinstance(p, int) else f".{p}")
    return "".join(out)


def _arr(x):
    """A kernel's NumPy scalar result as the 0-d array ``_wrap`` would hold (NOTE [0-d results are arrays]); an
    array of any device as it is (``np.asarray`` would copy a stand-in array to the host and refuse CuPy's)."""
    return x if type(x) in _ARRAYS else np.asarray(x)


def _arrs(xs) -> tuple:
    return tuple(x if type(x) in _ARRAYS else np.asarray(x) for x in xs)


def _copyto(dst, src) -> None:
    np.copyto(dst, src, casting="unsafe")


def _setitem(dst, edt, key, value) -> None:
    """``dst[key] = value`` as ``Tensor.__setitem__`` does without a graph (the key converted the same way)."""
    from ..ops.indexing import _convert_key, _torch_order

    k, basic = _convert_key(key, ref=dst)  # (index arrays go to dst's device, as the eager write's)
    if not basic:
        k = _torch_order(k, dst.shape)
    dst[k] = value._data if isinstance(value, Tensor) else value


def _view(root, offset: int, shape: tuple, strides: tuple):
    """A view of ``root``'s memory (elements from its start, element strides), as one taken on arrays."""
    flat = root.reshape(-1)[offset:]
    item = root.itemsize
    return _B.as_strided(flat, shape, tuple(s * item for s in strides))


def _site(st: Step) -> str:
    if st.site is None:
        return ""
    f, n = st.site
    return f"{f.rsplit('/', 1)[-1]}:{n}"


def _comment(st: Step, width: int = 72) -> str:
    what = st.label or ""
    site = _site(st)
    return "  # " + what + (f" ({site})" if site else "") if (what or site) else ""


def _lines_with_comments(gen: _Gen, steps: list, indent: str = "    ", where: list | None = None) -> list:
    out = []
    for st in steps:
        body = gen.line(st)
        out.append(f"{indent}{body}{_comment(st)}")
        if where is not None:
            where.append(st.site)
    return out


# ----------------------------------------------------------------------------- build
def build(tr, outputs: list, spec, patterns: dict, title: str, elide_ctx: bool = True, fast: bool = True) -> Program:
    """A Program from the tracer ``tr`` (forward steps in ``tr.fwd_steps``; ``patterns``: tuple of output numbers ->
    (grad Values, steps, {input Value: gradient Value}, eager gradients))."""
    for st in tr.fwd_steps + [st for key in patterns for st in patterns[key][1]]:  # (a rebuild starts over)
        if st.kind in ("ufunc", "fast"):
            st.kind, st.args, st.ufunc, st.fast = "op", st.orig_args, None, None
        st.out_into = None
    p = Program()
    p.inputs = list(tr.inputs)
    p.rngs = list(tr.gens.values())
    p.outputs = outputs
    p.spec = spec
    grad_outs = [o for o in outputs if o.kind == "value" and o.nr >= 0]
    p.n_grad_out = len(grad_outs)
    p.meta_out = tuple((o.value.shape, o.edt) for o in sorted(grad_outs, key=lambda o: o.nr))
    # backward programs: dead code out, their forward needs become saved values
    saved: set = set()
    grad_inputs: set = set()
    for key, (gvals, steps, results, check) in patterns.items():
        live = set(results.values())
        steps = dce(steps, live)
        pat = Pattern(gvals, steps, results)
        pat.check = check
        p.patterns[key] = pat
        grad_inputs.update(results)
        for st in steps:
            for v in st.uses():
                _need_saved(v, saved)
            for v in st.outs:
                if v is not None and v.expr is not None:
                    _need_saved(v, saved)
        for v in results.values():
            _need_saved(v, saved)
    p.grad_inputs = [v for v in p.inputs if v in grad_inputs]
    for st in tr.fwd_steps:  # a ctx no backward program reads: the kernel runs with ctx=None (the check compares)
        st.ctx_off = elide_ctx and st.kind == "op" and st.ctx is not None and st.ctx not in saved
    # forward: dead code out (outputs, saved values and writes stay)
    live = {o.value for o in outputs if o.kind == "value"} | saved
    fwd = dce(tr.fwd_steps, live)
    # a constant that is written, or returned, is copied fresh on each call (the call made it anew)
    inits = []
    for v in _constants(fwd):
        if v.written or v in live:
            if v.written or any(o.kind == "value" and o.value is v for o in outputs):
                inits.append(v)
    init_steps = []
    for v in inits:
        k = Value(v.n, "k", v.snapshot)
        k.name = f"k{v.n}_init"
        st = Step("init", None, [Const(v.snapshot)], [v], "a tensor the call makes")
        init_steps.append(st)
        v.kind = "t"
    fwd = init_steps + fwd
    fwd = cse(fwd, live)
    for pat in p.patterns.values():
        pat.steps = cse(pat.steps, set(pat.results.values()))
    for st in fwd + [st for pat in p.patterns.values() for st in pat.steps]:
        if st.kind == "op":
            _bind_ufunc(st)
        if st.kind == "op" and fast:
            _bind_fast(st)
    p.saved = sorted(saved, key=lambda v: v.n)
    plan_buffers(fwd, set(live), "t")
    for pat in p.patterns.values():
        plan_buffers(pat.steps, set(pat.results.values()), "b")
    p.fwd = fwd
    p.written_inputs = [v for v in p.inputs if v.written]
    p.version_checks = [v for v in p.saved if v.kind == "in"]
    p.steps_count = len(fwd) + sum(len(pt.steps) for pt in p.patterns.values())
    _generate(p, title)
    return p


def _need_saved(v: Value, saved: set) -> None:
    if v.kind in ("in", "t", "c", "o") or (v.kind == "k" and v.written):
        saved.add(v)
    if v.kind == "b" and v.expr is not None:
        _need_saved(v.expr.ctx if isinstance(v.expr, Attr) else v.expr.value, saved)


def _constants(steps: list) -> list:
    seen = []
    ids = set()
    for st in steps:
        for v in st.uses():
            if v.kind == "k" and id(v) not in ids:
                ids.add(id(v))
                seen.append(v)
    return seen


def _generate(p: Program, title: str) -> None:
    gen = _Gen()
    for v in p.inputs + p.rngs:
        gen.globs.setdefault(v.name, None)
    # constants: bound under their value names
    for st in p.fwd + [s for pat in p.patterns.values() for s in pat.steps]:
        for v in st.uses():
            if v.kind == "k" and v.name not in gen.globs:
                gen.globs[v.name] = v.arr
                gen.keep.append(v.arr)
    live_fwd = [o.value for o in p.outputs if o.kind == "value"] + list(p.saved)
    allocate_names(p.fwd, live_fwd, "t")
    for pat in p.patterns.values():
        allocate_names(pat.steps, list(pat.results.values()), "b")
    params = ", ".join([v.name for v in p.inputs + p.rngs] + ["_tensors"])
    lines = [f"# ember.compile: {title}", "", f"def forward({params}):"]
    sites = [None] * len(lines)  # the user site of each line (for messages)
    body = _lines_with_comments(gen, p.fwd, where=sites)
    outs = [o.value.name for o in p.outputs if o.kind == "value"]
    saved = [v.name for v in p.saved]
    body.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''}), "
                f"({', '.join(saved)}{',' if len(saved) == 1 else ''})")
    sites.append(None)
    lines += body
    for i, (key, pat) in enumerate(sorted(p.patterns.items(), key=lambda kv: -len(kv[0]))):
        pat.name = f"backward{i}"
        gnames = [g.name if g is not None else "_" for g in pat.grads]
        which = ", ".join(str(k) for k in key)
        lines += ["", f"def {pat.name}(saved, grads):  # gradients of output{'s' if len(key) > 1 else ''} {which}"]
        sites += [None, None]
        if saved:
            lines.append(f"    {', '.join(saved)}{',' if len(saved) == 1 else ''} = saved")
            sites.append(None)
        lines.append(f"    {', '.join(gnames)}{',' if len(gnames) == 1 else ''} = grads")
        sites.append(None)
        gen.backward = True
        lines += _lines_with_comments(gen, pat.steps, where=sites)
        res = [pat.results[v].name if v in pat.results else "None" for v in p.grad_inputs]
        lines.append(f"    return ({', '.join(res)}{',' if len(res) == 1 else ''})")
        sites.append(None)
    p.sites = sites
    src = "\n".join(lines) + "\n"
    p.filename = f"<ember.compile {title} #{_counter()}>"
    code = compile(src, p.filename, "exec")
    linecache.cache[p.filename] = (len(src), None, src.splitlines(True), p.filename)
    ns = gen.globs
    exec(code, ns)  # noqa: S102 - the program is source ember generated
    p.forward = ns["forward"]
    for pat in p.patterns.values():
        pat.fn = ns[pat.name]
    p.consts = gen.globs
    p.code = src


_SLOT = re.compile(r"@(\d+)@")
_ARRAYS = _B.ARRAYS
_count = [0]


def _counter() -> int:
    _count[0] += 1
    return _count[0]

