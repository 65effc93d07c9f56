"""The erf family's vectorised kernels (NOTE [erf kernels] in ember/ops/_erf.py) against mpmath: erf, erfc, erfinv and
exact GELU in float32 and float64, special values, and the fitted coefficients (refitted here)."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import ember
from ember.ops import _erf

import erf_fit

mp.mp.dps = 30
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def _ref(f, xs) -> np.ndarray:
    return np.array([float(f(mp.mpf(float(v)))) for v in xs])


def _ulps(got, ref, dtype) -> float:
    """Largest error in units of the dtype's epsilon relative to |ref| (subnormal results: absolute, in the smallest
    normal number's units)."""
    tiny = np.finfo(dtype).tiny
    err = np.abs(got.astype(np.float64) - ref) / np.maximum(np.abs(ref), tiny)
    return float(np.max(err) / EPS[dtype])


def test_coefficients_are_the_fits():
    for name, co in erf_fit.fitted().items():
        np.testing.assert_allclose(getattr(_erf, name), co, rtol=1e-13, atol=0, err_msg=name)


def _grid(lo, hi, n=4001):
    return np.concatenate([np.linspace(lo, hi, n), -np.geomspace(1e-30, 1, 60), np.geomspace(1e-30, 1, 60)])


@pytest.mark.parametrize("dtype,ulps", [(np.float32, 4), (np.float64, 6)])
def test_erf_accuracy(dtype, ulps):
    xs = _grid(-6.5, 6.5).astype(dtype)
    assert _ulps(ember.erf(ember.tensor(xs)).numpy(), _ref(mp.erf, xs), dtype) <= ulps


@pytest.mark.parametrize("dtype,top,ulps", [(np.float32, 10.0, 6), (np.float64, 26.5, 8)])
def test_erfc_accuracy_out_to_the_tail(dtype, top, ulps):
    xs = _grid(-6.0, top).astype(dtype)
    assert _ulps(ember.erfc(ember.tensor(xs)).numpy(), _ref(mp.erfc, xs), dtype) <= ulps


@pytest.mark.parametrize("dtype,ulps", [(np.float32, 2), (np.float64, 8)])
def test_erfinv_accuracy(dtype, ulps):
    ys = np.concatenate([np.linspace(-0.9999, 0.9999, 2001), 1 - np.geomspace(1e-7 if dtype == np.float32 else 1e-15,
                                                                               1e-2, 40), np.geomspace(1e-30, 1e-2, 30)])
    ys = ys.astype(dtype)
    assert _ulps(ember.erfinv(ember.tensor(ys)).numpy(), _ref(mp.erfinv, ys), dtype) <= ulps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exact_gelu_accuracy(dtype):
    """x * Phi(x): relative accuracy for x > -1; to a few eps * |x| below, where Phi's relative accuracy goes (torch's
    x * (1 + erf(x / sqrt 2)) / 2 cancels there too)."""
    xs = _grid(-9.0, 9.0).astype(dtype)
    ref = _ref(lambda x: x * mp.ncdf(x), xs)
    got = ember.nn.functional.gelu(ember.tensor(xs)).numpy().astype(np.float64)
    body = xs > -1
    assert _ulps(got[body], ref[body], dtype) <= 8
    assert np.all(np.abs(got[~body] - ref[~body]) <= 4 * EPS[dtype] * np.abs(xs[~body]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_special_values(dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -5e-324, 30.0, -30.0], np.float64).astype(dtype)
    t = ember.tensor(x)
    erf, erfc = ember.erf(t).numpy(), ember.erfc(t).numpy()
    assert erf.dtype == erfc.dtype == dtype
    np.testing.assert_array_equal(erf[:5], np.array([0.0, -0.0, 1.0, -1.0, np.nan], dtype))
    assert np.signbit(erf[1]) and not np.signbit(erf[0])
    np.testing.assert_array_equal(erfc[:5], np.array([1.0, 1.0, 0.0, 2.0, np.nan], dtype))
    np.testing.assert_array_equal(erf[7:], [1.0, -1.0])
    np.testing.assert_array_equal(erfc[7:], [0.0, 2.0])
    inv = ember.erfinv(ember.tensor(np.array([0.0, -0.0, 1.0, -1.0, 1.5, np.nan], dtype))).numpy()
    np.testing.assert_array_equal(inv, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.nan], dtype))
    assert ember.erf(ember.tensor(np.array(0.5, dtype))).shape == ()
