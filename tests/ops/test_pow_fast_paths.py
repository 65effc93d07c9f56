"""pow with a Python-number exponent: every fast path (NOTE [scalar powers] in ember/ops/arithmetic.py) gives the
general power's values, torch's values, gradients and second gradients, on negative bases and special values."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, ember, torch

from ember.ops import arithmetic

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e4, -3e4])
# torch's cheaper kernels, the other integers, and non-integers
EXPONENTS = [2, 3, -2, 0.5, -0.5, -1, 1, 0, 2.0, 3.0, 4, 5, -3, -4, 7.0, 2.5, -1.5, 0.3, 1e-3, -7.25]


def _values(dtype):
    r = np.random.default_rng(0)
    x = np.concatenate([SPECIAL, r.standard_normal(500) * 3, r.uniform(-1, 1, 100)])
    return x.astype(dtype)


def _general(x, e):
    """The general power, computed in float64 and rounded once."""
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), np.float64(e)).astype(x.dtype)


def test_every_fast_exponent_is_tested():
    assert set(arithmetic._SCALAR_POW) <= {float(e) for e in EXPONENTS}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("e", EXPONENTS)
def test_values_equal_the_general_power_and_torch(e, dtype):
    x = _values(dtype)
    got = ember.pow(ember.tensor(x), e).numpy()
    ref = torch.pow(torch.tensor(x), e).numpy()
    assert got.dtype == ref.dtype == dtype
    general = _general(x, e)
    finite = np.isfinite(general) & np.isfinite(ref)
    # same nan/inf pattern as the general power, except where torch's own kernels define it otherwise
    # (sqrt and 1/sqrt of -0 and -inf: -0, nan; torch computes them that way too)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[np.isinf(ref)], ref[np.isinf(ref)])
    if e not in (0.5, -0.5):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(general))
    tol = {np.float16: 1e-3, np.float32: 5e-7, np.float64: 1e-15}[dtype]
    np.testing.assert_allclose(got[finite], general[finite], rtol=4 * tol, atol=0)
    np.testing.assert_allclose(got[finite], ref[finite], rtol=4 * tol, atol=0)
    if float(e) in (2.0, 3.0, -2.0, -1.0, 1.0, 0.0) and dtype != np.float16:
        # the same kernels as torch's: bit-equal (not sqrt: NumPy's is correctly rounded, torch's float32 one is
        # off by an ulp in ~1% of cases)
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("e", EXPONENTS)
def test_grads_and_second_grads_match_torch_on_negative_bases(e):
    r = np.random.default_rng(1)
    x = r.uniform(-2.0, 2.0, (5, 7))
    x = np.where(np.abs(x) < 0.1, 0.5, x)  # off 0, where negative exponents blow up
    check(lambda lib, t: lib.pow(t, e), x.astype(np.float64), gradgrad=True)
    check(lambda lib, t: t ** e, x.astype(np.float32), gradgrad=True, rtol=1e-4, atol=1e-5)


def test_fast_path_keeps_the_graph_formula():
    """create_graph: the second derivative of x**3 is 6x, through the fast kernels of the backward formula."""
    x = ember.tensor([-1.5, 0.0, 2.0], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.pow(x, 3.0).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    np.testing.assert_array_equal(gg.numpy(), 6 * x.detach().numpy())
    assert type(g.grad_fn).__name__ == "MulBackward0"


def test_integer_and_zero_dim_inputs_keep_the_general_path():
    for lib in (ember, torch):
        assert lib.pow(lib.tensor([2, 3]), 3).tolist() == [8, 27]
    assert ember.pow(ember.tensor(-2.0), 3.0).item() == -8.0
    assert ember.pow(ember.tensor(-2.0), 3.0).shape == ()
    assert np.isnan(ember.pow(ember.tensor(-2.0), 2.5).item())
