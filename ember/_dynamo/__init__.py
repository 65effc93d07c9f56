"""ember._dynamo: torch._dynamo's user-facing switches and decorators over ember.compile (NOTE [compile]).

``is_compiling()`` is true while ember.compile traces a call; ``reset()`` forgets every compiled program;
``graph_break()`` and functions wrapped by ``disable`` end the trace there (the call runs eagerly); ``set_stance``
switches compiled callables to eager or refuses recompiles; ``explain(fn)(*args)`` compiles and reports. Marks for
dynamic shapes are accepted and do nothing (ember specialises every shape). ``config`` is a settings namespace with
torch's defaults (NOTE [config modules]); ``recompile_limit``/``cache_size_limit``, ``error_on_recompile`` and
``disable`` are read by ember.compile."""
from __future__ import annotations

import functools

from ..autograd.grad_mode import _mode
from ..utils._config_module import ConfigModule
from . import eval_frame, exc
from .eval_frame import OptimizedModule

__all__ = ["config", "is_compiling", "reset", "disable", "allow_in_graph", "disallow_in_graph", "forbid_in_graph",
           "graph_break", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address", "optimize",
           "run", "list_backends", "lookup_backend", "register_backend", "is_dynamo_supported",
           "is_inductor_supported", "set_stance", "nonstrict_trace", "substitute_in_graph", "assume_constant_result",
           "reset_code_caches", "OptimizedModule", "eval_frame", "exc", "explain"]

config = ConfigModule(__name__ + ".config", "torch._dynamo.config", {
    "suppress_errors": False, "cache_size_limit": 8, "recompile_limit": 8, "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256, "optimize_ddp": True, "verbose": False, "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False, "automatic_dynamic_shapes": True, "assume_static_by_default": True,
    "specialize_int": False, "specialize_float": False, "inline_inbuilt_nn_modules": True, "log_file_name": None,
    "verify_correctness": False, "error_on_recompile": False, "guard_nn_modules": True, "allow_rnn": False,
    "force_parameter_static_shapes": True, "force_nn_module_property_static_shapes": True,
    "compiled_autograd": False, "skip_nnmodule_hook_guards": True, "replay_record_enabled": False,
    "raise_on_ctx_manager_usage": True, "disable": False, "dynamic_shapes": True, "use_lazy_graph_module": True,
    "allow_unspec_int_on_nn_module": False, "skip_fsdp_guards": True,
    "prefer_deferred_runtime_asserts_over_guards": False, "trace_numpy": True, "numpy_default_float": "float64",
    "numpy_default_int": "int64", "rewrite_assert_with_torch_assert": True, "report_guard_failures": True,
})

# torch.compile's backends (list_backends() leaves out the debug and experimental ones, as torch)
_BACKENDS = {"cudagraphs": (), "inductor": (), "openxla": (), "tvm": (), "eager": ("debug",),
             "aot_eager": ("debug",), "aot_eager_decomp_partition": ("debug",), "onnxrt": ("experimental",)}
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")


def is_compiling() -> bool:
    """True while ember.compile traces the calling code."""
    return _mode.tracer is not None


def is_dynamo_supported() -> bool:
    return True


def is_inductor_supported() -> bool:
    return True


def reset() -> None:
    """Forget every compiled program (each compiled callable traces again on its next call)."""
    from .._compile.api import reset_all

    reset_all()


def reset_code_caches() -> None:
    """Forget cached compiled code."""
    reset()


def _decorator(fn=None, /, **kwargs):
    """Decorators that mark a function for the compiler: usable bare, called, or on a function; return it."""
    if fn is None:
        return lambda f: f
    return fn


