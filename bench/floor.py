"""The floor: each workload's forward and backward written by hand in NumPy.

No graph, no wrappers: the same NumPy calls any engine executing ops one by one must make, so its
time is what such an engine cannot beat. ``BUILDERS[name](arrays, sizes)`` returns ``(step, grads)``
with the same meaning as a workload's ``build`` (see ``workloads.py``).
"""
from __future__ import annotations

import numpy as np

from .workloads import DIVISOR, LR

__all__ = ["BUILDERS"]


def _chain(arrays: dict, sizes: dict):
    x, y = arrays["x"].copy(), arrays["y"].copy()
    n_ops = sizes["n_ops"]
    out = {}
    inv = np.float32(1.0 / DIVISOR)

    def step():
        # forward: keep what each op's derivative needs
        saved = [None] * n_ops
        h = x
        for i in range(n_ops):
            k = i % 6
            if k == 0:
                h = h + y
            elif k == 1:
                saved[i] = h
                h = h * y
            elif k == 2:
                h = np.tanh(h)
                saved[i] = h
            elif k == 3:
                h = np.exp(h)
                saved[i] = h
            elif k == 4:
                h = h - y
            else:
                h = h / DIVISOR
        loss = h.sum()
        # backward
        g = np.ones_like(h)
        gy = np.zeros_like(y)
        for i in range(n_ops - 1, -1, -1):
            k = i % 6
            if k == 0:
                gy += g
            elif k == 1:
                gy += g * saved[i]
                g = g * y
            elif k == 2:
                t = saved[i]
                g = g * (1 - t * t)
            elif k == 3:
                g = g * saved[i]
            elif k == 4:
                gy -= g
            else:
                g = g * inv
        out["x"], out["y"] = g, gy
        return loss

    return step, lambda: dict(out)


def _matmul(arrays: dict, sizes: dict):
    a, b, c = (arrays[k].copy() for k in "abc")
    out = {}

    def step():
        ab = a @ b
        y = ab @ c
        loss = y.sum()
        g = np.ones_like(y)
        gab = g @ c.T
        out["c"] = ab.T @ g
        out["a"] = gab @ b.T
        out["b"] = a.T @ gab
        return loss

    return step, lambda: dict(out)


def _cross_entropy(logits: np.ndarray, labels: np.ndarray):
    """Mean cross-entropy and its gradient with respect to the logits."""
    n = len(labels)
    rows = np.arange(n)
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    loss = (np.log(s)[:, 0] - z[rows, labels]).mean()
    g = e / s
    g[rows, labels] -= 1
    return loss, g / np.float32(n)


def _sgd(params: dict, grads: dict) -> None:
    lr = np.float32(LR)
    for k, p in params.items():
        p -= lr * grads[k]


def _params(arrays: dict) -> dict:
    return {k: v.copy() for k, v in arrays.items() if k not in ("x", "labels", "xs")}


def _mlp(arrays: dict, sizes: dict):
    x, labels = arrays["x"], arrays["labels"]
    n = len(sizes["dims"]) - 1
    p = _params(arrays)
    out = {}

    def step():
        acts = [x]
        h = x
        for i in range(n):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < n - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        loss, g = _cross_entropy(h, labels)
        for i in range(n - 1, -1, -1):
            out[f"W{i}"] = acts[i].T @ g
            out[f"b{i}"] = g.sum(axis=0)
            if i:
                g = (g @ p[f"W{i}"].T) * (acts[i] > 0)
        _sgd(p, out)
        return loss

    return step, lambda: dict(out)


# W3: convolution as im2col + one batched matmul, kept in (N, C, H, W) order so no result is transposed;
# pooling on a strided view of 2x2 windows.
def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray):
    """3x3 convolution, padding 1, stride 1: output (N, O, H, W) and the columns its backward needs."""
    n, c, hh, ww = x.shape
    xp = np.zeros((n, c, hh + 2, ww + 2), dtype=x.dtype)
    xp[:, :, 1:-1, 1:-1] = x
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))   # (N, C, H, W, 3, 3) view
    cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * 9, hh * ww)       # one copy
    y = np.matmul(w.reshape(len(w), -1), cols)                                # (N, O, H*W)
    y += b[:, None]
    return y.reshape(n, -1, hh, ww), cols


