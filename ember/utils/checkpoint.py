"""Activation checkpointing: keep less during forward, recompute what backward needs."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

from .. import _random
from .._tensor import Tensor
from ..autograd import graph as _graph
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


class _RngState:
    """The default generator's state at forward time, restored for the recomputation."""

    def __init__(self, preserve: bool) -> None:
        self.state = _random.default_generator._rng.bit_generator.state if preserve else None

    def run(self, fn: Callable, *args, **kwargs):
        if self.state is None:
            return fn(*args, **kwargs)
        bitgen = _random.default_generator._rng.bit_generator
        current = bitgen.state
        bitgen.state = self.state
        try:
            return fn(*args, **kwargs)
        finally:
            bitgen.state = current


class _Reentrant(Function):
    """Forward without a graph; backward reruns the function with one and backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, rng, kwargs, *args):
        ctx.run_function, ctx.rng, ctx.kwargs = run_function, rng, kwargs
        ctx.inputs = [a if not isinstance(a, Tensor) else None for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward as _backward

        tensors = iter(ctx.saved_tensors)
        inputs = []
        for a in ctx.inputs:
            if a is None:
                t = next(tensors)
                d = t.detach()
                d.requires_grad_(t.requires_grad)
                inputs.append(d)
            else:
                inputs.append(a)
        with enable_grad():
            outs = ctx.rng.run(ctx.run_function, *inputs, **ctx.kwargs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(i.grad if isinstance(i, Tensor) and i.requires_grad else None
                                          for i in inputs)


def _checkpoint_without_reentrant(function, rng: _RngState, args, kwargs, context_fn=None):
    """Saved tensors become indices; the first unpack recomputes the forward and fills them in. ``context_fn()``
    gives the context managers the forward and the recomputation run in, as torch's."""
    forward_ctx, recompute_ctx = context_fn() if context_fn is not None else (_nothing(), _nothing())
    recomputed: list = []
    state = {"done": False}

    def pack(t):
        slots = state["n"]
        slots.append(None)  # remember only how many were saved, not the tensors
        return len(slots) - 1

    def unpack(index: int):
        if not state["done"]:
            def keep(t):
                # detached: values are what backward needs; holding the recomputed graph's own outputs would
                # make reference cycles (output -> its node -> saved output)
                recomputed.append(t.detach())
                return None

            with enable_grad(), recompute_ctx, _graph.saved_tensors_hooks(keep, lambda t: t):
                rng.run(function, *args, **kwargs)
            state["done"] = True
            if len(recomputed) != len(state["n"]):
                raise RuntimeError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                   f"original forward and recomputation.\nNumber of tensors saved during forward: "
                                   f"{len(state['n'])}\nNumber of tensors saved during recomputation: "
                                   f"{len(recomputed)}")
        return recomputed[index]

    state["n"] = []
    with forward_ctx, _graph.saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs) -> Any:
    """Run ``function(*args, **kwargs)`` keeping only its inputs; backward recomputes the rest.
    ``preserve_rng_state`` (a keyword, as torch's) restores the random state for the recomputation;
    ``early_stop`` only lets torch stop recomputing once every saved tensor is back (the same gradients)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version "
                      "2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences between the two "
                      "variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    rng = _RngState(kwargs.pop("preserve_rng_state", True))
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _Reentrant.apply(function, rng, {}, *args)
    # determinism_check="default": the recomputation must save as many tensors as the forward did (checked in
    # unpack); debug: torch's op trace on a mismatch is not kept (the error says what differed)
    return _checkpoint_without_reentrant(function, rng, args, kwargs, context_fn)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Split a Sequential (or list of modules) into ``segments`` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences "
                      "between the two variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, "children") and not isinstance(functions, list):
        functions = list(functions.children())

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)