def disable(fn=None, recursive: bool = True, *, reason=None):
    """Keep ``fn`` out of compilation: a compiled call that reaches it ends its trace there (a graph break) and
    runs eagerly; outside compiled code ``fn`` runs as it is."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    if not callable(fn):
        raise RuntimeError(f"disable() expects a callable, got {type(fn).__name__}")

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        if _mode.tracer is not None:
            _mode.tracer.unsupported(f"torch._dynamo.disable'd function {getattr(fn, '__qualname__', fn)}"
                                     + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)

    disabled._torchdynamo_disable = True
    return disabled


def allow_in_graph(fn):
    """Put ``fn`` into compiled graphs as one call (the function itself here)."""
    return fn


def disallow_in_graph(fn):
    return fn


def forbid_in_graph(fn):
    """Make compiling a call to ``fn`` an error (no compilation happens here)."""
    fn._dynamo_forbidden = True
    return fn


def nonstrict_trace(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False):
    """Register a traceable replacement for ``original_fn``: outside compiled code the decorated name calls
    ``original_fn``, as in torch."""
    def register(polyfill):
        return functools.wraps(polyfill)(lambda *args, **kwargs: original_fn(*args, **kwargs))

    return register


def graph_break(msg: str = "") -> None:
    """End the trace of the compiled call here: that call runs eagerly (with fullgraph=True, an error)."""
    if _mode.tracer is not None:
        _mode.tracer.unsupported("torch._dynamo.graph_break()" + (f": {msg}" if msg else ""))


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None) -> None:  # noqa: A002 - torch's names
    """Mark dimension(s) of ``t`` as dynamic for the compiler (nothing to mark for)."""


def maybe_mark_dynamic(t, index) -> None:
    pass


def mark_static(t, index=None) -> None:
    pass


def mark_static_address(t, guard: bool = True) -> None:
    pass


def optimize(backend="inductor", *, nopython: bool = False, guard_export_fn=None, guard_fail_fn=None,
             disable: bool = False, dynamic=None, **kwargs):
    """The old spelling of torch.compile: a decorator compiling the function (nopython is fullgraph)."""
    from .._compile.api import compile as _compile

    if disable:
        return lambda fn: fn
    return lambda fn: _compile(fn, fullgraph=nopython, dynamic=dynamic, backend=backend)


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args)``: compile ``fn``, call it on ``args`` and report what was compiled and every graph
    break (an ``ExplainOutput``)."""
    from .._compile.api import CompiledFunction

    def run(*args, **kwargs):
        c = f if isinstance(f, CompiledFunction) else CompiledFunction(f)
        import warnings as _w

        with _w.catch_warnings():
            _w.simplefilter("ignore")
            c(*args, **kwargs)
        return ExplainOutput(c)

    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run


class ExplainOutput:
    """torch._dynamo's explain result: graphs, graph breaks and their reasons (from ember.compile's trace)."""

    def __init__(self, compiled) -> None:
        breaks = [b for b, _ in compiled._breaks]
        self.graph_count = sum(1 for e in compiled._cache if e.program is not None)
        self.graph_break_count = len(breaks)
        self.break_reasons = [f"{b.where()}: {b.reason}" for b in breaks]
        self.op_count = sum(len(e.program.fwd) for e in compiled._cache if e.program is not None)
        self.graphs = [e.program.code for e in compiled._cache if e.program is not None]
        self.ops_per_graph = [[st.label for st in e.program.fwd] for e in compiled._cache if e.program is not None]
        self.out_guards = [e.reasons for e in compiled._cache]
        self.compile_times = "; ".join(", ".join(f"{k} {s:.4f}s" for k, s in t.items())
                                       for e in compiled._cache for t in e.times)
        self._text = compiled.explain()

    def __str__(self) -> str:
        return (f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\nOp Count: "
                f"{self.op_count}\nBreak Reasons:\n" + "".join(f"  Break Reason {i + 1}: {r}\n"
                                                            for i, r in enumerate(self.break_reasons))
                + "\n" + self._text)


def run(fn=None):
    """Run ``fn`` without compiling new frames: ``fn`` itself."""
    return _decorator(fn)


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    exclude = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not exclude & set(tags))


def lookup_backend(compiler_fn):
    """The backend registered under ``compiler_fn`` (a name), or ``compiler_fn`` itself."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            raise RuntimeError(f"Invalid backend: {compiler_fn!r}, see `torch._dynamo.list_backends()` for available "
                               f"backends.")
        return compiler_fn
    return compiler_fn


def register_backend(compiler_fn=None, name: str | None = None, tags=()):
    """Register a compiler backend under its name (ember never calls it)."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _BACKENDS[name or compiler_fn.__name__] = tuple(tags)
    return compiler_fn


class set_stance:  # noqa: N801 - torch's name
    """Set how compiled callables run in this thread: "default", "force_eager" (run the original function),
    "eager_on_recompile" (a guard miss runs eagerly instead of tracing), "fail_on_recompile" (a guard miss raises);
    "eager_then_compile" and "aot_eager_then_compile" behave as "default". Applies at once; also a context
    manager and a decorator restoring the previous stance."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend=None) -> None:
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        from .._compile.api import stance as _current

        self._current = _current
        self.prev = _current.name
        self.stance = stance
        _current.name = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._current.name = self.prev

    def __call__(self, fn):
        stance, current = self.stance, self._current
        current.name = self.prev  # as a decorator it applies inside the function only

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            prev = current.name
            current.name = stance
            try:
                return fn(*args, **kwargs)
            finally:
                current.name = prev

        return wrapped
