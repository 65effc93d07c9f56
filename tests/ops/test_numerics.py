"""Numerics against torch: exp-based ops at large |x| and float16 computation."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check

EXTREMES = [-1e4, -1000.0, -100.0, -88.0, -20.0, -1e-8, 0.0, 1e-8, 20.0, 88.0, 89.0, 100.0, 1000.0, 1e4]

EXP_BASED = {
    "sigmoid": lambda lib, x: x.sigmoid(),
    "tanh": lambda lib, x: x.tanh(),
    "exp": lambda lib, x: x.exp(),
    "sigmoid*x": lambda lib, x: x * x.sigmoid(),
    "log(sigmoid)": lambda lib, x: x.sigmoid().log(),
    "relu": lambda lib, x: x.relu(),
    "clamp exp": lambda lib, x: x.clamp(-50, 50).exp(),
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(EXP_BASED))
def test_large_magnitudes_match_torch(name: str, dtype) -> None:
    """Same values (inf/nan where torch has them, finite where torch is) and grads at extreme inputs."""
    x = np.array(EXTREMES, dtype=np.float64).astype(dtype)
    eo, to = check(EXP_BASED[name], x, gradgrad=dtype != np.float16)
    e, t = eo[0].detach().numpy(), to[0].detach().numpy()
    assert np.array_equal(np.isfinite(e), np.isfinite(t))


def test_sigmoid_saturates_without_overflow() -> None:
    import warnings

    import ember

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warning either
        y = ember.tensor([-1e4, 1e4]).sigmoid()
    assert y.tolist() == [0.0, 1.0]


F16 = {
    "add": (lambda lib, a, b: a + b, 2),
    "mul": (lambda lib, a, b: a * b, 2),
    "div": (lambda lib, a, b: a / (b.abs() + 1), 2),
    "matmul": (lambda lib, a, b: a @ b.t(), 2),
    "sum": (lambda lib, a: a.sum(), 1),
    "sum dim": (lambda lib, a: a.sum(1), 1),
    "mean": (lambda lib, a: a.mean(), 1),
    "mean dim": (lambda lib, a: a.mean(0), 1),
    "exp": (lambda lib, a: a.exp(), 1),
    "log": (lambda lib, a: (a.abs() + 0.1).log(), 1),
    "tanh": (lambda lib, a: a.tanh(), 1),
    "sigmoid": (lambda lib, a: a.sigmoid(), 1),
    "pow": (lambda lib, a: a.abs() ** 1.5, 1),
    "scalar ops": (lambda lib, a: 3.0 * a - 1 / (a * a + 2), 1),
}


@pytest.mark.parametrize("name", sorted(F16))
def test_float16_computes_as_torch(name: str) -> None:
    """float16 in, float16 out, values as torch's (which accumulates reductions in float32)."""
    fn, n = F16[name]
    rng = np.random.default_rng(1)
    arrays = [(rng.standard_normal((64, 64)) * 4).astype(np.float16) for _ in range(n)]
    check(fn, *arrays, rtol=2e-3, atol=2e-3)
