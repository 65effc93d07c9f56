"""One LSTM layer direction over a whole sequence as one node (torch's MkldnnRnnLayerBackward0).

# NOTE [fused LSTM layer]
nn.LSTM spends its time in a dozen small ops per time step (the hidden product, the gate split, three sigmoids, two
tanh, the products and sums), each recorded, and in backward as many nodes plus one weight gradient per step that
the engine sums into the parameter. ``LstmLayer`` runs the recurrence on arrays: forward, one GEMM for the input
projection of every step, then per step the hidden GEMM and the gate arithmetic; backward, per step in reverse the
gate gradients and the hidden GEMM, then one GEMM each for the weight gradients and the input's gradient over all
steps. It saves the input, the weights and the initial state (as tensors) and the gate activations and cell states
(as arrays). Without a graph its backward is that raw pass (NOTE [raw backward]); under create_graph (or a level)
it recomputes the layer with ember ops (the composition nn.LSTM otherwise uses, ``step``) from the saved inputs and
differentiates that, so every order of derivative is exact. Gate order i, f, g, o as torch's weights.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .._tensor import _wrap
from ..autograd._interpose import fused_ok, replayable
from ..autograd.grad_mode import _mode
from ._op import Op
from .joining import stack

__all__ = ["LstmLayer"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)


def _sigmoid_(x):
    """1 / (1 + exp(-x)) in place (exp(-x) overflowing to inf gives exactly 0, as torch)."""
    np.negative(x, out=x)
    np.exp(x, out=x)
    x += 1.0
    return np.reciprocal(x, out=x)


class LstmLayer(Op):
    """d lstm layer: see NOTE [fused LSTM layer] in ember/ops/rnn.py"""

    __slots__ = ("acts", "c_in", "tanh_c", "h_in", "reverse", "step")
    _name = "MkldnnRnnLayerBackward0"
    nattrs = 2
    inputs = ("input", "w_ih", "w_hh", "b_ih", "b_hh", "h0", "c0")
    save = ("input", "w_ih", "w_hh", "b_ih", "b_hh", "h0", "c0")

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, step):
        steps, batch = x.shape[:2]
        n = w_hh.shape[1]
        acts = np.matmul(x.reshape(steps * batch, -1), w_ih.T).reshape(steps, batch, 4 * n)  # every step's x W_ih^T
        if b_ih is not None:
            acts += b_ih
        if b_hh is not None:
            acts += b_hh
        out = np.empty((steps, batch, n), x.dtype)
        c_in = np.empty_like(out)    # the cell state each step reads
        tanh_c = np.empty_like(out)  # tanh of the cell state each step writes
        h, c = h0, c0
        w_hh_t = _B.ascontiguousarray(w_hh.T)  # (a transposed view makes NumPy's small GEMMs ~1.4x slower)
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            a = acts[t]
            a += h @ w_hh_t
            _sigmoid_(a[:, :2 * n])                                  # i, f
            np.tanh(a[:, 2 * n:3 * n], out=a[:, 2 * n:3 * n])        # g
            _sigmoid_(a[:, 3 * n:])                                  # o
            c_in[t] = c
            c = a[:, n:2 * n] * c
            c += a[:, :n] * a[:, 2 * n:3 * n]
            np.tanh(c, out=tanh_c[t])
            h = np.multiply(tanh_c[t], a[:, 3 * n:], out=out[t])
        if ctx is not None:
            ctx.acts, ctx.c_in, ctx.tanh_c, ctx.reverse, ctx.step = acts, c_in, tanh_c, reverse, step
            ctx.h_in = np.concatenate([out[1:], h0[None]] if reverse else [h0[None], out[:-1]], 0)  # what t read
        return out, h.copy(), c if c is not c0 else c.copy()

    def backward(ctx, g_out, g_h, g_c):
        if not _mode.grad_enabled and fused_ok():
            need = tuple(e[0] is not None for e in ctx._next)
            return _raw_backward(ctx, g_out, g_h, g_c, ctx.saved_tensors, need)  # NOTE [raw backward]
        return _graph_backward(ctx, g_out, g_h, g_c)


@replayable  # on arrays: one step of compiled programs (NOTE [fused nodes under levels])
def _raw_backward(ctx, g_out, g_h, g_c, saved, need):
    x, w_ih, w_hh, b_ih, b_hh, h0, c0 = saved
    xa, wh = x._data, w_hh._data
    steps, batch = xa.shape[:2]
    n = wh.shape[1]
    dt = xa.dtype
    acts, c_in, tanh_c = ctx.acts, ctx.c_in, ctx.tanh_c
    dz = np.empty_like(acts)
    dh = np.zeros((batch, n), dt) if g_h is None else g_h._data.astype(dt)
    dc = np.zeros((batch, n), dt) if g_c is None else g_c._data.astype(dt)
    go = None if g_out is None else g_out._data
    for t in (range(steps) if ctx.reverse else range(steps - 1, -1, -1)):
        if go is not None:
            dh += go[t]
        a, d, tc = acts[t], dz[t], tanh_c[t]
        i, f, g, o = a[:, :n], a[:, n:2 * n], a[:, 2 * n:3 * n], a[:, 3 * n:]
        np.multiply(dh, tc, out=d[:, 3 * n:])             # d o
        dct = tc * tc
        np.subtract(1.0, dct, out=dct)
        dct *= o
        dct *= dh
        dc += dct                                         # d c (this step's)
        np.multiply(dc, g, out=d[:, :n])                  # d i
        np.multiply(dc, c_in[t], out=d[:, n:2 * n])       # d f
        np.multiply(dc, i, out=d[:, 2 * n:3 * n])         # d g
        dc *= f                                           # d c (the previous step's)
        sig = a[:, :2 * n]                                # through the activations: s (1 - s), 1 - tanh^2
        d[:, :2 * n] *= sig * (1.0 - sig)
        sig = a[:, 3 * n:]
        d[:, 3 * n:] *= sig * (1.0 - sig)
        d[:, 2 * n:3 * n] *= 1.0 - g * g
        dh = d @ wh
    dz2 = dz.reshape(steps * batch, 4 * n)
    grads = [None] * 7
    if need[0]:
        grads[0] = _wrap(np.matmul(dz2, w_ih._data).reshape(xa.shape), x._dtype)
    if need[1]:
        grads[1] = _wrap(np.matmul(dz2.T, xa.reshape(steps * batch, -1)), w_ih._dtype)
    if need[2]:
        grads[2] = _wrap(np.matmul(dz2.T, ctx.h_in.reshape(steps * batch, n)), w_hh._dtype)
    if need[3] or need[4]:
        db = dz2.sum(0)
        if need[3]:
            grads[3] = _wrap(db, b_ih._dtype)
        if need[4]:
            grads[4] = _wrap(db.copy() if need[3] else db, b_hh._dtype)
    if need[5]:
        grads[5] = _wrap(dh, h0._dtype)
    if need[6]:
        grads[6] = _wrap(dc, c0._dtype)
    return tuple(grads)


def _graph_backward(ctx, g_out, g_h, g_c):
    """The composition's gradient (create_graph, levels): recompute the layer with ember ops and differentiate it."""
    from ..autograd import grad as _grad  # noqa: PLC0415 - import cycle (autograd imports the ops)
    from ..autograd.grad_mode import enable_grad  # noqa: PLC0415

    saved = ctx.saved_tensors
    x, w_ih, w_hh, b_ih, b_hh, h0, c0 = saved
    with enable_grad():
        steps, batch = x.shape[:2]
        proj = x.reshape(steps * batch, x.shape[2]) @ w_ih.t()
        gates = (proj if b_ih is None else proj + b_ih).split(batch, 0)
        state = (h0, c0)
        outs = [None] * steps
        for t in (range(steps - 1, -1, -1) if ctx.reverse else range(steps)):
            state = ctx.step(gates[t], state, w_hh, b_hh)
            outs[t] = state[0]
        outputs = (stack(outs, 0), state[0], state[1])
    wanted = [(t, k) for k, (t, e) in enumerate(zip(saved, ctx._next)) if e[0] is not None]
    pairs = [(o, g) for o, g in zip(outputs, (g_out, g_h, g_c)) if g is not None]
    found = _grad([o for o, _ in pairs], [t for t, _ in wanted], [g for _, g in pairs],
                  create_graph=_mode.grad_enabled, allow_unused=True)
    grads = [None] * 7
    for (_, k), gk in zip(wanted, found):
        grads[k] = gk
    return tuple(grads)
