"""The backward engine: count dependencies, then run each node once its gradients are complete.

# NOTE [engine walk]
``run_backward`` reads as the plain algorithm, in named steps (the fast paths that keep it quick, each
exact, are in ember/autograd/_fast.py):
1. ``_dependencies``: from the root edges, an iterative walk counts, for every reachable node, how many
   edges enter it (``deps``). No recursion: a chain of a million nodes is fine. When only some inputs
   are asked for (``autograd.grad`` or ``backward(inputs=...)``), nodes that cannot reach one of them
   are pruned (``needed``), as torch's exec_info does: the walk is then a post-order (one root at a
   time), so one pass over it decides ``needed``. ``backward(inputs=)`` makes each input retain its
   grad and runs the inputs' own nodes; ``autograd.grad`` only captures an input's gradient as its
   node is reached.
2. ``_seed``: the root gradients go into their nodes' input buffers (one slot per node output).
3. ``_execute``: a heap holds the nodes whose gradients are complete, highest sequence number first
   (the most recently created node runs first, as in torch). Each step takes the next node's buffer,
   runs the node, and passes its gradients on (NOTE [chain bypass] for straight chains). The cyclic
   GC is paused and NumPy's floating-point warnings are off meanwhile (NOTE [paused collector],
   NOTE [NumPy error state]).
4. ``_run_node``: tensor pre-hooks (then retain_grad hooks) and the capture for ``autograd.grad`` (in
   ``_execute``), node pre-hooks, the backward formula (grad mode on only with ``create_graph``),
   post hooks and the anomaly nan check; then the saved tensors are freed unless ``retain_graph``.
5. ``_accumulate``: each gradient is made to match its input's shape and dtype (broadcast gradients
   are summed here, once, for every op: NOTE [array reductions]) and added to the input buffer of the
   node it flows to; that node's count drops by one, and at zero it is ready. Without
   ``create_graph`` the buffer sums are NumPy sums of same-shape, same-dtype arrays, exactly what
   ``Add`` computes (NOTE [in-place gradient sums]); with it they are ``Add`` ops, so the sum is
   differentiable. Gradients are checked as they are added, in the same pass over the edges, or
   before the post hooks and the anomaly nan check when there are any (they see valid gradients).
"""
from __future__ import annotations

import threading
from heapq import heapify, heappush

import numpy as np

from .._tensor import Tensor, Size
from . import _fast
from . import anomaly_mode as _anomaly
from .graph import AccumulateGrad
from .grad_mode import _mode

__all__ = ["run_backward", "queue_callback"]

_next_node = _fast.next_node
_sum_grads = _fast.sum_grads


def run_backward(outputs, grad_outputs, keep_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True, allow_unused: bool = True):
    """Backpropagate ``grad_outputs`` from ``outputs``; capture grads of ``inputs`` if not
    accumulating (autograd.grad). Returns the captured gradients (or None)."""
    if _mode.tracer is not None:  # ember.compile: a backward pass inside the compiled function
        _mode.tracer.unsupported("backward() or autograd.grad() inside the compiled function")
    root_edges = _root_edges(outputs)
    target_nodes, capture = _targets(inputs, accumulate) if inputs is not None else (None, None)
    deps, needed = _dependencies([fn for fn, _ in root_edges], target_nodes, accumulate)
    buffers = _seed(root_edges, grad_outputs)
    captured = [None] * len(inputs) if capture is not None else None

    prev_mode = _mode.grad_enabled
    _mode.grad_enabled = create_graph
    prev_backward = _mode.in_backward
    _mode.in_backward = True  # backward formulas' host constants follow the gradient's device (NOTE [device check])
    paused = _fast.pause()
    callbacks = _push_task()
    try:
        _execute(buffers, deps, needed, capture, captured, keep_graph, create_graph)
        _run_callbacks(callbacks)
    finally:
        _tasks.stack.pop()
        _mode.grad_enabled = prev_mode
        _mode.in_backward = prev_backward
        _fast.resume(paused)
    return captured


# ----------------------------------------------------------------------------- 1-2. dependencies and roots
def _root_edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return fn, t._output_nr
    return t._grad_accumulator(), 0


def _root_edges(outputs) -> list:
    """The (node, output number) each output's gradient enters the graph at."""
    edges = []
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(_root_edge(t))
    return edges


