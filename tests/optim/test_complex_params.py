"""Optimizers on complex parameters against torch: torch updates the real and imaginary parts as two real
parameters (NOTE [complex parameters] in ember/optim/optimizer.py); the state stays complex."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import ember, torch

OPTIMIZERS = {
    "SGD momentum nesterov": lambda o, ps: o.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": lambda o, ps: o.Adam(ps, lr=0.1), "Adam amsgrad": lambda o, ps: o.Adam(ps, lr=0.1, amsgrad=True),
    "AdamW": lambda o, ps: o.AdamW(ps, lr=0.1), "Adamax": lambda o, ps: o.Adamax(ps, lr=0.1),
    "NAdam": lambda o, ps: o.NAdam(ps, lr=0.1), "RAdam": lambda o, ps: o.RAdam(ps, lr=0.1),
    "RMSprop centered": lambda o, ps: o.RMSprop(ps, lr=0.01, centered=True, momentum=0.5),
    "Adagrad": lambda o, ps: o.Adagrad(ps, lr=0.1), "Adadelta": lambda o, ps: o.Adadelta(ps, lr=1.0),
}


def _run(lib, make):
    rng = np.random.default_rng(0)
    w = lib.tensor((rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64),
                   requires_grad=True)
    b = lib.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)  # a real one in the same group
    x = lib.tensor((rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))).astype(np.complex64))
    opt = make(lib.optim, [w, b])
    for _ in range(3):
        opt.zero_grad()
        ((x @ w.mT + b).abs() ** 2).mean().backward()
        opt.step()
    state = opt.state[w]
    return [w.detach().numpy().copy(), b.detach().numpy().copy()], {k: str(v.dtype) for k, v in state.items()
                                                                     if hasattr(v, "dtype")}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_complex_parameters_follow_torch(name):
    (ep, es), (tp, ts) = _run(ember, OPTIMIZERS[name]), _run(torch, OPTIMIZERS[name])
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert es == ts
