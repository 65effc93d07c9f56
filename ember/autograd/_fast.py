"""The backward engine's fast paths, each beside the plain code it stands for.

The engine (ember/autograd/engine.py) reads as the plain algorithm; what makes it fast lives here:

- NOTE [chain bypass]: the next node of a straight chain runs without a trip through the heap;
- NOTE [in-place gradient sums]: a gradient only the engine's buffer holds is summed into its own array;
- NOTE [array reductions]: broadcast gradients summed on arrays when no graph is recorded;
- NOTE [paused collector]: the cyclic GC is off while the engine walks;
- NOTE [NumPy error state]: NumPy's floating-point warnings switched off through its context variable.

Each is exact: it computes what its plain fallback computes, bit for bit (tests/autograd/test_engine_fast_paths.py).
"""
from __future__ import annotations

import gc
from heapq import heappop, heappush

import numpy as np

from .. import _backend as _B
from .. import _kernels
from .._tensor import Tensor, _wrap
from .graph import _ref_counts
from .grad_mode import _mode

__all__ = ["next_node", "sum_grads", "sum_to", "pause", "resume", "set_numpy_errors", "reset_numpy_errors",
           "NUMPY_QUIET"]

_nd = np.ndarray
_np_add = np.add
_fsum = _kernels.fsum  # Sum's kernel (NOTE [einsum reductions])


# NOTE [chain bypass]: the engine keeps the nodes whose gradients are complete in a heap, the most recently
# created first (torch's order). In a straight chain each step makes exactly one node ready and the heap is
# empty, so that node is the one the heap would return: it runs next without being pushed and popped. When the
# heap holds other ready nodes, the heap decides. The engine calls ``next_node`` only when the heap holds nodes
# (with it empty the next node is ``ready``, or None at the end: a call per node saved on chains). Plain form: push
# every ready node, pop the next.
def next_node(heap: list, ready):
    """The node to run next: ``ready`` (the first node the last step made ready, or None) or the heap's top."""
    if ready is not None:
        if not heap:
            return ready
        heappush(heap, (-ready._seq, id(ready), ready))
    return heappop(heap)[2] if heap else None


# NOTE [in-place gradient sums]: without create_graph, a node's input buffer sums the gradients of one input
# as NumPy arrays of the same shape and dtype, which is exactly what ``Add`` computes (plain form: ``old + g``,
# an op dispatch). When nothing but the engine's buffer sees ``old`` (the reference counts of NOTE [stolen
# gradients] in ember/autograd/graph.py, calibrated below for this function's caller), the sum is written into
# its array, so a weight that receives many gradients allocates one array, not one per sum.
def sum_grads(old, g):
    """``old + g`` for two gradients of one input without a graph (the caller holds ``old`` in one local name)."""
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
                out = _B.asarray(out, a.dtype)
            return _wrap(out, old._dtype)
    return old + g  # a hook's odd result: through the op


def _calibrate_buffer_counts() -> tuple:
    """The reference counts ``sum_grads`` sees for a gradient only the engine's buffer holds: the buffer list,
    the caller's ``old`` and ``sum_grads``'s parameter."""
    class Probe:
        __slots__ = ("_data",)

    def sum_grads(old):  # stands for sum_grads
        return _ref_counts((old,))

    t = Probe()
    t._data = np.empty(1, np.float32)
    buf = [t]
    del t
    old = buf[0]
    return sum_grads(old)


_BUFFER_COUNTS = _calibrate_buffer_counts()


# NOTE [array reductions]: a gradient of a broadcast input is summed back to the input's shape once, by the
# engine. Without a graph and without forward-AD / vmap levels (NOTE [raw backward] in ember/ops/_op.py), that
# is the NumPy sum ``Sum`` computes, done on the array; a 16-bit float sums in float32 through the op (NOTE
# [reduced precision]). Plain form: ``g.sum_to_size(shape)``.
def sum_to(g: Tensor, shape) -> Tensor:
    """``g.sum_to_size(shape)``: on arrays where no graph or level needs the op."""
    if _mode.grad_enabled or _mode.interpose is not None or g._dtype._reduced:
        return g.sum_to_size(shape)
    arr = g._data
    lead = arr.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and arr.shape[lead + i] != 1)
    if len(dims) == lead:  # only leading dims (a bias): the sum has the shape and owns its memory
        out = _fsum(arr, dims)
    else:
        out = _fsum(arr, dims, True).reshape(shape)
    return _wrap(out, g._dtype)


# NOTE [NumPy error state]: backward formulas (and the forward kernels of NOTE [silent kernels] in
# ember/ops/_op.py) meet inf and nan as torch's do, without NumPy's RuntimeWarnings. NumPy keeps its error state
# in a context variable; setting it directly costs ~0.2 µs and is thread- and async-safe like np.errstate, which
# costs ~1 µs. Plain form (another NumPy layout): np.seterr.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _fp_state, _make_extobj

    set_numpy_errors = _fp_state.set  # (state) -> token
    reset_numpy_errors = _fp_state.reset  # (token)
    NUMPY_QUIET = _make_extobj(all="ignore")  # the state with every floating-point error ignored
except ImportError:  # pragma: no cover - another NumPy layout
    def set_numpy_errors(state: dict) -> dict:
        return np.seterr(**state)

    def reset_numpy_errors(token: dict) -> None:
        np.seterr(**token)

    NUMPY_QUIET = {"all": "ignore"}


# NOTE [paused collector]: the walk creates no reference cycles, so the cyclic collector has nothing to find
# while it runs; its passes over a large live graph would only make backward superlinear in the graph's size.
# Plain form: leave the collector on.
def pause() -> tuple:
    """Enter a backward walk: the collector paused (unless the user paused it), NumPy's warnings off."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    return collecting, set_numpy_errors(NUMPY_QUIET)


def resume(state: tuple) -> None:
    """Leave a backward walk: undo ``pause``."""
    collecting, token = state
    reset_numpy_errors(token)
    if collecting:
        gc.enable()