def _targets(inputs, accumulate: bool):
    """The nodes of ``inputs`` and, for ``autograd.grad``, ``{edge: [result slots]}`` where their gradients are
    captured (None under ``backward(inputs=)``)."""
    target_nodes = set()
    if accumulate:
        # backward(inputs=...): as torch, every input retains its grad (raising for one that does not
        # require grad; a no-op on leaves) and the node of each input runs.
        for t in inputs:
            t.retain_grad()
            target_nodes.add(_root_edge(t)[0])
        return target_nodes, None
    capture = {}
    for k, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edge = _root_edge(t)
        target_nodes.add(edge[0])
        capture.setdefault(edge, []).append(k)
    return target_nodes, capture


def _dependencies(roots, target_nodes, accumulate: bool):
    """``(deps, needed)``: how many edges enter each node reachable from ``roots``, and the nodes that must
    run to reach a target (None: every node)."""
    if target_nodes is None:
        return _count_deps(roots), None
    deps, order = _discover(roots)
    return deps, _needed_nodes(order, target_nodes, accumulate)


def _discover(roots):
    """Dependency counts and a post-order of every node reachable from ``roots`` (iterative)."""
    deps: dict = {}
    seen = set()
    order = []
    stack = []
    for root in roots:  # one root at a time, so ``order`` is a true post-order across roots
        if root in seen:
            continue
        seen.add(root)
        stack.append((root, iter(root._next)))
        while stack:
            fn, it = stack[-1]
            for nxt, _ in it:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt._next)))
                    break
            else:
                stack.pop()
                order.append(fn)
    return deps, order


def _count_deps(roots) -> dict:
    """``_discover``'s dependency counts alone (no post-order): a flat stack, each node expanded once."""
    deps: dict = {}
    stack = list(dict.fromkeys(roots))
    rootset = set(stack)
    while stack:
        for nxt, _ in stack.pop()._next:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if nxt not in rootset:
                    stack.append(nxt)
    return deps


def _needed_nodes(order, target_nodes, accumulate: bool) -> set:
    """Nodes that must run to reach a target (children come before parents in ``order``).

    Under ``backward(inputs=)`` every target's node runs; under ``autograd.grad`` a target's
    gradient is only captured and its node runs only when it leads on to another target."""
    needed = set()
    for fn in order:
        if accumulate and fn in target_nodes:
            needed.add(fn)
            continue
        for n, _ in fn._next:
            if n is not None and (n in needed or n in target_nodes):
                needed.add(fn)
                break
    return needed


def _seed(root_edges, grad_outputs) -> dict:
    """The input buffers (one gradient slot per node output) holding the root gradients."""
    buffers: dict = {}
    for (fn, nr), g in zip(root_edges, grad_outputs):
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * len(fn._meta_out)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    return buffers


# ----------------------------------------------------------------------------- 3. the walk
def _execute(buffers, deps, needed, capture, captured, keep_graph: bool, create_graph: bool) -> None:
    """Run each node once every gradient it waits for is in its buffer, the most recently created first."""
    heap = [(-fn._seq, id(fn), fn) for fn in buffers if deps.get(fn, 0) == 0]
    heapify(heap)
    profiler = _mode.profiler  # NOTE [profiler]: read once per backward
    check_nan = _anomaly._enabled and _anomaly._check_nan
    fn = _next_node(heap, None)
    while fn is not None:
        grads = buffers.pop(fn)
        hooks = fn._hooks
        if hooks is not None or (type(fn) is AccumulateGrad and fn.variable._ext is not None):
            grads = _call_tensor_hooks(fn, grads)
        if capture is not None:
            _capture(fn, grads, capture, captured)
        if needed is not None and fn not in needed:
            fn = _next_node(heap, None)
            continue
        # (the result is not bound here: a leaf may take a gradient nobody else holds, NOTE [stolen gradients])
        fn = _accumulate(fn, _run_node(fn, grads, hooks, profiler, check_nan, keep_graph), buffers, deps, heap,
                         create_graph)


def _capture(fn, grads, capture, captured) -> None:
    """``autograd.grad``: an input's gradient is what arrives at its edge."""
    for nr, g in enumerate(grads):
        slots = capture.get((fn, nr))
        if slots:
            for k in slots:
                captured[k] = g


