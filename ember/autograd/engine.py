"""The backward engine: dependency counts, then a ready queue ordered by sequence number.

# NOTE [engine walk]
1. From the root edges, an iterative DFS counts, for every reachable node, how many edges enter
   it (``deps``). No recursion: a chain of a million nodes is fine.
2. When only some inputs are asked for (``autograd.grad`` or ``backward(inputs=...)``), nodes
   that cannot reach one of them are pruned (``needed``), as torch's exec_info does. The walk of
   step 1 is a post-order (one root at a time), so one pass over it decides ``needed``.
   ``backward(inputs=)`` makes each input retain its grad and runs the inputs' own nodes;
   ``autograd.grad`` only captures an input's gradient as its node is reached.
3. A heap holds the nodes whose gradients are complete, highest sequence number first (the most
   recently created node runs first, as in torch). Each node's incoming gradients are summed
   in its input buffer; when its count drops to zero it is ready. A node that is the only one
   made ready by a step, with the heap empty, runs next without the heap (straight chains).
   Without ``create_graph`` the buffer sums are NumPy sums of same-shape, same-dtype arrays,
   exactly what ``Add`` computes; with it they are ``Add`` ops, so the sum is differentiable.
   The cyclic GC is paused during the walk (it creates no cycles; the collector's passes over
   a large live graph only cost time).
4. Running a node: tensor pre-hooks (then retain_grad hooks), capture for ``autograd.grad``,
   node pre-hooks, the backward formula (grad mode on only with ``create_graph``), post hooks, the
   saved tensors freed unless ``retain_graph``, and each gradient added to its input's buffer. Each
   gradient is made to match its input's shape and dtype (broadcast gradients are summed here, once,
   for every op): as it is added, in the same pass over the edges, or before the post hooks and the
   anomaly nan check when there are any (they see valid gradients).
"""
from __future__ import annotations

import gc
import heapq
import threading
from heapq import heappop, heappush

import numpy as np

from .. import _kernels
from .._tensor import Tensor, Size, _wrap
from . import anomaly_mode as _anomaly
from .graph import AccumulateGrad, _ref_counts
from .grad_mode import _mode

__all__ = ["run_backward", "queue_callback"]

_nd = np.ndarray
_asarray = np.asarray
_fsum = _kernels.fsum  # Sum's kernel (NOTE [einsum reductions])
_np_add = np.add


def _root_edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return fn, t._output_nr
    return t._grad_accumulator(), 0


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
        # (on arrays only without a graph and without forward-AD / vmap levels: NOTE [raw backward])
        # (a 16-bit float sums in float32 through the op: NOTE [reduced precision] in ops/_op.py)
        g = (_sum_to_arr(g, shape) if not _mode.grad_enabled and _mode.interpose is None and not g._dtype._reduced
             else g.sum_to_size(shape))
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


def _sum_to_arr(g: Tensor, shape) -> Tensor:
    """``g.sum_to_size(shape)`` on arrays, for create_graph=False: the same NumPy sum ``Sum`` computes."""
    arr = g._data
    lead = arr.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and arr.shape[lead + i] != 1)
    if len(dims) == lead:  # only leading dims (a bias): the sum has the shape and owns its memory
        out = _fsum(arr, dims)
    else:
        out = _fsum(arr, dims, True).reshape(shape)
    return _wrap(out, g._dtype)


def _sum_grads(old, g):
    """``old + g`` for two gradients of one input without a graph (create_graph=False).

    Both already have the input's shape and dtype, so NumPy's sum is exactly what ``Add`` computes;
    anything else (a hook's odd result) goes through the op. When nothing but the engine's buffer sees
    ``old`` (NOTE [stolen gradients]: the same reference counts), the sum is written into its array."""
    if type(old) is Tensor and type(g) is Tensor and old._dtype is g._dtype:
        a = old._data
        b = g._data
        if a.shape == b.shape:
            if a.base is None and type(a) is _nd and a.flags.writeable and a.ndim:
                del a
                if _ref_counts((old,)) == _BUFFER_COUNTS:
                    a = old._data
                    _np_add(a, b, out=a)
                    return old
                a = old._data
            out = a + b
            if type(out) is not _nd:  # 0-d arrays sum to NumPy scalars
                out = _asarray(out, a.dtype)
            return _wrap(out, old._dtype)
    return old + g


def _calibrate_buffer_counts() -> tuple:
    """The reference counts ``_sum_grads`` sees for a gradient that only the engine's buffer holds: the
    buffer list, the loop's ``old`` and ``_sum_grads``'s parameter (as NOTE [stolen gradients])."""
    class Probe:
        __slots__ = ("_data",)

    def sum_grads(old):  # stands for _sum_grads
        return _ref_counts((old,))

    t = Probe()
    t._data = np.empty(1, np.float32)
    buf = [t]
    del t
    old = buf[0]
    return sum_grads(old)


_BUFFER_COUNTS = _calibrate_buffer_counts()


def _expandable(shape, to) -> bool:
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


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


