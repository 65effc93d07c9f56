"""The benchmark workloads, each written once in torch style and run with ``lib`` = ``torch`` or ``ember``.

A workload is a ``Workload`` record: ``data(sizes)`` makes its fixed float32 inputs from NumPy seed 0,
``build(lib, arrays, sizes)`` turns them into leaf tensors and returns ``(step, grads)``: ``step()`` runs
one iteration (forward, backward and, for training workloads, the SGD update) and returns the loss;
``grads()`` returns the gradients of the last step as NumPy arrays, keyed by input name. The
hand-written NumPy floor (``floor.py``) builds the same ``(step, grads)`` pair from the same arrays.

This module imports only NumPy, so a runner can fix thread counts before anything loads a BLAS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Workload", "WORKLOADS", "CHAIN_OPS", "DIVISOR", "chain", "to_numpy"]

# W1 / G1: one cycle of elementwise ops; tanh keeps every cycle bounded, so no chain length overflows.
CHAIN_OPS = ("add", "mul", "tanh", "exp", "sub", "div")
DIVISOR = 3.0
LR = 0.01


@dataclass(frozen=True)
class Workload:
    """One benchmark: how to make its inputs and how to run one iteration in a given library."""

    name: str
    what: str
    unit: str                   # how the table reports a time: "us/op" or "ms/iter"
    data: Callable              # sizes -> {name: ndarray}
    build: Callable             # (lib, arrays, sizes) -> (step, grads)
    sizes: dict = field(default_factory=dict)   # the benchmark's sizes
    tiny: dict = field(default_factory=dict)    # sizes for the unit test

    def ops_per_iter(self, sizes: dict) -> int:
        """What one iteration's time is divided by for the reported unit."""
        return sizes.get("n_ops", 1) if self.unit == "us/op" else 1


def to_numpy(t) -> np.ndarray:
    """A tensor's values as an ndarray (torch or ember)."""
    return t.detach().numpy()


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


def _chain_build(lib, arrays: dict, sizes: dict):
    params = _leaves(lib, arrays)
    x, y = params["x"], params["y"]
    n_ops = sizes["n_ops"]

    def step():
        x.grad = None
        y.grad = None
        loss = chain(lib, x, y, n_ops).sum()
        loss.backward()
        return loss

    return step, _grads_of(params)


# ----------------------------------------------------------------------------- W5: matmul chain
def _matmul_data(sizes: dict) -> dict:
    r = _rng()
    n = sizes["n"]
    return {k: r.standard_normal((n, n), dtype=np.float32) / np.float32(np.sqrt(n)) for k in "abc"}


def _matmul_build(lib, arrays: dict, sizes: dict):
    params = _leaves(lib, arrays)
    a, b, c = params["a"], params["b"], params["c"]

    def step():
        a.grad = b.grad = c.grad = None
        loss = (a @ b @ c).sum()
        loss.backward()
        return loss

    return step, _grads_of(params)


# ----------------------------------------------------------------------------- W2: MLP train step
def _mlp_data(sizes: dict) -> dict:
    r = _rng()
    dims = sizes["dims"]
    out = {"x": r.random((sizes["batch"], dims[0]), dtype=np.float32)}
    labels = r.integers(0, dims[-1], sizes["batch"])
    out["onehot"] = np.eye(dims[-1], dtype=np.float32)[labels]
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
        bound = 1.0 / np.sqrt(fan_in)  # the default init's scale for nn.Linear
        out[f"W{i}"] = r.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32)
        out[f"b{i}"] = r.uniform(-bound, bound, fan_out).astype(np.float32)
    return out


def cross_entropy(lib, logits, onehot):
    """Mean cross-entropy of one-hot targets: log-sum-exp shifted by the (constant) row max."""
    shift = lib.from_numpy(to_numpy(logits).max(axis=1, keepdims=True))
    z = logits - shift
    lse = lib.log(lib.exp(z).sum(1, keepdim=True))
    return (lse - (z * onehot).sum(1, keepdim=True)).mean()


def _mlp_build(lib, arrays: dict, sizes: dict):
    x = lib.tensor(arrays["x"])
    onehot = lib.tensor(arrays["onehot"])
    params = _leaves(lib, {k: v for k, v in arrays.items() if k[0] in "Wb"})
    layers = [(params[f"W{i}"], params[f"b{i}"]) for i in range(len(sizes["dims"]) - 1)]
    no_grad = lib.no_grad

    def step():
        for p in params.values():
            p.grad = None
        h = x
        for i, (w, b) in enumerate(layers):
            h = h @ w + b
            if i < len(layers) - 1:
                h = lib.relu(h)
        loss = cross_entropy(lib, h, onehot)
        loss.backward()
        with no_grad():
            for p in params.values():
                p -= LR * p.grad
        return loss

    return step, _grads_of(params)


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("W1", "two (16,) leaves, chain of 64 elementwise ops, sum, backward", "us/op",
             _chain_data, _chain_build, {"numel": 16, "n_ops": 64}, {"numel": 4, "n_ops": 13}),
    Workload("W2", "MLP 784-512-256-10 ReLU, batch 128, cross-entropy, SGD step", "ms/iter",
             _mlp_data, _mlp_build, {"dims": (784, 512, 256, 10), "batch": 128},
             {"dims": (12, 8, 6, 5), "batch": 7}),
    Workload("W5", "(1024x1024) @ (1024x1024) @ (1024x1024), sum, backward", "ms/iter",
             _matmul_data, _matmul_build, {"n": 1024}, {"n": 9}),
    Workload("G1", "chain of N elementwise ops on a (1,) tensor, backward", "ms/iter",
             _chain_data, _chain_build, {"numel": 1, "n_ops": 100_000}, {"numel": 1, "n_ops": 60}),
)}
