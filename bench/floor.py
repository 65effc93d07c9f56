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


def _mlp(arrays: dict, sizes: dict):
    x, onehot = arrays["x"], arrays["onehot"]
    n = len(sizes["dims"]) - 1
    ws = [arrays[f"W{i}"].copy() for i in range(n)]
    bs = [arrays[f"b{i}"].copy() for i in range(n)]
    out = {}
    lr = np.float32(LR)

    def step():
        acts = [x]
        h = x
        for i in range(n):
            h = h @ ws[i] + bs[i]
            if i < n - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = (np.log(s) - (z * onehot).sum(axis=1, keepdims=True)).mean()
        g = (e / s - onehot) / np.float32(len(x))
        for i in range(n - 1, -1, -1):
            out[f"W{i}"] = acts[i].T @ g
            out[f"b{i}"] = g.sum(axis=0)
            if i:
                g = (g @ ws[i].T) * (acts[i] > 0)
        for i in range(n):
            ws[i] -= lr * out[f"W{i}"]
            bs[i] -= lr * out[f"b{i}"]
        return loss

    return step, lambda: dict(out)


BUILDERS = {"W1": _chain, "G1": _chain, "W2": _mlp, "W5": _matmul}
