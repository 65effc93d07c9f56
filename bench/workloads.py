"""The benchmark workloads, each written once in torch style and run with ``lib`` = ``torch`` or ``ember``.

A workload is a ``Workload`` record: ``data(sizes)`` makes its fixed float32 inputs from NumPy seed 0,
``build(lib, arrays, sizes, compile=False)`` turns them into leaf tensors and returns ``(step, grads)``:
``step()`` runs one iteration (forward, backward and, for training workloads, the SGD update) and returns the
loss; ``grads()`` returns the gradients of the last step as NumPy arrays, keyed by input name. With
``compile=True`` the computation up to the loss goes through ``lib.compile`` (the model or function, as a user
would write it; backward and the update stay outside). The hand-written NumPy floor (``floor.py``) builds the
same ``(step, grads)`` pair from the same arrays.

This module imports only NumPy, so a runner can fix thread counts before anything loads a BLAS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .models import MODEL_BUILDERS, MODEL_DATA

__all__ = ["ALL_LIBRARIES", "Workload", "WORKLOADS", "CHAIN_OPS", "DIVISOR", "LR", "chain", "cnn_flat_features", "to_numpy"]

# W1 / G1: one cycle of elementwise ops; tanh keeps every cycle bounded, so no chain length overflows.
CHAIN_OPS = ("add", "mul", "tanh", "exp", "sub", "div")
DIVISOR = 3.0
LR = 0.01


ALL_LIBRARIES = ("ember", "torch", "floor", "autograd", "mygrad")


@dataclass(frozen=True)
class Workload:
    """One benchmark: how to make its inputs and how to run one iteration in a given library."""

    name: str
    what: str
    unit: str                   # how the table reports a time: "us/op" or "ms/iter"
    data: Callable              # sizes -> {name: ndarray}
    build: Callable             # (lib, arrays, sizes, compile=False) -> (step, grads)
    sizes: dict = field(default_factory=dict)   # the benchmark's sizes
    tiny: dict = field(default_factory=dict)    # sizes for the unit test
    libraries: tuple = ALL_LIBRARIES             # who implements it (the model workloads: ember and torch)

    def ops_per_iter(self, sizes: dict) -> int:
        """What one iteration's time is divided by for the reported unit."""
        return sizes.get("n_ops", 1) if self.unit == "us/op" else 1


def to_numpy(t) -> np.ndarray:
    """A tensor's values as an ndarray (torch or ember)."""
    return t.detach().cpu().numpy()


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _leaves(lib, arrays: dict) -> dict:
    return {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}


def _grads_of(params: dict) -> Callable[[], dict]:
    return lambda: {k: to_numpy(p.grad) for k, p in params.items()}


# ----------------------------------------------------------------------------- W1 / G1: op chain
def chain(lib, h, y, n_ops: int):
    """``n_ops`` elementwise ops on ``h``, cycling through CHAIN_OPS (y is the other operand)."""
    tanh, exp = lib.tanh, lib.exp
    for i in range(n_ops):
        k = i % 6
        if k == 0:
            h = h + y
        elif k == 1:
            h = h * y
        elif k == 2:
            h = tanh(h)
        elif k == 3:
            h = exp(h)
        elif k == 4:
            h = h - y
        else:
            h = h / DIVISOR
    return h


def _chain_data(sizes: dict) -> dict:
    r = _rng()
    n = sizes["numel"]
    return {"x": r.uniform(-1, 1, n).astype(np.float32), "y": r.uniform(-1, 1, n).astype(np.float32)}


def _chain_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    params = _leaves(lib, arrays)
    x, y = params["x"], params["y"]
    n_ops = sizes["n_ops"]
    run = lambda x, y: chain(lib, x, y, n_ops).sum()  # noqa: E731
    if compile:
        run = lib.compile(run)

    def step():
        x.grad = None
        y.grad = None
        loss = run(x, y)
        loss.backward()
        return loss

    return step, _grads_of(params)


# ----------------------------------------------------------------------------- W5: matmul chain
def _matmul_data(sizes: dict) -> dict:
    r = _rng()
    n = sizes["n"]
    return {k: r.standard_normal((n, n), dtype=np.float32) / np.float32(np.sqrt(n)) for k in "abc"}


def _matmul_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    params = _leaves(lib, arrays)
    a, b, c = params["a"], params["b"], params["c"]
    run = lambda a, b, c: (a @ b @ c).sum()  # noqa: E731
    if compile:
        run = lib.compile(run)

    def step():
        a.grad = b.grad = c.grad = None
        loss = run(a, b, c)
        loss.backward()
        return loss

    return step, _grads_of(params)


