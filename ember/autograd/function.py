"""Custom differentiable functions: ``class F(ember.autograd.Function)`` with forward/backward."""
from __future__ import annotations

import inspect

import functools
import threading
from typing import Any

from .._tensor import Tensor, _wrap
from . import anomaly_mode as _anomaly
from . import graph as G
from .grad_mode import _mode, no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class _CtxSink(threading.local):
    ctxs = None  # a list while a forward-AD level runs a Function (it needs the ctx for ``jvp``)


_ctx_sink = _CtxSink()


class FunctionCtx:
    """What ``forward``/``setup_context`` may use to pass information to ``backward``."""

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):  # (not tensors.index(t): == on tensors is elementwise)
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self._to_save_fwd = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place (they must also be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that are not differentiable (e.g. indices)."""
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether None output gradients reach ``backward`` as zeros (default True)."""
        self._materialize = value


class BackwardCFunction(G.Node, FunctionCtx):
    """The node of one ``Function.apply`` call; also its ``ctx``."""

    _forward_cls: Any = None
    _materialize = True
    _dirty = ()
    _non_diff = ()
    _to_save = ()

    def name(self) -> str:
        return self._name

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            return ()
        if saved == "freed":
            raise RuntimeError(G._FREED_MSG)
        return tuple(s.unpack(self) if type(s) is G.SavedTensor else s for s in saved)

    saved_variables = saved_tensors

    def _release(self) -> None:
        saved = self._saved
        if saved:
            for s in saved:
                if type(s) is G.SavedTensor:
                    s._free()
            self._saved = "freed"

    def _get_saved(self, key: str, raw: bool):
        raise AttributeError(f"'{self.name()}' object has no attribute '_saved_{key}'")

    def __getattr__(self, name: str):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _apply(self, grads):
        if self._materialize:
            from .._factories import zeros  # noqa: PLC0415 - avoid import cycle

            grads = [g if g is not None else zeros(m[0], dtype=m[1]) for g, m in zip(grads, self._meta_out)]
        r = self._forward_cls.backward(self, *grads)
        if not isinstance(r, tuple):
            r = (r,) if not isinstance(r, list) else tuple(r)
        # one gradient per forward argument (None for non-tensors), as torch expects
        n = self._n_args
        if len(r) != n:
            if len(r) > n and all(x is None for x in r[n:]):
                r = r[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(r)})")
        r = tuple(r[i] for i in self._tensor_args)
        return tuple(None if e[0] is None else g for g, e in zip(r, self._next))

    def apply(self, *grads):
        """Call the backward of the Function (torch's ``ctx.apply``)."""
        return self._apply(list(grads))

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self._name} object at {hex(id(self))}>"


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs) -> None:
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "_name": name + "Backward"})
        cls._custom_setup = None  # whether it defines setup_context: found on the first apply
        cls._npositional = None  # forward's positional parameters: found by _signature


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd operations (static ``forward`` and ``backward``)."""

    def __init__(self, *args, **kwargs) -> None:
        import warnings

        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself.", DeprecationWarning,
                      stacklevel=2)

    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to "
                                  "use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` without recording, and wire one node whose backward is ``backward``."""
        custom_setup = cls._custom_setup
        if custom_setup is None:
            custom_setup = cls._custom_setup = "setup_context" in _own_attrs(cls)
            _signature(cls)
        if kwargs or (custom_setup and len(args) != cls._npositional):
            args, kwargs = _bind(cls, args, kwargs, custom_setup)
        lvl = _mode.interpose
        if lvl is not None:  # a vmap, forward-AD or profiler level sees the call first
            if hasattr(lvl, "process_function"):  # vmap (ember/func/_vmap.py), profiler (NOTE [profiler])
                return lvl.process_function(cls, args, kwargs)
            if not kwargs:
                return lvl.process(cls, args)
        return cls._apply_plain(args, kwargs)

    @classmethod
    def _apply_plain(cls, args: tuple, kwargs: dict):
        """``apply`` after the levels: run ``forward`` and wire the node."""
        custom_setup = cls._custom_setup
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        if _ctx_sink.ctxs is not None:
            _ctx_sink.ctxs.append(ctx)
        needs = [isinstance(a, Tensor) and a._requires_grad for a in args]
        record = _mode.grad_enabled and any(needs)
        ctx.needs_input_grad = tuple(needs) if record else (False,) * len(args)
        with no_grad():
            if custom_setup:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        return _wire(ctx, args, out, record)


