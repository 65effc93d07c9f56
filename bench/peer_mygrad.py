"""The workloads for ``mygrad``, in its own idiom: ``mygrad.Tensor`` parameters, ``loss.backward()``,
gradients as NumPy arrays in ``.grad``, SGD on ``.data``; conv and pooling from ``mygrad.nnet``.
``BUILDERS`` as in ``floor.py``.
"""
from __future__ import annotations

import mygrad as mg
import numpy as np
from mygrad.nnet import conv_nd, max_pool, relu, softmax_crossentropy

from .workloads import LR, chain

__all__ = ["BUILDERS"]

_DATA_KEYS = ("x", "labels", "xs")


def _params(arrays: dict, keys=None) -> dict:
    keys = [k for k in arrays if k not in _DATA_KEYS] if keys is None else keys
    return {k: mg.tensor(arrays[k]) for k in keys}   # mg.tensor copies


def _grads(params: dict):
    return lambda: {k: np.asarray(p.grad) for k, p in params.items()}


def _trainer(arrays: dict, loss_fn):
    params = _params(arrays)
    lr = np.float32(LR)

    def step():
        loss = loss_fn(params)
        loss.backward()
        for p in params.values():
            p.data -= lr * p.grad
        return loss

    return step, _grads(params)


def _once(params: dict, loss_fn):
    def step():
        loss = loss_fn(params)
        loss.backward()
        return loss

    return step, _grads(params)


def _chain(arrays: dict, sizes: dict):
    n_ops = sizes["n_ops"]
    return _once(_params(arrays, "xy"), lambda p: chain(mg, p["x"], p["y"], n_ops).sum())


def _matmul(arrays: dict, sizes: dict):
    return _once(_params(arrays, "abc"), lambda p: (p["a"] @ p["b"] @ p["c"]).sum())


def _mlp(arrays: dict, sizes: dict):
    x, labels = mg.tensor(arrays["x"], constant=True), arrays["labels"]
    n = len(sizes["dims"]) - 1

    def loss_fn(p):
        h = x
        for i in range(n):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < n - 1:
                h = relu(h)
        return softmax_crossentropy(h, labels)

    return _trainer(arrays, loss_fn)


def _cnn(arrays: dict, sizes: dict):
    x, labels = mg.tensor(arrays["x"], constant=True), arrays["labels"]

    def block(h, w, b):
        h = relu(conv_nd(h, w, stride=1, padding=1) + b.reshape(1, -1, 1, 1))
        return max_pool(h, (2, 2), 2)

    def loss_fn(p):
        h = block(block(x, p["conv1_w"], p["conv1_b"]), p["conv2_w"], p["conv2_b"])
        return softmax_crossentropy(h.reshape(len(h), -1) @ p["fc_w"].T + p["fc_b"], labels)

    return _trainer(arrays, loss_fn)


def _rnn(arrays: dict, sizes: dict):
    xs, labels = [mg.tensor(a, constant=True) for a in arrays["xs"]], arrays["labels"]
    h0 = mg.zeros((sizes["batch"], sizes["hidden"]), dtype=np.float32, constant=True)

    def loss_fn(p):
        w_ih, w_hh = p["w_ih"].T, p["w_hh"].T
        h = h0
        for x in xs:
            h = mg.tanh(x @ w_ih + p["b_ih"] + (h @ w_hh + p["b_hh"]))
        return softmax_crossentropy(h @ p["fc_w"].T + p["fc_b"], labels)

    return _trainer(arrays, loss_fn)


BUILDERS = {"W1": _chain, "G1": _chain, "W2": _mlp, "W3": _cnn, "W4": _rnn, "W5": _matmul}
