"""ember.autograd: reverse-mode automatic differentiation over the recorded graph."""
from __future__ import annotations

import warnings

from .._tensor import Tensor
from .._factories import zeros_like
from . import graph
from . import _provenance
from . import _stale
from ._stale import set_detect_stale_graph, is_stale_graph_detection_enabled, StaleGraphWarning
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled
from .engine import run_backward, _make_grads
from .._malloc import allocation_error as _allocation_error
from .function import Function, FunctionCtx, once_differentiable, BackwardCFunction
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled)
from .gradcheck import gradcheck, gradgradcheck  # eager: importing the submodule would shadow the function
from .._lazy import attach

# loaded on first use: functional transforms, forward-mode AD, Variable, graph explanations
__getattr__, __dir__ = attach(__name__, {
    "functional": ".functional",
    "forward_ad": ".forward_ad", "Variable": ".variable:Variable", "explain": "._explain:explain",
    "Explanation": "._explain:Explanation", "profiler": ".profiler", "profiler_util": ".profiler_util"})

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "gradcheck", "gradgradcheck", "graph", "Variable",
           "is_grad_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "BackwardCFunction",
           "is_inference_mode_enabled", "explain", "Explanation", "set_detect_stale_graph",
           "is_stale_graph_detection_enabled", "StaleGraphWarning"]


def _as_tuple(x) -> tuple:
    if x is None:
        return (None,)
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _grads_for(tensors: tuple, grads) -> tuple:
    """One gradient (or None) per tensor; extra gradients are ignored, as torch does."""
    if grads is None:
        return (None,) * len(tensors)
    grads = _as_tuple(grads)
    if len(grads) < len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    return grads[:len(tensors)]


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate into ``.grad`` the gradients of ``tensors`` w.r.t. the graph's leaves."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _grads_for(tensors, grad_tensors)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_create_graph_once()
    _provenance.note_backward(tensors)
    if _stale._enabled:
        _stale.check_backward(tensors)
    try:  # (no cost unless raised: NOTE [allocation failures] in ember/_malloc.py)
        run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)
    except MemoryError as e:
        raise _allocation_error(e) from None


_create_graph_warned = False


def _warn_create_graph_once() -> None:
    """torch warns once per process that ``backward(create_graph=True)`` links params and grads."""
    global _create_graph_warned
    if _create_graph_warned:
        return
    _create_graph_warned = True
    warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter "
                  "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
                  "creating the graph to avoid this. If you have to use this function, make sure to reset the "
                  ".grad fields of your parameters to None after use to break the cycle and avoid the leak.",
                  UserWarning, stacklevel=3)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` w.r.t. ``inputs`` (returned, not accumulated into ``.grad``)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if len(inputs_t) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _grads_for(outputs, grad_outputs)
    if is_grads_batched:
        return _batched_grad(outputs, inputs_t, grads, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if _stale._enabled:
        _stale.check_backward(outputs)
    try:
        result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs_t, accumulate=False)
    except MemoryError as e:
        raise _allocation_error(e) from None
    out = []
    for i, (t, g) in enumerate(zip(inputs_t, result)):
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    return tuple(out)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize):
    from .. import stack

    n = grads[0].shape[0]
    rows = []
    for b in range(n):
        rows.append(grad(outputs, inputs, [g[b] for g in grads], retain_graph=True,
                         create_graph=create_graph, allow_unused=allow_unused,
                         materialize_grads=materialize))
    return tuple(None if rows[0][i] is None else stack([r[i] for r in rows])
                 for i in range(len(inputs)))