# ----------------------------------------------------------------------------- shared: init, labels, SGD
def _uniform(r: np.random.Generator, fan_in: int, shape) -> np.ndarray:
    """The default init's scale (nn.Linear, nn.Conv2d, nn.RNN): U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in)
    return r.uniform(-bound, bound, shape).astype(np.float32)


def _labels(r: np.random.Generator, n_classes: int, n: int) -> np.ndarray:
    return r.integers(0, n_classes, n).astype(np.int64)


def _trainer(lib, arrays: dict, forward: Callable, compile: bool = False):
    """``(step, grads)`` of a training workload: ``forward(params)`` gives the loss; SGD updates every param.
    ``compile``: ``forward`` goes through ``lib.compile``."""
    params = _leaves(lib, {k: v for k, v in arrays.items() if k not in _DATA_KEYS})
    no_grad = lib.no_grad
    if compile:
        forward = lib.compile(forward)

    def step():
        for p in params.values():
            p.grad = None
        loss = forward(params)
        loss.backward()
        with no_grad():
            for p in params.values():
                p -= LR * p.grad
        return loss

    return step, _grads_of(params)


_DATA_KEYS = frozenset({"x", "labels", "xs"})  # inputs of the training workloads that are not parameters


# ----------------------------------------------------------------------------- W2: MLP train step
def _mlp_data(sizes: dict) -> dict:
    r = _rng()
    dims = sizes["dims"]
    out = {"x": r.random((sizes["batch"], dims[0]), dtype=np.float32), "labels": _labels(r, dims[-1], sizes["batch"])}
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
        out[f"W{i}"] = _uniform(r, fan_in, (fan_in, fan_out))
        out[f"b{i}"] = _uniform(r, fan_in, fan_out)
    return out


def _mlp_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    F = lib.nn.functional
    x, labels = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])
    n_layers = len(sizes["dims"]) - 1

    def forward(p):
        h = x
        for i in range(n_layers):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < n_layers - 1:
                h = F.relu(h)
        return F.cross_entropy(h, labels)

    return _trainer(lib, arrays, forward, compile)


# ----------------------------------------------------------------------------- W3: CNN train step
def cnn_flat_features(sizes: dict) -> int:
    """Features after two 2x2 pools of the last conv's output."""
    return sizes["channels"][-1] * (sizes["hw"] // 4) ** 2


def _cnn_data(sizes: dict) -> dict:
    r = _rng()
    c0, c1, c2 = sizes["channels"]
    n, hw, k = sizes["batch"], sizes["hw"], sizes["classes"]
    feats = cnn_flat_features(sizes)
    return {"x": r.random((n, c0, hw, hw), dtype=np.float32), "labels": _labels(r, k, n),
            "conv1_w": _uniform(r, c0 * 9, (c1, c0, 3, 3)), "conv1_b": _uniform(r, c0 * 9, c1),
            "conv2_w": _uniform(r, c1 * 9, (c2, c1, 3, 3)), "conv2_b": _uniform(r, c1 * 9, c2),
            "fc_w": _uniform(r, feats, (k, feats)), "fc_b": _uniform(r, feats, k)}


def _cnn_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    F = lib.nn.functional
    x, labels = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])

    def forward(p):
        h = F.max_pool2d(F.relu(F.conv2d(x, p["conv1_w"], p["conv1_b"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2_w"], p["conv2_b"], padding=1)), 2)
        return F.cross_entropy(F.linear(h.flatten(1), p["fc_w"], p["fc_b"]), labels)

    return _trainer(lib, arrays, forward, compile)


# ----------------------------------------------------------------------------- W4: RNN train step
def _rnn_data(sizes: dict) -> dict:
    r = _rng()
    t, n, i, h, k = (sizes[s] for s in ("steps", "batch", "input", "hidden", "classes"))
    return {"xs": r.standard_normal((t, n, i), dtype=np.float32), "labels": _labels(r, k, n),
            "w_ih": _uniform(r, h, (h, i)), "b_ih": _uniform(r, h, h),
            "w_hh": _uniform(r, h, (h, h)), "b_hh": _uniform(r, h, h),
            "fc_w": _uniform(r, h, (k, h)), "fc_b": _uniform(r, h, k)}


def _rnn_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    """A vanilla tanh RNN unrolled by hand, each step what nn.RNNCell computes."""
    F = lib.nn.functional
    xs = [lib.tensor(a) for a in arrays["xs"]]  # the sequence, one (batch, input) tensor per time step
    labels = lib.tensor(arrays["labels"])
    h0 = lib.zeros(sizes["batch"], sizes["hidden"])

    def forward(p):
        w_ih, w_hh, b_ih, b_hh = p["w_ih"].t(), p["w_hh"].t(), p["b_ih"], p["b_hh"]
        h = h0
        for x in xs:
            h = lib.tanh(lib.addmm(b_ih, x, w_ih) + lib.addmm(b_hh, h, w_hh))
        return F.cross_entropy(lib.addmm(p["fc_b"], h, p["fc_w"].t()), labels)

    return _trainer(lib, arrays, forward, compile)


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("W1", "two (16,) leaves, chain of 64 elementwise ops, sum, backward", "us/op",
             _chain_data, _chain_build, {"numel": 16, "n_ops": 64}, {"numel": 4, "n_ops": 13}),
    Workload("W2", "MLP 784-512-256-10 ReLU, batch 128, cross-entropy, SGD step", "ms/iter",
             _mlp_data, _mlp_build, {"dims": (784, 512, 256, 10), "batch": 128},
             {"dims": (12, 8, 6, 5), "batch": 7}),
    Workload("W3", "CNN conv(1>8)-pool-conv(8>16)-pool-linear, batch 32 of 28x28, cross-entropy, SGD step",
             "ms/iter", _cnn_data, _cnn_build, {"batch": 32, "hw": 28, "channels": (1, 8, 16), "classes": 10},
             {"batch": 3, "hw": 8, "channels": (2, 3, 4), "classes": 5}),
    Workload("W4", "tanh RNN 32>128 unrolled 64 steps, batch 16, linear 128>10, cross-entropy, SGD step",
             "ms/iter", _rnn_data, _rnn_build, {"steps": 64, "batch": 16, "input": 32, "hidden": 128, "classes": 10},
             {"steps": 5, "batch": 3, "input": 4, "hidden": 6, "classes": 5}),
    Workload("W5", "(1024x1024) @ (1024x1024) @ (1024x1024), sum, backward", "ms/iter",
             _matmul_data, _matmul_build, {"n": 1024}, {"n": 9}),
    Workload("G1", "chain of N elementwise ops on a (1,) tensor, backward", "ms/iter",
             _chain_data, _chain_build, {"numel": 1, "n_ops": 100_000}, {"numel": 1, "n_ops": 60}),
    Workload("W6", "small GPT: 4 blocks of LayerNorm + 4-head causal attention + tanh-GELU MLP, n_embd 64, "
             "block 16, batch 32, vocab 27, cross-entropy, AdamW step", "ms/iter", MODEL_DATA["W6"],
             MODEL_BUILDERS["W6"], {"vocab": 27, "block": 16, "batch": 32, "n_embd": 64, "n_head": 4, "n_layer": 4},
             {"vocab": 7, "block": 5, "batch": 3, "n_embd": 8, "n_head": 2, "n_layer": 2}, ("ember", "torch")),
    Workload("W7", "LSTM LM: Embedding(1000, 128), nn.LSTM(128, 256, 2 layers), Linear(256, 1000), batch 32 x 35, "
             "cross-entropy, clip_grad_norm_(0.25), SGD step", "ms/iter", MODEL_DATA["W7"], MODEL_BUILDERS["W7"],
             {"vocab": 1000, "emb": 128, "hidden": 256, "layers": 2, "batch": 32, "seq": 35},
             {"vocab": 11, "emb": 6, "hidden": 5, "layers": 2, "batch": 3, "seq": 4}, ("ember", "torch")),
    Workload("W8", "residual CNN: conv 3>16 + BatchNorm2d + ReLU, 2 basic blocks, adaptive avg pool, linear 16>10, "
             "batch 32 of 3x32x32, cross-entropy, SGD momentum 0.9 wd 5e-4 step", "ms/iter", MODEL_DATA["W8"],
             MODEL_BUILDERS["W8"], {"batch": 32, "in_ch": 3, "hw": 32, "channels": 16, "classes": 10, "blocks": 2},
             {"batch": 4, "in_ch": 3, "hw": 6, "channels": 4, "classes": 5, "blocks": 2}, ("ember", "torch")),
)}
