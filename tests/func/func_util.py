"""Run one transform expression on ember and torch from the same NumPy inputs and compare the results."""
from __future__ import annotations

import numpy as np

from oracle import assert_close, ember, torch

__all__ = ["both", "compare", "rand"]


def rand(*shape, seed=0, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def both(fn, *arrays):
    """``fn(lib, *tensors)`` for lib = ember and torch (tensors made from ``arrays``, no grad)."""
    out = []
    for lib in (ember, torch):
        out.append(fn(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]))
    return out


def _flat(x, out):
    if isinstance(x, dict):
        for k in sorted(x):
            _flat(x[k], out)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _flat(v, out)
    else:
        out.append(x)
    return out


def compare(fn, *arrays, rtol=None, atol=None):
    """Assert ``fn`` gives the same structure, shapes, dtypes and values in ember and torch."""
    e, t = both(fn, *arrays)
    fe, ft = _flat(e, []), _flat(t, [])
    assert len(fe) == len(ft), (e, t)
    for a, b in zip(fe, ft):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, ember.Tensor), type(a)
            assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
            assert a.requires_grad == b.requires_grad, (a.requires_grad, b.requires_grad)
            assert_close(a, b, rtol=rtol, atol=atol)
        else:
            assert a == b
    return e, t
