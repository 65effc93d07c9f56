"""Running a compiled program: one call's forward, its outputs wrapped once, and the single graph node whose
backward runs the recorded backward program (NOTE [compile])."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import _new, _wrap, _wrap_out
from ..autograd import graph as G
from ..autograd._fast import NUMPY_QUIET as _QUIET, reset_numpy_errors as _restore_numpy, set_numpy_errors as _set_np
from ..autograd.grad_mode import _mode
from ..ops._op import _link_view
from ..utils._pytree import tree_unflatten

__all__ = ["CompiledFunctionBackward", "run"]

_DOUBLE = "torch.compile with aot_autograd does not currently support double backward"


class CompiledFunctionBackward(G.Node):
    """The node of a compiled call's outputs: its backward is the recorded backward program."""

    __slots__ = ("_prog", "_versions")
    _name = "CompiledFunctionBackward"

    def name(self) -> str:
        return self._name

    def _apply(self, grads):
        saved = self._saved
        if saved is None:
            raise RuntimeError(G._FREED_MSG)
        for t, version, i in self._versions:
            if t._version != version:
                _modified(t, version, i)
        prog = self._prog
        present = tuple(i for i, g in enumerate(grads) if g is not None)
        pat = prog.patterns.get(present)
        if pat is None:  # no program for exactly these: the full one, the missing gradients as zeros
            pat = prog.patterns[tuple(range(len(grads)))]
            ref = next(g._data for g in grads if g is not None)  # zeros on the gradients' device
            arrays = [g._data if g is not None else np.zeros(s, dt.np, like=ref) for g, (s, dt) in
                      zip(grads, prog.meta_out)]
        else:
            arrays = [g._data for g in grads if g is not None]
        token = _set_np(_QUIET)  # NOTE [NumPy error state]
        try:
            res = pat.fn(saved, arrays)
        finally:
            _restore_numpy(token)
        out = []
        for v, arr in zip(prog.grad_inputs, res):
            out.append(None if arr is None else _wrap(arr, v.edt))
        if _mode.grad_enabled:  # create_graph: the gradients cannot be differentiated again (as torch's)
            out = _refuse_double(out)
        return tuple(out)

    def _release(self) -> None:
        self._saved = None


class CompiledFunctionBackwardBackward(G.Node):
    """The node of gradients computed by a compiled backward under create_graph: differentiating them raises."""

    __slots__ = ()
    _name = "CompiledFunctionBackwardBackward"

    def name(self) -> str:
        return self._name

    def _apply(self, grads):
        raise RuntimeError(_DOUBLE)


def _refuse_double(grads: list) -> list:
    node = _new(CompiledFunctionBackwardBackward)
    node._seq = G._next_seq()
    node._hooks = None
    node._saved = None
    node._next = ()
    node._meta_out = tuple((g._data.shape, g._dtype) if g is not None else ((), None) for g in grads)
    return [None if g is None else _wrap_out(g._data, g._dtype, node, i) for i, g in enumerate(grads)]


def _modified(t, version: int, i: int) -> None:
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{G._type_name(t._dtype)} [{', '.join(map(str, t._data.shape))}]] is at version {t._version}; "
        f"expected version {version} instead. (ember: input {i} of a compiled function, changed after the call "
        "and before backward.)")


def _edge(t):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (t._grad_accumulator(), 0)


def run(p, tensors: list):
    """One call of program ``p`` on the input tensors (already checked by its guard)."""
    arrays = [t._data for t in tensors]
    for g in p.rngs:
        arrays.append(g.gen._rng)
    token = _set_np(_QUIET)  # NOTE [NumPy error state]
    try:
        outs, saved = p.forward(*arrays, tensors)
    finally:
        _restore_numpy(token)
    node = None
    if p.n_grad_out and _mode.grad_enabled:
        node = _new(CompiledFunctionBackward)
        node._seq = G._next_seq()
        node._hooks = None
        node._meta_out = p.meta_out
        node._saved = saved
        node._prog = p
        node._next = tuple(_edge(tensors[v.index]) for v in p.grad_inputs)
        node._versions = tuple((tensors[v.index], tensors[v.index]._version, v.index) for v in p.version_checks)
    results = []
    k = 0
    for o in p.outputs:
        kind = o.kind
        if kind == "value":
            arr = outs[k]
            k += 1
            if node is not None and o.nr >= 0:
                t = _wrap_out(arr, o.edt, node, o.nr)
            else:
                t = _wrap(arr, o.edt)
            if o.base >= 0:
                _link_view(t, tensors[o.base])
            if o.conj:  # NOTE [lazy conjugation]
                t._ext = dict(t._ext or (), conj=True)
            if o.version:
                t._version_counter().value = o.version
        elif kind == "input":
            t = tensors[o.index]
        elif kind == "same":
            t = results[o.index]
        else:
            t = o.obj
        results.append(t)
    for v, n in p.bumps:
        t = tensors[v.index]
        for _ in range(n):
            t._bump()
    if p.spec is None:
        return results[0]
    return tree_unflatten(results, p.spec)


_BY_NP = D._BY_NP
