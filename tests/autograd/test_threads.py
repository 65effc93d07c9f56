"""Backward from several threads at once: per-thread graphs, and a shared leaf that loses no update."""
from __future__ import annotations

import sys
import threading

import numpy as np

from oracle import assert_close, ember, torch


def _train_fn(lib, out, k):
    x = lib.ones(5, 5, requires_grad=True)
    y = (x + 3) * (x + 4) * 0.5
    y.sum().backward()
    out[k] = x.grad


def test_seed_ten_threads_train_fn():
    grads = {}
    for lib in (ember, torch):
        out = {}
        threads = [threading.Thread(target=_train_fn, args=(lib, out, k)) for k in range(10)]
        for p in threads:
            p.start()
        for p in threads:
            p.join()
        assert len(out) == 10
        grads[lib.__name__] = out
    for k in range(10):
        assert_close(grads["ember"][k], grads["torch"][k], what=f"thread {k}")


def test_shared_leaf_accumulates_every_update():
    w = ember.zeros(3, requires_grad=True)
    c = ember.tensor([1.0, 2.0, 3.0])
    errors = []

    def work():
        try:
            for _ in range(1000):
                (w * c + 1).sum().backward()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible to expose races
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    np.testing.assert_array_equal(w.grad.numpy(), 8000 * np.array([1.0, 2.0, 3.0], np.float32))


def test_concurrent_graphs_in_different_grad_modes():
    results = {}

    def work(k):
        x = ember.tensor([float(k), 1.0], requires_grad=True)
        for _ in range(200):
            if k % 2:
                with ember.no_grad():
                    y = x * 2
                assert not y.requires_grad
            else:
                y = (x * x).sum()
                assert y.requires_grad
                y.backward()
        results[k] = x.grad

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(6):
        if k % 2:
            assert results[k] is None
        else:
            x = torch.tensor([float(k), 1.0], requires_grad=True)
            for _ in range(200):
                (x * x).sum().backward()
            assert_close(results[k], x.grad, what=f"thread {k}")
