"""0-d results hold 0-d arrays (NOTE [0-d results are arrays] in ember/_tensor.py), so what follows them works as in
torch: the cases third-party code met (iteration, unbind, unary ops and division on 0-d tensors, an ODE solver's
step-size control calling isfinite on such a value)."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, check, ember, torch

X = np.array([1.5, -2.0, 3.0], np.float32)
M = np.arange(6, dtype=np.float64).reshape(2, 3) - 2.5

# Each case: a 0-d value the way code gets one, then the op that used to take the NumPy-scalar path on it.
CASES = {
    "iteration": lambda lib, x: [lib.isfinite(v) for v in x],
    "unbind": lambda lib, x: [v.exp() for v in x.unbind()],
    "index": lambda lib, x: lib.isfinite(x[1] / 2),
    "index-2d": lambda lib, x: lib.isnan(x.reshape(3, 1)[2, 0].sqrt()),
    "neg": lambda lib, x: lib.isfinite(-x.sum()),
    "div": lambda lib, x: lib.isinf(x.max() / 0.5),
    "rdiv": lambda lib, x: lib.isfinite(1.0 / x.mean()),
    "unary": lambda lib, x: [f(x[0]) for f in (lib.exp, lib.abs, lib.sign, lib.round, lib.sqrt, lib.tanh)],
    "clamp": lambda lib, x: lib.isfinite(x[0].clamp(0, 1)),
    "reductions": lambda lib, x: [lib.isfinite(r) for r in (x.sum(), x.std(), x.prod(), x.norm(), x.amax())],
    "where": lambda lib, x: lib.where(x[0] > 0, x[0], x[1]) * 2,
    "pow": lambda lib, x: lib.isfinite(x[0] ** 0.2),
    "stack-of-0d": lambda lib, x: lib.stack([v * 2 for v in x]),
    "comparison": lambda lib, x: (x[0] < x[1]) | lib.isfinite(x[2]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_dim_results_behave_as_in_torch(name):
    check(lambda lib, x: CASES[name](lib, x), X, grad=False)


@pytest.mark.parametrize("name", ["iteration", "unbind", "unary", "reductions", "where", "stack-of-0d"])
def test_zero_dim_results_with_grad(name):
    def fn(lib, x):
        out = CASES[name](lib, x)
        return [o for o in (out if isinstance(out, list) else [out]) if o.is_floating_point()]
    check(fn, X.astype(np.float64), grad=True)


def _optimal_step(lib, last_step, error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5):
    """A Runge-Kutta solver's step-size update, as ODE libraries write it (0-d tensors throughout)."""
    if error_ratio == 0:
        return last_step * ifactor
    if error_ratio < 1:
        dfactor = lib.ones((), dtype=last_step.dtype)
    error_ratio = error_ratio.type_as(last_step)
    exponent = lib.tensor(order, dtype=last_step.dtype).reciprocal()
    return last_step * lib.min(lib.tensor(ifactor), lib.max(safety / error_ratio ** exponent, lib.as_tensor(dfactor)))


def test_step_size_control():
    for lib in (ember, torch):
        t = lib.linspace(0.0, 1.0, 5, dtype=lib.float64)
        dt = t[1] - t[0]
        steps = []
        for err in (lib.tensor(0.3), lib.tensor(4.0), lib.tensor(0.0), (dt * 0 + 1e-3).sum()):
            dt = _optimal_step(lib, dt, err)
            assert bool(lib.isfinite(dt))
            steps.append(dt)
        if lib is ember:
            ember_steps = steps
    for e, t in zip(ember_steps, steps):
        assert_close(e, t)


def test_accumulated_grad_of_a_0d_parameter_into_a_view():
    """The engine adds into an existing .grad that is a view out of place: still an array for 0-d."""
    for lib in (ember, torch):
        p = lib.tensor(2.0, requires_grad=True)
        p.grad = lib.ones(3)[1]
        (p * 3).backward()
        if lib is ember:
            e = p.grad
        else:
            assert_close(e, p.grad)


def test_in_place_on_0d_keeps_an_array():
    check(lambda lib, m: [m[0, 1].clone().mul_(2).exp_(), m.sum().clone().div_(3).neg_()], M, grad=False)