# ----------------------------------------------------------------------------- 4. one node
def _run_node(fn, grads, hooks, profiler, check_nan: bool, keep_graph: bool):
    """``fn``'s backward formula on its input gradients, between its hooks: one gradient (or None) per edge."""
    if hooks is not None and hooks.pre:
        grads = _call_pre_hooks(hooks, grads)
    edges = fn._next
    try:
        result = fn._apply(grads) if profiler is None else profiler.evaluate(fn, grads)
        if edges and len(result) != len(edges):
            _validate(fn, result, edges)  # raises
        if hooks is not None and hooks.post:
            result = _call_post_hooks(fn, hooks, result, grads)
        if check_nan:
            if edges:
                result = _validate(fn, result, edges)
            _nan_check(fn, result)
    except Exception:
        if _anomaly._enabled:
            _anomaly._warn_error_in(fn)
        raise
    if not keep_graph and fn._saved:
        fn._release()
    return result


# ----------------------------------------------------------------------------- 5. passing gradients on
def _accumulate(fn, result, buffers, deps, heap, create_graph: bool):
    """Add each gradient of ``result`` to the buffer of the node its edge leads to, and count that node's
    dependency down. Returns the node to run next (None when none is left)."""
    edges = fn._next
    ready = None
    for (nxt, nr), g in zip(edges, result):
        if nxt is None:
            continue
        if g is not None:
            # (each gradient must have its input's shape and dtype: checked here, fixed in the rare case)
            shape, dt = nxt._meta_out[nr]
            if type(g) is not Tensor or g._dtype is not dt or g._data.shape != shape:
                g = _fixed(fn, result, edges, nxt, nr, g)
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * len(nxt._meta_out)
            old = buf[nr]
            if old is None:
                buf[nr] = g
            elif create_graph or _mode.interpose is not None:  # NOTE [raw backward]
                buf[nr] = old + g
            else:
                buf[nr] = _sum_grads(old, g)  # NOTE [in-place gradient sums]
        elif nxt not in buffers:
            buffers[nxt] = [None] * len(nxt._meta_out)
        d = deps[nxt] - 1
        deps[nxt] = d
        if d == 0:
            if ready is None:
                ready = nxt
            else:
                heappush(heap, (-nxt._seq, id(nxt), nxt))
    return ready if not heap else _next_node(heap, ready)  # NOTE [chain bypass]


def _validate(fn, grads, edges):
    """Sum broadcast gradients back to each input's shape; cast to its dtype."""
    if len(grads) != len(edges):
        raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients (expected "
                           f"{len(edges)}, got {len(grads)})")
    out = grads
    for i, g in enumerate(grads):
        if g is None:
            continue
        nxt, nr = edges[i]
        if nxt is None:
            continue
        shape, dt = nxt._meta_out[nr]
        if type(g) is Tensor and g._dtype is dt and g._data.shape == shape:
            continue  # the common case: nothing to fix
        if not isinstance(g, Tensor):
            raise TypeError(f"function {fn.name()} returned a gradient of type {type(g).__name__} at "
                            f"index {i}; expected a Tensor or None")
        if g._data.shape != shape and not _expandable(shape, g._data.shape):
            raise RuntimeError(f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                               f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
        if out is grads:
            out = list(grads)
        out[i] = _conform(g, shape, dt)
    return out


def _conform(g: Tensor, shape, dt) -> Tensor:
    """A valid gradient (a Tensor of a shape that expands to ``shape``) summed to ``shape`` and cast to ``dt``."""
    if g._data.shape != shape:
        g = _fast.sum_to(g, shape)  # NOTE [array reductions]
    if g._dtype is not dt:
        if g._dtype.is_complex and not dt.is_complex:  # a real input's share of a complex gradient: its real part
            g = g.real
        g = g.to(dt)
    return g


def _fixed(fn, result, edges, nxt, nr, g):
    """``g``, the gradient ``fn`` returned for edge ``(nxt, nr)``, as ``_validate`` makes it (raising as it does)."""
    shape, dt = nxt._meta_out[nr]
    if type(g) is Tensor and _expandable(shape, g._data.shape):  # the common case (a broadcast gradient): no error
        return _conform(g, shape, dt)
    try:
        fixed = _validate(fn, result, edges)
    except Exception:
        if _anomaly._enabled:
            _anomaly._warn_error_in(fn)
        raise
    for j, (e, r) in enumerate(zip(edges, result)):
        if r is g and e[0] is nxt and e[1] == nr:
            return fixed[j]
    raise AssertionError("unreachable: the gradient is in the result")  # pragma: no cover


def _expandable(shape, to) -> bool:
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


# ----------------------------------------------------------------------------- hooks
def _checked(hook, old, new):
    """A tensor hook's replacement gradient, refused when its type or size differs (as torch)."""
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if old is not None:
        if new._dtype is not old._dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {old.type()} got "
                               f"{new.type()})")
        if new._data.shape != old._data.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


