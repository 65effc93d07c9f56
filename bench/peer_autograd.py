"""The workloads for HIPS ``autograd``, in its own idiom: a pure loss function of a parameter dict,
differentiated by ``value_and_grad``; SGD builds new parameter arrays. ``BUILDERS`` as in ``floor.py``.

W3's convolution is ``autograd.scipy.signal.convolve`` (NumPy stride tricks; importing it loads SciPy),
on flipped kernels since it convolves where torch cross-correlates.
"""
from __future__ import annotations

import autograd.numpy as anp
import numpy as np
from autograd import value_and_grad

from .workloads import LR, chain

__all__ = ["BUILDERS"]

_DATA_KEYS = ("x", "labels", "xs")


def _cross_entropy(logits, labels):
    z = logits - anp.max(logits, axis=1, keepdims=True)
    return anp.mean(anp.log(anp.sum(anp.exp(z), axis=1)) - z[np.arange(len(labels)), labels])


def _trainer(arrays: dict, loss_fn):
    """``(step, grads)``: one SGD step of ``loss_fn(params)`` over every non-data array."""
    state = {"params": {k: v.copy() for k, v in arrays.items() if k not in _DATA_KEYS}, "grads": {}}
    vg = value_and_grad(loss_fn)
    lr = np.float32(LR)

    def step():
        loss, grads = vg(state["params"])
        state["params"] = {k: p - lr * grads[k] for k, p in state["params"].items()}
        state["grads"] = grads
        return loss

    return step, lambda: dict(state["grads"])


def _chain(arrays: dict, sizes: dict):
    n_ops = sizes["n_ops"]
    xy = {"x": arrays["x"].copy(), "y": arrays["y"].copy()}
    vg = value_and_grad(lambda p: anp.sum(chain(anp, p["x"], p["y"], n_ops)))
    out = {}

    def step():
        loss, out["g"] = vg(xy)
        return loss

    return step, lambda: dict(out["g"])


def _matmul(arrays: dict, sizes: dict):
    abc = {k: arrays[k].copy() for k in "abc"}
    vg = value_and_grad(lambda p: anp.sum(anp.dot(anp.dot(p["a"], p["b"]), p["c"])))
    out = {}

    def step():
        loss, out["g"] = vg(abc)
        return loss

    return step, lambda: dict(out["g"])


def _mlp(arrays: dict, sizes: dict):
    x, labels = arrays["x"], arrays["labels"]
    n = len(sizes["dims"]) - 1

    def loss_fn(p):
        h = x
        for i in range(n):
            h = anp.dot(h, p[f"W{i}"]) + p[f"b{i}"]
            if i < n - 1:
                h = anp.maximum(h, 0.0)
        return _cross_entropy(h, labels)

    return _trainer(arrays, loss_fn)


def _cnn(arrays: dict, sizes: dict):
    from autograd.scipy.signal import convolve  # loads SciPy: only W3 pays for it (M1 runs W2)

    x, labels = arrays["x"], arrays["labels"]

    def conv_relu_pool(h, w, b):
        h = anp.pad(h, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="constant")
        h = convolve(h, w[:, :, ::-1, ::-1], axes=([2, 3], [2, 3]), dot_axes=([1], [1]), mode="valid")
        h = anp.maximum(h + b[None, :, None, None], 0.0)
        n, c, hh, ww = h.shape
        return anp.max(anp.max(anp.reshape(h, (n, c, hh // 2, 2, ww // 2, 2)), axis=5), axis=3)

    def loss_fn(p):
        h = conv_relu_pool(x, p["conv1_w"], p["conv1_b"])
        h = conv_relu_pool(h, p["conv2_w"], p["conv2_b"])
        h = anp.reshape(h, (len(x), -1))
        return _cross_entropy(anp.dot(h, p["fc_w"].T) + p["fc_b"], labels)

    return _trainer(arrays, loss_fn)


def _rnn(arrays: dict, sizes: dict):
    xs, labels = list(arrays["xs"]), arrays["labels"]
    h0 = np.zeros((sizes["batch"], sizes["hidden"]), dtype=np.float32)

    def loss_fn(p):
        w_ih, w_hh = p["w_ih"].T, p["w_hh"].T
        h = h0
        for x in xs:
            h = anp.tanh(anp.dot(x, w_ih) + p["b_ih"] + (anp.dot(h, w_hh) + p["b_hh"]))
        return _cross_entropy(anp.dot(h, p["fc_w"].T) + p["fc_b"], labels)

    return _trainer(arrays, loss_fn)


BUILDERS = {"W1": _chain, "G1": _chain, "W2": _mlp, "W3": _cnn, "W4": _rnn, "W5": _matmul}