def _signature(cls) -> inspect.Signature:
    """``forward``'s signature, cached on the class with its count of positional parameters (-1: ``*args``)."""
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        sig = cls._forward_signature = inspect.signature(cls.forward)
        kinds = [p.kind for p in sig.parameters.values()]
        cls._npositional = -1 if inspect.Parameter.VAR_POSITIONAL in kinds else sum(
            k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)
    return sig


def _bind(cls, args: tuple, kwargs: dict, custom_setup: bool) -> tuple:
    """Keyword arguments of ``apply`` bound to ``forward``'s parameters, as torch does: with ``setup_context``
    every positional parameter becomes an input (defaults filled in); otherwise keywords become positional
    inputs too (so transform levels see them), keyword-only ones stay keywords."""
    sig = _signature(cls)
    try:
        bound = sig.bind(*args, **kwargs) if custom_setup else sig.bind(None, *args, **kwargs)
    except TypeError as e:
        raise TypeError(str(e)) from None
    if custom_setup:
        bound.apply_defaults()
        return bound.args, bound.kwargs
    return bound.args[1:], bound.kwargs


def _own_attrs(cls) -> set:
    names = set()
    for c in cls.__mro__:
        if c is Function:
            break
        names.update(vars(c))
    return names


def _wire(ctx, args, out, record: bool):
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_diff}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    for t in ctx._dirty:
        if record and t._requires_grad and t._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        t._bump()
    if not record:
        return out
    ctx._seq = G._next_seq()
    ctx._hooks = None
    edges = []
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                fn = a._grad_fn
                edges.append((fn, a._output_nr) if fn is not None else (a._grad_accumulator(), 0))
            else:
                edges.append((None, 0))
    ctx._next = tuple(edges)
    ctx._tensor_args = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    ctx._n_args = len(args)
    results = []
    metas = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            metas.append(((), None))
            continue
        if id(o) in input_ids and id(o) not in dirty:
            o2 = _wrap(o._data, o._dtype)  # an input returned as-is becomes a new alias
            o2._vc = o._version_counter()
            o = o2
        if id(o) in non_diff or not o._dtype._differentiable:
            o._requires_grad = False
        else:
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
        results.append(o)
        metas.append((o._data.shape, o._dtype))
    ctx._meta_out = tuple(metas)
    out_ids = {id(o): i for i, o in enumerate(results) if isinstance(o, Tensor)}
    saved = []
    for t in ctx._to_save:
        if t is None:
            saved.append(None)
        elif id(t) in out_ids:
            saved.append(G._make_saved(t, True, out_ids[id(t)]))
        else:
            saved.append(G._make_saved(t, False))
    ctx._saved = tuple(saved)
    if _anomaly._enabled:
        _anomaly._record_traceback(ctx)
    # The ctx is the outputs' grad_fn: holding the outputs themselves would make a reference cycle.
    ctx._to_save = ctx._dirty = ctx._non_diff = ()
    return results[0] if single else tuple(results)


def once_differentiable(fn):
    """Mark a ``backward`` that is not itself differentiable (double backward raises)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _mode.grad_enabled:
            return outputs
        grad_args = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not grad_args:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        wired = tuple(_DelayedError.apply(o, *grad_args) if isinstance(o, Tensor) else o for o in tup)
        return wired if isinstance(outputs, tuple) else wired[0]

    return wrapper


class _DelayedError(Function):
    @staticmethod
    def forward(ctx, x, *graph_inputs):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._backward_cls._name = "torch::autograd::Error"
