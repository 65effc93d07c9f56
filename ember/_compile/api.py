"""``ember.compile``: the compiled callable, its cache of programs, tracing a call and checking the replay."""
from __future__ import annotations

import builtins
import functools
import inspect
import keyword
import random as _pyrandom
import re
import threading
import time
import warnings
import weakref

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Size, Tensor, _wrap
from ..autograd import _interpose
from ..autograd import anomaly_mode as _anomaly
from ..autograd._fast import NUMPY_QUIET as _QUIET, reset_numpy_errors as _reset_np, set_numpy_errors as _set_np
from ..autograd.grad_mode import _mode
from ..utils._pytree import tree_flatten
from . import guards as _guards
from .build import Output, build
from .program import Source, same_array, same_value
from .runtime import run
from .trace import Break, Tracer

__all__ = ["compile", "CompiledFunction", "reset_all", "stance"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_registry: "weakref.WeakSet" = weakref.WeakSet()
_GRAD_RNG = np.random.default_rng(20240521)
_TRIES = 3  # traces of one guard set that may end in a passing break (a lazy initialisation, a changing program)


class _Stance(threading.local):
    name = "default"


stance = _Stance()


class _Entry:
    """One cached program (or the decision to run a guard set eagerly) of a compiled callable."""

    __slots__ = ("kind", "state", "guard", "reasons", "program", "why", "hits", "times", "code", "tries",
                 "snapshots")

    def __init__(self, kind: str, state: tuple) -> None:
        self.kind = kind      # compiled, pending (one clean trace, confirmed by the next), eager
        self.state = state
        self.guard = None
        self.reasons: list = []
        self.program = None
        self.why: Break | None = None
        self.hits = 0
        self.times: list = []
        self.code = ""
        self.tries = 0
        self.snapshots = None


class CompiledFunction:
    """What ``ember.compile(fn)`` returns: calls ``fn`` through compiled programs (NOTE [compile])."""

    def __init__(self, fn, *, module=None, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None,
                 options=None, recompile_limit=None, name=None) -> None:
        self._fn = fn
        self._module = module
        self._fullgraph = fullgraph
        self._dynamic = dynamic
        self._backend = backend
        self._mode = mode
        self._options = options
        self._limit = recompile_limit
        self._name = name           # the region's title in .code and explain() (torch: debug metadata)
        self._cache: list = []
        self._lock = threading.RLock()
        self._breaks: list = []     # (Break, count)
        self._warned: set = set()
        self._log: list = []        # what happened on misses (recompile reasons)
        self._attempts: dict = {}   # guard-less retry counts of transient breaks
        functools.update_wrapper(self, getattr(fn, "forward", fn) if module is not None else fn)
        self._torchdynamo_orig_callable = fn
        _registry.add(self)

    # ------------------------------------------------------------------ calling
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if _mode.interpose is not None or _mode.tracer is not None or stance.name != "default" or _anomaly._enabled:
            if stance.name in ("default", "eager_then_compile", "aot_eager_then_compile", "eager_on_recompile",
                               "fail_on_recompile") and _mode.interpose is None and _mode.tracer is None \
                    and not _anomaly._enabled:
                return self._call(args, kwargs)
            return self._fn(*args, **kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        state = _guards.state_key()
        for e in self._cache:
            if e.state == state:
                got = e.guard(args, kwargs)
                if type(got) is list:
                    if e.kind == "compiled":
                        e.hits += 1
                        return run(e.program, got)
                    if e.kind == "eager":
                        e.hits += 1
                        return self._fn(*args, **kwargs)
                    return self._confirm(e, args, kwargs, state)
        return self._miss(args, kwargs, state)

    def _miss(self, args, kwargs, state):
        if _dynamo_config().disable:  # torch._dynamo.config.disable: read when a call needs a new program
            return self._fn(*args, **kwargs)
        with self._lock:
            if self._cache:
                self._log.append(self._why_miss(args, kwargs, state))
                if stance.name == "fail_on_recompile":
                    raise RuntimeError("Detected recompile when torch.compile stance is 'fail_on_recompile'")
                if stance.name == "eager_on_recompile":
                    return self._fn(*args, **kwargs)
                if _dynamo_config().error_on_recompile:
                    from .._dynamo.exc import RecompileError

                    raise RecompileError(f"Recompiling function {self.__name__}: {self._log[-1]}")
            if len(self._cache) >= self._cache_limit():
                self._note(Break(f"the cache of compiled programs is full ({self._cache_limit()} entries, "
                                 "torch._dynamo.config.recompile_limit); new guard sets run eagerly", None),
                           warn_key="limit")
                return self._fn(*args, **kwargs)
            return self._trace_new(args, kwargs, state)

    def _cache_limit(self) -> int:
        if self._limit is not None:
            return self._limit
        cfg = _dynamo_config()
        return int(getattr(cfg, "recompile_limit", 8) or getattr(cfg, "cache_size_limit", 8))

    def _trace_new(self, args, kwargs, state):
        result, tr, prog, entry = self._trace(args, kwargs, state)
        if entry is not None:
            self._cache.insert(0, entry)
        return result

    def _confirm(self, e: _Entry, args, kwargs, state):
        """A second traced call under a pending entry's guards: the same program twice makes it the compiled one."""
        with self._lock:
            result, tr, prog, new = self._trace(args, kwargs, state, pending=e)
            if new is None:  # the second trace broke: the entry goes (or became eager inside _trace)
                return result
            if new.kind == "eager":
                self._replace(e, new)
                return result
            first = e.program
            diff, site = _program_difference(first, prog)
            if diff is None:
                new.kind = "compiled"
                new.times = e.times + new.times
                new.tries = e.tries
                _certify(new, e)
                self._replace(e, new)
                return result
            new.tries = e.tries + 1
            if new.tries >= _TRIES:
                eager = _Entry("eager", state)
                eager.guard = new.guard
                eager.reasons = new.reasons
                eager.why = Break(f"the traced program differs from call to call ({diff}): an op argument computed "
                                  "outside ember's ops from the data, or Python state that changes", site)
                self._note(eager.why)
                self._replace(e, eager)
            else:
                self._replace(e, new)
            return result

    def _replace(self, old: _Entry, new: _Entry) -> None:
        for i, x in enumerate(self._cache):
            if x is old:
                self._cache[i] = new
                return
        self._cache.insert(0, new)

    # ------------------------------------------------------------------ tracing
    def _trace(self, args, kwargs, state, pending=None):
        """Run the call eagerly under a tracer; returns (result, tracer, program or None, new entry or None)."""
        t0 = time.perf_counter()
        before = _tensor_meta(args, kwargs)  # an eager entry's guard sees the arguments the call was given
        roots = _guards.Roots(self._fn, args, kwargs, self._module)
        snap = _guards.snapshot(roots, args, kwargs)
        py_state = _pyrandom.getstate()
        np_state = _np_random_state()
        tr = Tracer(self._fullgraph)
        tr.start()
        for m, _, _ in roots.modules:
            if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks:
                tr.fail(f"module hooks on {type(m).__name__} (their effects are Python the replay would skip)",
                        site=None)
                break
        if _global_hooks():
            tr.fail("global module hooks are registered", site=None)
        _interpose.push(tr)
        _mode.tracer = tr if not tr.off else None
        try:
            result = self._fn(*args, **kwargs)
        finally:
            if _mode.tracer is tr:
                _mode.tracer = None
            _unlink(tr)
        t_run = time.perf_counter()
        times = {"traced call": t_run - t0}
        prog = None
        if not tr.off:
            tr.fwd_steps = tr.steps
            what = _guards.changed(snap)
            if what is not None:
                tr.fail(what + " (Python state the replay would not change)", permanent=False, site=None)
            elif _pyrandom.getstate() != py_state or _np_random_state() != np_state:
                tr.fail("Python's random module or NumPy's global random state was used (draws the replay would "
                        "not repeat)", site=None)
            else:
                for v in tr.inputs:
                    t = v.tensor
                    if t._data is not v.arr:
                        tr.fail("a tensor's data was replaced (tensor.data = ...) during the call", site=None)
                        break
                    if t._requires_grad != v.requires_grad or (t._requires_grad and t._grad_fn is not None
                                                               and (t._grad_fn, t._output_nr) != v.edge):
                        tr.fail("a tensor that requires grad (or a view of one) was changed in place by the call "
                                "(its new history cannot be replayed)", site=None)
                        break
        if not tr.off:
            try:
                prog = self._program(tr, roots, args, kwargs, result, times)
            except _Unsupported as e:
                tr.fail(str(e), site=e.site)
            except Exception as e:  # noqa: BLE001 - a failure of the compiler itself: the call was eager anyway
                if self._fullgraph and type(e).__name__ == "Unsupported":
                    raise
                if isinstance(e, TypeError) and _B.is_host_only(e):  # NOTE [compiled on devices]
                    tr.fail(f"an op's kernel refuses device arrays (eager code runs it on the host: NOTE [host "
                            f"fallback]; ops that did: {', '.join(sorted(_B.host_fallbacks))})", site=None)
                else:
                    tr.fail(f"the compiler could not handle this call ({type(e).__name__}: {e})", site=None)
        times["total"] = time.perf_counter() - t0
        if tr.broken is not None:
            self._note(tr.broken)
            if tr.broken.permanent or self._bump_attempts(state, before) >= _TRIES:
                e = _Entry("eager", state)
                e.guard, e.reasons = _coarse_guard(args, kwargs, before)
                e.why = tr.broken
                e.times.append(times)
                return result, tr, None, e
            return result, tr, None, None
        e = _Entry("pending", state)
        e.program = prog
        e.guard, e.reasons, e.code = prog.guard, prog.guard_reasons, prog.guard_code
        e.times.append(times)
        e.snapshots = [v.snapshot for v in prog.inputs]
        prog.release()
        return result, tr, prog, e

    def _bump_attempts(self, state, before: list) -> int:
        key = (state, tuple(m[1:] for m in before))
        n = self._attempts.get(key, 0) + 1
        self._attempts[key] = n
        return n

    def _program(self, tr: Tracer, roots, args, kwargs, result, times: dict):
        """Outputs, backward walks, sources and names, build, verification, guard."""
        leaves, spec = tree_flatten(result)
        if spec.is_leaf():
            spec = None
        outputs, grad_leaves = _outputs(tr, leaves)
        if tr.off:
            raise _Unsupported(tr.broken.reason, tr.broken.site)
        patterns = {}
        t0 = time.perf_counter()
        if grad_leaves:
            patterns = _walks(tr, grad_leaves)
            if tr.off:
                raise _Unsupported(tr.broken.reason, tr.broken.site)
        times["backward trace"] = time.perf_counter() - t0
        namespace: dict = {}
        bind = _binder(namespace)
        index = roots.sources(args, kwargs, bind)
        names = _arg_names(self._fn if self._module is None else getattr(self._module, "forward", self._fn),
                           args, kwargs)
        taken: set = set()
        for v in tr.inputs:
            src = index.get(id(v.tensor))
            if src is None:
                src = Source("held", bind(v.tensor, "held"), "a tensor the function read (held by the program)")
            v.src = src
            v.name = _ident(_label_name(src, names), taken)
        for v in tr.gens.values():
            v.name = _ident(v.name, taken)
        t0 = time.perf_counter()
        title = self._title()
        prog = build(tr, outputs, spec, patterns, title)
        times["build"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        bad = _verify(prog, tr, leaves, patterns)
        if bad is not None:  # the faithful program: every kernel with the ctx the eager run gave it
            prog = build(tr, outputs, spec, patterns, title, elide_ctx=False)
            bad = _verify(prog, tr, leaves, patterns)
        prog.bumps = _bumps(tr, prog)
        prog.loose = tr.loose
        times["check"] = time.perf_counter() - t0
        if bad is not None:
            raise _Unsupported(f"the replay did not reproduce the eager run ({bad}): an operation outside ember's "
                               "ops changed or read the data", None)
        body = _guards.guard_source(roots, args, kwargs, prog.inputs, bind, {})
        prog.guard_body, prog.guard_namespace, prog.guard_bind = body, namespace, bind
        prog.guard, prog.guard_reasons, prog.guard_code = _make_guard(body, namespace)
        return prog

    # ------------------------------------------------------------------ reporting
    def _note(self, br: Break, warn_key=None) -> None:
        for i, (b, n) in enumerate(self._breaks):
            if b.reason == br.reason and b.site == br.site:
                self._breaks[i] = (b, n + 1)
                break
        else:
            self._breaks.append((br, 1))
        key = warn_key or (br.reason, br.site)
        if key in self._warned:
            return
        self._warned.add(key)
        msg = f"ember.compile: {br.reason}; this call runs eagerly (same results). See compiled.explain()."
        if br.site is not None:
            warnings.warn_explicit(msg, UserWarning, br.site[0], br.site[1])
        else:
            warnings.warn(msg, UserWarning, stacklevel=4)

    def _why_miss(self, args, kwargs, state) -> str:
        if not self._cache:
            return "first call"
        e = self._cache[0]
        if e.state != state:
            return "grad mode, inference mode, autocast or the default dtype changed"
        got = e.guard(args, kwargs)
        if type(got) is int and 0 <= got < len(e.reasons):
            return f"guard failed: {e.reasons[got]}"
        return "no cached program matches"

    @property
    def code(self) -> str:
        """The Python source of the most recent compiled program: its guard, ``forward`` and the ``backward``
        programs (one per set of outputs receiving gradients)."""
        for e in self._cache:
            if e.program is not None:
                status = "" if e.kind == "compiled" else "# (traced once; compiled when the next call traces the same)\n"
                return status + e.code + "\n" + e.program.code
        return ""

    def _title(self) -> str:
        """The compiled region's name: ``compile(name=...)``, else the function's qualified name."""
        return self._name or getattr(self, "__qualname__", getattr(self._fn, "__qualname__", "function"))

    def explain(self) -> str:
        """What was compiled, what runs eagerly and why (graph breaks with file:line), and the recompiles."""
        lines = [f"ember.compile of {self._title()}: {len(self._cache)} cached "
                 f"entr{'y' if len(self._cache) == 1 else 'ies'} (limit {self._cache_limit()})"]
        for i, e in enumerate(self._cache):
            lines.append(f"[{i}] {e.kind}: {e.hits} replayed call(s)" if e.kind != "eager"
                         else f"[{i}] eager: {e.hits} call(s) run eagerly")
            lines.append(f"    state: grad={e.state[0]} inference={e.state[1]} autocast={e.state[2]} "
                         f"default dtype={e.state[4]}")
            if e.why is not None:
                lines.append(f"    why eager: {e.why}")
            p = e.program
            if p is not None:
                nb = {k: len(pt.steps) for k, pt in p.patterns.items()}
                lines.append(f"    program: {len(p.fwd)} forward steps, backward programs {nb or 'none'}, "
                             f"{len(p.saved)} saved values, {len(p.inputs)} inputs, {len(p.rngs)} generators")
                for v in p.inputs:
                    lines.append(f"      input {v.name}: {v.src.label} ({v.src.kind}) {list(v.shape)} "
                                 f"{v.dtype}{' requires_grad' if v.requires_grad else ''}"
                                 f"{' written' if v.written else ''}")
                lines.append(f"    guard: {len(e.reasons)} checks")
            for t in e.times:
                lines.append("    time: " + ", ".join(f"{k} {1e3 * s:.1f} ms" for k, s in t.items()))
        if self._breaks:
            lines.append("graph breaks (the calls ran eagerly, results unchanged):")
            for b, n in self._breaks:
                lines.append(f"  {b.where()}: {b.reason} ({n}x)")
        else:
            lines.append("graph breaks: none")
        if self._log:
            lines.append("recompiles:")
            lines.extend(f"  {r}" for r in self._log[-20:])
        return "\n".join(lines)

    def _reset(self) -> None:
        with self._lock:
            self._cache.clear()
            self._attempts.clear()
            self._log.clear()


class _Unsupported(Exception):
    def __init__(self, reason: str, site) -> None:
        super().__init__(reason)
        self.site = site


def _dynamo_config():
    from .. import _dynamo

    return _dynamo.config


def _global_hooks() -> bool:
    from ..nn.modules import module as _m

    return bool(_m._global_forward_pre_hooks or _m._global_forward_hooks or _m._global_backward_hooks
                or _m._global_backward_pre_hooks)


def _np_random_state():
    st = np.random.get_state()
    return (st[1].tobytes(), st[2], st[3], st[4])


def _unlink(tr: Tracer) -> None:
    """Take the tracer off the level stack (levels pushed inside the call and left there are unlinked past it)."""
    if _mode.interpose is tr:
        _interpose.pop(tr)
        return
    level = _mode.interpose
    while level is not None and getattr(level, "below", None) is not tr:
        level = level.below
    if level is not None:
        level.below = tr.below
    tr.fail("a transform level (vmap, forward AD, profiler) was left open inside the function")


def _outputs(tr: Tracer, leaves: list):
    """How each leaf of the result is made; the leaves that carry gradients out of the compiled node."""
    outputs = []
    grad_leaves = []
    seen: dict = {}
    by_tensor = {id(v.tensor): v for v in tr.inputs}
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            if id(leaf) in seen:
                o = Output("same")
                o.index = seen[id(leaf)]
                outputs.append(o)
                continue
            seen[id(leaf)] = i
            v = by_tensor.get(id(leaf))
            if v is None and tr.vals.get(id(leaf._data)) is None and id(leaf) in tr.preexisting:
                v = tr._input(leaf)
            if v is not None and v.tensor is leaf:
                o = Output("input")
                o.index = v.index
                outputs.append(o)
                continue
            ext = leaf._ext
            if ext is not None and (ext.get("hooks") or ext.get("retain") or ext.get("fw")):
                tr.fail("a returned tensor has hooks, retain_grad or forward-AD tangents", site=None)
                return outputs, grad_leaves
            val = tr.vals.get(id(leaf._data))
            if val is None:
                tr.loose = tr.loose or id(leaf._data) not in tr.certified
                val = tr._constant(leaf._data, leaf)
            o = Output("value")
            o.value = val
            o.edt = leaf._dtype
            o.version = leaf._version
            o.conj = bool(ext is not None and ext.get("conj"))
            if leaf._requires_grad:
                fn = leaf._grad_fn
                if fn is None or not tr.internal(fn):
                    tr.fail("a returned tensor requires grad but was not made by a recorded op (a new leaf, or a "
                            "custom Function)", site=None)
                    return outputs, grad_leaves
                o.nr = len(grad_leaves)
                o.requires_grad = True
                grad_leaves.append(leaf)
            base = leaf._base
            if base is not None:
                bv = by_tensor.get(id(base))
                if bv is None and id(base) in tr.preexisting:
                    bv = tr._input(base)
                    by_tensor[id(base)] = bv
                if bv is not None:
                    o.base = bv.index
            outputs.append(o)
        elif type(leaf) in (bool, int, float, str, type(None), complex) or isinstance(leaf, (D.dtype, Size)):
            o = Output("const")
            o.obj = leaf
            outputs.append(o)
        else:
            tr.fail(f"the function returns a {type(leaf).__name__} (only tensors, plain values and containers of "
                    f"them can be rebuilt)", site=None)
            return outputs, grad_leaves
    return outputs, grad_leaves


def _walks(tr: Tracer, grad_leaves: list) -> dict:
    """The backward program of every pattern traced: all outputs, and (up to four outputs) each alone."""
    n = len(grad_leaves)
    keys = [tuple(range(n))]
    if 1 < n <= 4:
        keys += [(i,) for i in range(n)]
    tr.index_ctx_attrs()
    patterns = {}
    _interpose.push(tr)
    _mode.tracer = tr
    try:
        for key in keys:
            kept = dict(tr.vals)
            roots = []
            gvals = []
            for i in key:
                leaf = grad_leaves[i]
                arr = _placeholder(leaf)
                g = _wrap(arr, leaf._dtype)
                gv = tr.new_value("g", arr)
                gv.name = f"grad{i}"
                tr._register(arr, gv)
                roots.append((leaf, g))
                gvals.append(gv)
            try:
                res = tr.walk_backward(roots)
            except Exception as e:  # noqa: BLE001 - the eager backward would raise too; that call stays eager
                tr.fail(f"the backward formulas raised {type(e).__name__}: {e}", site=None)
                return patterns
            if res is None or tr.off:
                return patterns
            results = {}
            check = {}
            for v, g in res.items():
                gv = tr.vals.get(id(g._data))
                if gv is None or gv.kind not in ("g", "b"):
                    gv = _fresh_result(tr, g)
                results[v] = gv
                check[v] = g._data
            patterns[key] = (gvals, tr.steps, results, (check, [g.arr for g in gvals]))
            tr.vals = kept
    finally:
        if _mode.tracer is tr:
            _mode.tracer = None
        if _mode.interpose is tr:
            _interpose.pop(tr)
    return patterns


def _fresh_result(tr: Tracer, g: Tensor):
    """A gradient that is no value of the walk (a constant, a forward value): copied fresh on each backward."""
    from .program import Step

    src = tr.vals.get(id(g._data))
    if src is None:
        src = tr._constant(g._data, g)
    v = tr.new_value("b", g._data)
    v.name = f"b{v.n}"
    st = Step("copy", None, [src], [v], "gradient")
    v.owner = st
    tr.steps.append(st)
    return v


def _placeholder(leaf: Tensor):
    """A random gradient for ``leaf``, on its device."""
    arr = leaf._data
    vals = _GRAD_RNG.standard_normal(arr.shape)  # (a host array: drawn on the host, as ember's random values)
    return _B.like(arr, vals.astype(arr.dtype if arr.dtype.kind in "fcV" else np.float32))


def _bumps(tr: Tracer, prog) -> list:
    """(input Value, number of writes into its memory): the version bumps the eager run made on it."""
    counts: dict = {}
    by_root = {}
    for v in prog.inputs:
        a = v.tensor._data
        by_root.setdefault(id(a if a.base is None else a.base), []).append(v)
    for st in prog.fwd:
        if st.kind in ("write", "setitem"):
            tgt = st.args[0]
            a = tgt.arr
            if a is None:
                continue
            key = id(a if a.base is None else a.base)
            for v in by_root.get(key, ()):
                if v.tensor._data is a or tgt is v:
                    counts[v] = counts.get(v, 0) + 1
                    break
            else:
                for v in by_root.get(key, ()):
                    counts[v] = counts.get(v, 0) + 1
                    break
    return list(counts.items())


def _verify(prog, tr: Tracer, leaves: list, patterns: dict) -> str | None:
    """Replay the program on the values the call started from and compare with the eager run, bit for bit."""
    ins = [v.snapshot.copy() for v in prog.inputs]
    clones = []
    for rv in prog.rngs:
        gen = rv.gen
        clone = np.random.Generator(np.random.PCG64())
        clone.bit_generator.state = rv.snapshot
        clones.append((gen, gen._rng, clone))
        gen._rng = clone
    try:
        token = _set_np(_QUIET)
        try:
            outs, saved = prog.forward(*ins, *[c for _, _, c in clones],
                                       [_wrap(a, v.edt) for a, v in zip(ins, prog.inputs)])
        finally:
            _reset_np(token)
        for _gen, real, clone in clones:
            if clone.bit_generator.state != real.bit_generator.state:
                return "random numbers drawn outside the recorded steps"
    finally:
        for gen, real, _clone in clones:
            gen._rng = real
    k = 0
    for o, leaf in zip(prog.outputs, leaves):
        if o.kind == "value":
            if not same_array(outs[k], leaf._data):
                return f"output {k} differs"
            k += 1
    for v, arr in zip(prog.inputs, ins):
        if not same_array(arr, v.tensor._data):
            return f"the final values of {v.src.label} differ"
    for key, pat in prog.patterns.items():
        check, grads = patterns[key][3]
        token = _set_np(_QUIET)
        try:
            res = pat.fn(saved, grads)
        finally:
            _reset_np(token)
        for v, arr in zip(prog.grad_inputs, res):
            want = check.get(v)
            if (want is None) != (arr is None) or (want is not None and not same_array(arr, want)):
                return f"the gradient of {v.src.label} differs"
    return None


def _program_difference(a, b):
    """(None, None) when two traces made the same program (code, constants, inputs), else (the first difference,
    the user site of its line)."""
    la_, lb_ = a.code.splitlines(), b.code.splitlines()
    if la_ != lb_:
        for i, (la, lb) in enumerate(zip(la_, lb_)):
            if la != lb:
                return f"`{la.strip()}` became `{lb.strip()}`", _site_of(b, i)
        return "the programs have different lengths", None
    if a.guard_code != b.guard_code:
        return "the inputs or guards differ", None
    for name, obj in a.consts.items():
        if (isinstance(obj, (float, int, tuple)) or _B.is_array(obj)) and name in b.consts:
            if not same_value(obj, b.consts[name]):
                i = next((i for i, ln in enumerate(la_) if re.search(rf"\b{name}\b", ln)
                          and not ln.lstrip().startswith("def ")), None)
                use = la_[i].strip() if i is not None else ""
                return f"the constant {name} differs, in `{use}`", _site_of(a, i)
    return None, None


def _site_of(p, i):
    sites = getattr(p, "sites", ())
    return sites[i] if i is not None and 0 <= i < len(sites) else None


def _certify(new: _Entry, first: _Entry) -> None:
    """Integer and bool inputs whose values were the same in both traces may have shaped constants the program
    holds: while the program has array constants that no factory made (from shapes and Python values), such inputs
    are guarded by value (NOTE [compile]; a device input's guard copies it to the host on each call)."""
    p = new.program
    if not p.loose or not any(_B.is_array(o) and o.size > 1 for o in p.consts.values()):
        return
    fixed = {}
    for v, s1, s2 in zip(p.inputs, first.snapshots or (), new.snapshots or ()):
        if s1 is not None and s2 is not None and s1.dtype.kind in "biu" and same_array(s1, s2):
            fixed[v] = s2
    if not fixed:
        return
    bind = p.guard_bind
    body = p.guard_body[:-1] + [f"if not _same({v.name}._data, {bind(arr, 'value_' + v.name)}): return None"
                                for v, arr in fixed.items()] + p.guard_body[-1:]
    p.guard, p.guard_reasons, p.guard_code = _make_guard(body, p.guard_namespace)
    new.guard, new.reasons, new.code = p.guard, p.guard_reasons, p.guard_code


def _tensor_meta(args, kwargs) -> list:
    """(path, shape, dtype, requires_grad) of each argument tensor, taken before the call (an out= argument may
    be resized by it)."""
    return [(expr, tuple(t._data.shape), t._dtype, t._requires_grad) for expr, t in _tensor_paths(args, kwargs)]


def _coarse_guard(args, kwargs, before: list):
    """An eager entry's guard: the same argument structure, and the tensor shapes, dtypes and requires_grad
    ``before`` the call (``_tensor_meta``)."""
    namespace: dict = {}
    bind = _binder(namespace)
    lines: list = []
    _guards._struct("args", args, lines, bind, 0)
    _guards._struct("kwargs", kwargs, lines, bind, 0)
    for expr, shape, dtype, requires_grad in before:
        lines.append(f"if not isinstance({expr}, Tensor) or {expr}.shape != {shape!r} or {expr}._dtype is "
                     f"not {bind(dtype, dtype.name)} or {expr}._requires_grad is not {requires_grad!r}: "
                     "return None")
    lines.append("return []")
    g, reasons, _ = _make_guard(lines, namespace)
    return g, reasons


def _tensor_paths(args, kwargs) -> list:
    out = []

    def walk(x, expr, depth):
        if isinstance(x, Tensor):
            out.append((expr, x))
        elif isinstance(x, (list, tuple)) and depth < 3:
            for i, y in enumerate(x):
                walk(y, f"{expr}[{i}]", depth + 1)
        elif isinstance(x, dict) and depth < 3:
            for k, y in x.items():
                walk(y, f"{expr}[{k!r}]", depth + 1)

    walk(args, "args", 0)
    walk(kwargs, "kwargs", 0)
    return out


def _binder(namespace: dict):
    names: dict = {}

    def bind(obj, stem: str) -> str:
        key = id(obj)
        name = names.get(key)
        if name is not None:
            return name
        stem = re.sub(r"\W", "_", stem)
        name = f"_{stem}"
        k = 0
        while name in namespace:
            k += 1
            name = f"_{stem}{k}"
        namespace[name] = obj
        names[key] = name
        return name

    return bind


def _make_guard(body: list, namespace: dict):
    """Compile guard lines into ``guard(args, kwargs)``: each failing check returns its index (the reasons list
    says which), a passing guard returns the list of input tensors."""
    reasons = []
    out = []
    for ln in body:
        m = re.match(r"if (.*): return None$", ln)
        if m:
            out.append(f"    if {m.group(1)}: return {len(reasons)}")
            reasons.append(m.group(1))
        else:
            out.append("    " + ln)
    src = "def guard(args, kwargs):\n    try:\n" + "\n".join("    " + ln for ln in out) + \
          "\n    except (IndexError, KeyError, AttributeError, TypeError):\n        return -1\n"
    ns = dict(namespace)
    ns.update({"Tensor": Tensor, "ndarray": np.ndarray, "_MISSING": _MISSING, "_same": same_array})
    exec(builtins.compile(src, "<ember.compile guard>", "exec"), ns)  # noqa: S102 - generated by ember
    return ns["guard"], reasons, src


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _arg_names(fn, args, kwargs) -> dict:
    """{'args[0]': 'x', ...}: the parameter names of the arguments, for readable input names."""
    out = {}
    try:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for i in range(len(args)):
            if i < len(params):
                out[f"args[{i}]"] = params[i].name
    except (TypeError, ValueError):
        pass
    for k in kwargs:
        out[f"kwargs[{k!r}]"] = k
    return out


def _label_name(src: Source, names: dict) -> str:
    if src.kind == "arg":
        m = re.match(r"(args\[\d+\]|kwargs\['[^']*'\])(.*)", src.expr)
        if m:
            head = names.get(m.group(1), "arg")
            rest = re.sub(r"\W+", "_", m.group(2)).strip("_")
            return head + ("_" + rest if rest else "")
    if src.kind == "held":
        return "captured"
    return src.label


def _ident(label: str, taken: set) -> str:
    name = re.sub(r"\W+", "_", label).strip("_") or "x"
    if name[0].isdigit():
        name = "x" + name
    if keyword.iskeyword(name) or name in ("np", "saved", "grads", "forward") or name.startswith("_"):
        name = name.lstrip("_") + "_"
    base = name
    k = 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def reset_all() -> None:
    """Forget every compiled program (torch._dynamo.reset)."""
    for c in list(_registry):
        c._reset()


# ----------------------------------------------------------------------------- ember.compile
def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable: bool = False, recompile_limit=None, isolate_recompiles: bool = False,
            shapes_spec=None):  # noqa: A001 - torch's name
    """Trace ``model`` (a function or module) once per guard set and replay it as a flat NumPy program
    (NOTE [compile]); ``compile(**options)`` alone gives a decorator."""
    if model is None:
        def decorate(fn):
            if fn is None:
                raise RuntimeError("Model can't be None")
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend is None:
        from ..compiler import get_default_backend

        backend = get_default_backend()
    if isinstance(backend, str):
        from .. import _dynamo

        if backend not in _dynamo._BACKENDS:
            from .._dynamo.exc import InvalidBackend

            raise InvalidBackend(backend)
    elif not callable(backend):
        raise TypeError(f"backend must be a string or a callable, got {type(backend).__name__}")
    if disable:
        return model
    if not callable(model):
        raise RuntimeError("torch.compile() expects a callable, got " + type(model).__name__)
    from ..nn.modules.module import Module

    kw = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
              recompile_limit=recompile_limit, name=name)
    if isinstance(model, Module):
        from .._dynamo.eval_frame import OptimizedModule

        return OptimizedModule(model, kw)
    return CompiledFunction(model, **kw)
