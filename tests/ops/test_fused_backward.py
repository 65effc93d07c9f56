"""Fused activation backward ops (TanhBackwardBackward0, SigmoidBackwardBackward0): torch's
values, names, saved values and derivatives to third order."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, check, ember, torch


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3)])
def test_gradient_of_gradient_matches_torch(name, dtype, shape) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, shape).astype(dtype)
    check(lambda lib, t: getattr(lib, name)(t), x, gradgrad=True)
    # the first derivative as a function: its own gradient is the fused op's backward
    check(lambda lib, t: lib.autograd.grad(getattr(lib, name)(t).sum(), t, create_graph=True)[0] * t, x,
          gradgrad=True)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_third_derivative_and_node_matches_torch(name) -> None:
    x0 = np.linspace(-2, 2, 7)
    out = {}
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        g1, = lib.autograd.grad(getattr(lib, name)(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        out[lib] = (g1, g2, g3, type(g1.grad_fn).__name__, g1.grad_fn.name(),
                    g1.grad_fn._saved_output, g1.grad_fn._saved_grad_output)
    e, t = out[ember], out[torch]
    for a, b in zip(e[:3], t[:3]):
        assert_close(a, b)
    assert e[3:5] == t[3:5]
    assert_close(e[5], t[5])
    assert_close(e[6], t[6])


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_fused_equals_composed_formula(name) -> None:
    """The one-op formula gives the same bits as the three-op one it replaces (for float16, the three ops
    computed in float32 and rounded once, as one op with a 16-bit input computes)."""
    rng = np.random.default_rng(3)
    for dtype in (np.float16, np.float32, np.float64):
        r = ember.tensor(rng.uniform(-1, 1, (4,)).astype(dtype))
        g = ember.tensor(rng.uniform(-1, 1, (4,)).astype(dtype))
        fused = getattr(ember.ops._fused_backward, f"{name}_backward")(g, r)
        g32, r32 = (g.float(), r.float()) if dtype == np.float16 else (g, r)
        composed = (g32 * (1 - r32 * r32) if name == "tanh" else g32 * (r32 * (1 - r32))).to(g.dtype)
        assert fused.dtype == composed.dtype
        np.testing.assert_array_equal(fused.numpy(), composed.numpy())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_relu_mask_equals_where_bit_for_bit(dtype, shape) -> None:
    """ThresholdBackward's bit-mask kernel is ``where(result > 0, grad, 0)``: inf/nan grads masked to +0.0,
    kept -0.0 and nan as they are, on contiguous and strided inputs."""
    from ember.ops.piecewise import _keep_where_positive

    rng = np.random.default_rng(4)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0], dtype)
    r = rng.choice(special, (2,) + shape).astype(dtype)
    g = rng.choice(special, (2,) + shape).astype(dtype)
    for gg, rr in ((g[0], r[0]), (g[1], r[1]), (g[0].T, r[1].T), (np.flip(g[0]), np.flip(r[1]))):
        got = _keep_where_positive(gg, rr)
        want = np.where(rr > 0, gg, dtype(0))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_relu_gradient_with_special_values_matches_torch() -> None:
    x = np.array([-1.0, 0.0, 2.0, 3.0, -0.0, 5.0], np.float32)
    for g in (np.array([np.inf, np.nan, -np.inf, np.nan, 1.0, -0.0], np.float32),):
        out = {}
        for lib in (ember, torch):
            t = lib.tensor(x, requires_grad=True)
            t.relu().backward(lib.tensor(g))
            out[lib] = t.grad
        assert_close(out[ember], out[torch])
        np.testing.assert_array_equal(np.signbit(out[ember].numpy()), np.signbit(out[torch].numpy()))