def _checked_all(hook, old, new) -> list:
    """A node hook's replacement tuple: same length, each value checked as a tensor hook's."""
    new = list(new)
    if len(new) != len(old):
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
                           f"expected {len(old)})")
    return [g if g is None else _checked(hook, o, g) for o, g in zip(old, new)]


def _call_pre_hooks(hooks, grads):
    for hook in list(hooks.pre.values()):
        r = hook(tuple(grads))
        if r is not None:
            grads = _checked_all(hook, grads, r)
    return grads


def _call_post_hooks(fn, hooks, result, grads):
    edges = fn._next
    if edges:
        # as torch, hooks see None for an input that needs no gradient (a constant)
        result = [None if e[0] is None else g for e, g in zip(edges, _validate(fn, result, edges))]
    for hook in list(hooks.post.values()):
        r = hook(tuple(result), tuple(grads))
        if r is not None:
            result = _checked_all(hook, result, r)
    return result


def _call_tensor_hooks(fn, grads):
    hooks = fn._tensor_pre_hooks()
    if hooks is None:
        return grads
    if type(fn) is AccumulateGrad:  # leaf hooks live on the tensor
        for h in list(hooks["hooks"].values()):
            r = h(grads[0])
            if r is not None:
                grads[0] = _checked(h, grads[0], r)
        return grads
    for nr, d in hooks.tensor_pre.items():
        for h in list(d.values()):
            r = h(grads[nr])
            if r is not None:
                grads[nr] = _checked(h, grads[nr], r)
    for nr, h in list(hooks.retain.items()):
        h(grads[nr])
    return grads


def _nan_check(fn, grads) -> None:
    for i, g in enumerate(grads):
        if g is not None and g._dtype._differentiable and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


# ----------------------------------------------------------------------------- final callbacks
# torch's Variable._execution_engine.queue_callback: a callable queued while a backward runs is called once that
# backward has run every node (e.g. DistributedDataParallel waits for its gradient all-reduces there). One list per
# running backward (nested backward calls from hooks have their own), per thread; outside the node loop.
_tasks = threading.local()


def _push_task() -> list:
    stack = getattr(_tasks, "stack", None)
    if stack is None:
        stack = _tasks.stack = []
    callbacks = []
    stack.append(callbacks)
    return callbacks


def _run_callbacks(callbacks: list) -> None:
    i = 0
    while i < len(callbacks):  # a callback may queue more
        callbacks[i]()
        i += 1


def queue_callback(callback) -> None:
    """Call ``callback()`` when the backward pass running on this thread has finished its graph."""
    stack = getattr(_tasks, "stack", None)
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].append(callback)



def _make_grads(outputs, grads, is_grads_batched: bool = False):
    """Default ``ones`` gradients for scalar outputs; shape checks for given ones."""
    from .. import _factories  # noqa: PLC0415 - import cycle

    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t._requires_grad:
                if t._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not t._dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but "
                                       f"got {t._dtype}")
                g = _factories.ones_like(t)
            out.append(g)
            continue
        if not isinstance(g, Tensor):
            g = _factories.tensor(g, dtype=t._dtype)
        if not is_grads_batched and g._data.shape != t._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} "
                               f"and output[{i}] has a shape of {Size(t._data.shape)}.")
        if t._dtype.is_complex != g._dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g._dtype} and "
                               f"output[{i}] has a dtype of {t._dtype}.")
        out.append(g)
    return out
