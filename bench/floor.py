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


# W3: convolution as im2col + one matmul; pooling on a strided view of 2x2 windows.
def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray):
    """3x3 convolution, padding 1, stride 1: output (N, O, H, W) and the columns its backward needs."""
    n, c, hh, ww = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))   # (N, C, H, W, 3, 3)
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * hh * ww, c * 9)       # one copy
    y = cols @ w.reshape(len(w), -1).T + b                                      # (N*H*W, O)
    return y.reshape(n, hh, ww, -1).transpose(0, 3, 1, 2), cols


def _conv_backward(g: np.ndarray, cols: np.ndarray, w: np.ndarray, need_input: bool):
    n, o, hh, ww = g.shape
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, o)
    gw, gb = (g2.T @ cols).reshape(w.shape), g2.sum(axis=0)
    if not need_input:
        return gw, gb, None
    c = w.shape[1]
    gcols = (g2 @ w.reshape(o, -1)).reshape(n, hh, ww, c, 3, 3)
    gxp = np.zeros((n, c, hh + 2, ww + 2), dtype=g.dtype)
    for i in range(3):   # col2im: each kernel offset adds its shifted slab back
        for j in range(3):
            gxp[:, :, i:i + hh, j:j + ww] += gcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return gw, gb, gxp[:, :, 1:-1, 1:-1]


def _relu_pool(y: np.ndarray):
    """ReLU then 2x2 max pooling; returns the output and the mask routing gradients back."""
    n, c, hh, ww = y.shape
    r = np.maximum(y, 0).reshape(n, c, hh // 2, 2, ww // 2, 2)
    out = r.max(axis=(3, 5))
    # Ties inside a window are zeros left by the ReLU, whose gradient the ReLU mask cancels anyway.
    mask = (r == out[:, :, :, None, :, None]) & (r > 0)
    return out, mask


def _relu_pool_backward(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n, c, h2, _, w2, _ = mask.shape
    return (mask * g[:, :, :, None, :, None]).reshape(n, c, 2 * h2, 2 * w2)


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