def _conv_backward(g: np.ndarray, cols: np.ndarray, w: np.ndarray, need_input: bool):
    n, o, hh, ww = g.shape
    g3 = g.reshape(n, o, hh * ww)
    gw = np.matmul(g3, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    gb = g3.sum(axis=(0, 2))
    if not need_input:
        return gw, gb, None
    c = w.shape[1]
    gcols = np.matmul(w.reshape(o, -1).T, g3).reshape(n, c, 3, 3, hh, ww)
    gxp = np.zeros((n, c, hh + 2, ww + 2), dtype=g.dtype)
    for i in range(3):   # col2im: each kernel offset adds its shifted slab back
        for j in range(3):
            gxp[:, :, i:i + hh, j:j + ww] += gcols[:, :, i, j]
    return gw, gb, gxp[:, :, 1:-1, 1:-1]


_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))   # a 2x2 window's cells, in the order ties are resolved


def _relu_pool(y: np.ndarray):
    """2x2 max pooling then ReLU (they commute); returns the output and what the backward needs."""
    quads = [y[:, :, i::2, j::2] for i, j in _OFFSETS]   # strided views, one per window cell
    out = np.maximum(np.maximum(quads[0], quads[1]), np.maximum(quads[2], quads[3]))
    np.maximum(out, 0, out=out)
    return out, (quads, out)


def _relu_pool_backward(g: np.ndarray, saved) -> np.ndarray:
    """Each window's gradient goes to its first maximal cell, and only where the ReLU let it through."""
    quads, out = saved
    n, c, h2, w2 = out.shape
    gy = np.zeros((n, c, 2 * h2, 2 * w2), dtype=g.dtype)
    g = np.where(out > 0, g, 0)
    free = np.ones(out.shape, dtype=bool)
    for (i, j), q in zip(_OFFSETS, quads):
        hit = (q == out) & free
        gy[:, :, i::2, j::2] = g * hit
        free &= ~hit
    return gy


def _cnn(arrays: dict, sizes: dict):
    x, labels = arrays["x"], arrays["labels"]
    p = _params(arrays)
    out = {}

    def step():
        y1, cols1 = _conv(x, p["conv1_w"], p["conv1_b"])
        h1, m1 = _relu_pool(y1)
        y2, cols2 = _conv(h1, p["conv2_w"], p["conv2_b"])
        h2, m2 = _relu_pool(y2)
        flat = h2.reshape(len(x), -1)
        loss, g = _cross_entropy(flat @ p["fc_w"].T + p["fc_b"], labels)
        out["fc_w"], out["fc_b"] = g.T @ flat, g.sum(axis=0)
        g = _relu_pool_backward((g @ p["fc_w"]).reshape(h2.shape), m2)
        out["conv2_w"], out["conv2_b"], g = _conv_backward(g, cols2, p["conv2_w"], True)
        g = _relu_pool_backward(g, m1)
        out["conv1_w"], out["conv1_b"], _ = _conv_backward(g, cols1, p["conv1_w"], False)
        _sgd(p, out)
        return loss

    return step, lambda: dict(out)


def _rnn(arrays: dict, sizes: dict):
    xs, labels = arrays["xs"], arrays["labels"]
    p = _params(arrays)
    h0 = np.zeros((sizes["batch"], sizes["hidden"]), dtype=np.float32)
    out = {}

    def step():
        w_ih, w_hh = p["w_ih"], p["w_hh"]
        hs = [h0]
        for x in xs:
            hs.append(np.tanh(x @ w_ih.T + p["b_ih"] + (hs[-1] @ w_hh.T + p["b_hh"])))
        h = hs[-1]
        loss, g = _cross_entropy(h @ p["fc_w"].T + p["fc_b"], labels)
        out["fc_w"], out["fc_b"] = g.T @ h, g.sum(axis=0)
        gh = g @ p["fc_w"]
        g_ih, g_hh, gb = np.zeros_like(w_ih), np.zeros_like(w_hh), np.zeros_like(p["b_ih"])
        for t in range(len(xs) - 1, -1, -1):   # backpropagation through time
            ga = gh * (1 - hs[t + 1] * hs[t + 1])
            g_ih += ga.T @ xs[t]
            g_hh += ga.T @ hs[t]
            gb += ga.sum(axis=0)
            gh = ga @ w_hh
        out["w_ih"], out["w_hh"], out["b_ih"], out["b_hh"] = g_ih, g_hh, gb, gb.copy()
        _sgd(p, out)
        return loss

    return step, lambda: dict(out)


BUILDERS = {"W1": _chain, "G1": _chain, "W2": _mlp, "W3": _cnn, "W4": _rnn, "W5": _matmul}