def run_backward(outputs, grad_outputs, keep_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True, allow_unused: bool = True):
    """Backpropagate ``grad_outputs`` from ``outputs``; capture grads of ``inputs`` if not
    accumulating (autograd.grad). Returns the captured gradients (or None)."""
    if _mode.tracer is not None:  # ember.compile: a backward pass inside the compiled function
        _mode.tracer.unsupported("backward() or autograd.grad() inside the compiled function")
    root_edges = []
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        root_edges.append(_root_edge(t))

    capture = None  # (node, nr) -> list of result slots (autograd.grad)
    target_nodes = None
    if inputs is not None:
        target_nodes = set()
        if accumulate:
            # backward(inputs=...): as torch, every input retains its grad (raising for one that does not
            # require grad; a no-op on leaves) and the node of each input runs.
            for t in inputs:
                t.retain_grad()
                target_nodes.add(_root_edge(t)[0])
        else:
            capture = {}
            for k, t in enumerate(inputs):
                if not t._requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                edge = _root_edge(t)
                target_nodes.add(edge[0])
                capture.setdefault(edge, []).append(k)

    needed = None
    if target_nodes is not None:
        deps, order = _discover([e[0] for e in root_edges])
        needed = _needed_nodes(order, target_nodes, accumulate)
    else:
        deps = _count_deps([e[0] for e in root_edges])

    buffers: dict = {}
    for (fn, nr), g in zip(root_edges, grad_outputs):
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * len(fn._meta_out)
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    captured = [None] * len(inputs) if capture is not None else None
    heap = []
    for fn in buffers:
        if deps.get(fn, 0) == 0:
            heap.append((-fn._seq, id(fn), fn))
    heapq.heapify(heap)

    prev_mode = _mode.grad_enabled
    _mode.grad_enabled = create_graph
    check_nan = _anomaly._enabled and _anomaly._check_nan
    # The walk creates no reference cycles, so the cyclic collector has nothing to find here; its
    # passes over a large live graph would make backward superlinear in the graph size.
    gc_was_enabled = gc.isenabled()
    if gc_was_enabled:
        gc.disable()
    fp_token = _quiet_numpy()  # backward formulas meet inf/nan as torch's do: no NumPy RuntimeWarnings
    callbacks = _push_task()
    profiler = _mode.profiler  # NOTE [profiler]: read once per backward
    pending = None  # the single node made ready by the last step: run next without the heap (chains)
    try:
        while True:
            if pending is not None:
                fn = pending
                pending = None
            elif heap:
                fn = heappop(heap)[2]
            else:
                break
            grads = buffers.pop(fn)
            h = fn._hooks
            if h is not None or (type(fn) is AccumulateGrad and fn.variable._ext is not None):
                grads = _call_tensor_hooks(fn, grads)
            if capture is not None:
                for nr, g in enumerate(grads):
                    slots = capture.get((fn, nr))
                    if slots:
                        for k in slots:
                            captured[k] = g
            if needed is not None and fn not in needed:
                continue
            if h is not None and h.pre:
                for hook in list(h.pre.values()):
                    r = hook(tuple(grads))
                    if r is not None:
                        grads = _checked_all(hook, grads, r)
            edges = fn._next
            try:
                result = fn._apply(grads) if profiler is None else profiler.evaluate(fn, grads)
                if edges and len(result) != len(edges):
                    _validate(fn, result, edges)  # raises
                if h is not None and h.post:
                    if edges:
                        # as torch, hooks see None for an input that needs no gradient (a constant)
                        result = [None if e[0] is None else g for e, g in zip(edges, _validate(fn, result, edges))]
                    for hook in list(h.post.values()):
                        r = hook(tuple(result), tuple(grads))
                        if r is not None:
                            result = _checked_all(hook, result, r)
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
                        buf[nr] = _sum_grads(old, g)
                elif nxt not in buffers:
                    buffers[nxt] = [None] * len(nxt._meta_out)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    if pending is None:
                        pending = nxt
                    else:
                        heappush(heap, (-nxt._seq, id(nxt), nxt))
            g = result = None  # no stale references: a leaf may take an unshared gradient (NOTE [stolen gradients])
            if pending is not None and heap:  # the heap decides when other nodes are ready too
                heappush(heap, (-pending._seq, id(pending), pending))
                pending = None
        _run_callbacks(callbacks)
    finally:
        _tasks.stack.pop()
        _mode.grad_enabled = prev_mode
        _restore_numpy(fp_token)
        if gc_was_enabled:
            gc.enable()

    return captured


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


def _quiet_numpy():
    return _fp_state.set(_FP_IGNORE) if _fp_state is not None else np.seterr(all="ignore")


def _restore_numpy(token) -> None:
    if _fp_state is not None:
        _fp_state.reset(token)
    else:
        np.seterr(**token)


try:
    from numpy._core._ufunc_config import _extobj_contextvar as _fp_state, _make_extobj

    _FP_IGNORE = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - another NumPy layout
    _fp_state = _FP_IGNORE = None


def _nan_check(fn, grads) -> None:
    for i, g in enumerate(grads):
        if g is not None and g._dtype._differentiable and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


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
