"""Special functions (ops/_special.py: NumPy-only kernels) against torch over wide ranges, and their errors."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, ember, same_error, torch


def _points() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.uniform(-60, 60, 3000), rng.uniform(-4, 4, 3000), rng.uniform(0, 1e-3, 50),
                           10 ** rng.uniform(-12, 300, 300), -(10 ** rng.uniform(-6, 6, 300)) - 0.37,
                           np.arange(-10, 11) + 0.5, np.arange(-5, 8.0), [0.0, -0.0, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0", "sinc"])
def test_unary_special_wide_range_float64(name: str) -> None:
    x = _points()
    if name == "i0":
        x = x[~np.isinf(x)]  # torch: i0(+-inf) is nan; ember follows, compared below
    assert_close(getattr(ember, name)(ember.tensor(x)), getattr(torch, name)(torch.tensor(x)), 1e-12, 1e-13)


def test_i0_i1_at_infinity_and_overflow() -> None:
    x = np.array([np.inf, -np.inf, 700.0, 720.0, -720.0])
    assert_close(ember.i0(ember.tensor(x)), torch.i0(torch.tensor(x)), 1e-12, 0)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_polygamma_wide_range_float64(n: int) -> None:
    x = _points()
    x = x[(np.abs(x) < 1e3) & ~((x <= 0) & (x == np.floor(x)))]  # torch's values at poles are rounding artefacts
    # torch's trigamma keeps three terms of its asymptotic series: it is good to ~1e-9 only (ember's: ~1e-13, see
    # test_against_arbitrary_precision)
    assert_close(ember.polygamma(n, ember.tensor(x)), torch.polygamma(n, torch.tensor(x)), 2e-9 if n == 1 else 1e-10,
             1e-13)


def test_against_arbitrary_precision() -> None:
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 80
    x = np.random.default_rng(2).uniform(-20, 20, 200)
    checks = {"lgamma": (lambda v: mpmath.log(abs(mpmath.gamma(v))), ember.lgamma),
              "digamma": (mpmath.digamma, ember.digamma), "i0": (lambda v: mpmath.besseli(0, v), ember.i0)}
    for n in (1, 2, 4):
        checks[f"polygamma {n}"] = ((lambda n: lambda v: mpmath.polygamma(n, v))(n),
                                    (lambda n: lambda t: ember.polygamma(n, t))(n))
    for name, (ref, fn) in checks.items():
        want = np.array([float(ref(mpmath.mpf(float(v)))) for v in x])
        got = fn(ember.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0", "sinc"])
def test_float32_and_float16(name: str) -> None:
    x = np.random.default_rng(1).uniform(-6, 6, 500)
    for dt, tol in ((np.float32, 2e-6), (np.float16, 2e-3)):
        e = getattr(ember, name)(ember.tensor(x.astype(dt)))
        t = getattr(torch, name)(torch.tensor(x.astype(dt)))
        assert str(e.dtype) == str(t.dtype)
        ok = np.isfinite(t.float().numpy()) & (np.abs(t.float().numpy()) < 1e3)
        np.testing.assert_allclose(e.numpy()[ok].astype(np.float64), t.numpy()[ok].astype(np.float64), rtol=tol,
                                   atol=tol)


def test_errors_match_torch() -> None:
    same_error(lambda lib: lib.polygamma(-1, lib.ones(2)))
    same_error(lambda lib: lib.heaviside(lib.ones(2), lib.ones(2, dtype=lib.float64)))
    same_error(lambda lib: lib.gcd(lib.ones(2), lib.ones(2)))
    same_error(lambda lib: lib.lcm(lib.tensor([True]), lib.tensor([True])))
    same_error(lambda lib: lib.frexp(lib.tensor([1, 2])))
    same_error(lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([1, 2])))
    same_error(lambda lib: lib.mvlgamma(lib.ones(2), 0))
    same_error(lambda lib: lib.heaviside(lib.ones(2, requires_grad=True), lib.ones(2)).sum().backward())
    same_error(lambda lib: lib.ones(2).float_power_(2))


def test_special_functions_are_silent() -> None:
    import warnings

    x = ember.tensor([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-310, 1e308], dtype=ember.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (ember.lgamma, ember.digamma, ember.i0, ember.sinc, lambda t: ember.polygamma(2, t)):
            f(x)


def test_incomplete_gamma() -> None:
    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(0, 20, 2000), 10 ** rng.uniform(-3, 4, 500), [0, 0, 1, 2.5, -1, 1, np.inf, 3]])
    x = np.concatenate([rng.uniform(0, 30, 2000), 10 ** rng.uniform(-3, 4, 500), [0, 1, 0, 30, 1, -1, 1, np.inf]])
    for name in ("igamma", "igammac"):
        # torch's own values are good to ~3e-10 here (ember's to ~1e-15 against mpmath below)
        assert_close(getattr(ember, name)(ember.tensor(a), ember.tensor(x)),
                 getattr(torch, name)(torch.tensor(a), torch.tensor(x)), 1e-8, 1e-9)
    mpmath = pytest.importorskip("mpmath")
    for k in range(0, 2500, 97):
        want = float(mpmath.gammainc(a[k], 0, x[k], regularized=True))
        assert abs(ember.igamma(ember.tensor(a[k]), ember.tensor(x[k])).item() - want) < 1e-13
    same_error(lambda lib: lib.igamma(lib.tensor([2]), lib.tensor([1])))
    same_error(lambda lib: lib.igamma(lib.tensor([2.0], requires_grad=True), lib.tensor([1.0])).sum().backward())


# torch.special functions ember.special does not provide yet (shrinks as ops are added; never grows)
SPECIAL_MISSING: set = set()


def test_special_namespace_covers_torch_special() -> None:
    names = {n for n in dir(torch.special) if not n.startswith("_") and n != "Tensor"
             and callable(getattr(torch.special, n))}
    have = {n for n in names if hasattr(ember.special, n)}
    assert names - have == SPECIAL_MISSING
    assert set(ember.special.__all__) == have


def test_special_errors_match_torch() -> None:
    same_error(lambda lib: lib.special.round(lib.tensor([1, 2])))
    same_error(lambda lib: lib.special.polygamma(-1, lib.ones(2)))
    same_error(lambda lib: lib.special.multigammaln(lib.ones(2), 0))
    same_error(lambda lib: lib.special.gammainc(lib.ones(2), lib.ones(3)))
    for name in ("log_ndtr", "ndtri", "erfcx"):
        same_error(lambda lib: getattr(lib.special, name)(lib.ones(2, dtype=lib.float16)))
    same_error(lambda lib: lib.special.xlog1py(1.0, 2.0))
    same_error(lambda lib: lib.special.i1e(lib.ones(2, dtype=lib.float16, requires_grad=True)).sum().backward())


def _wide() -> np.ndarray:
    rng = np.random.default_rng(3)
    return np.concatenate([rng.uniform(-40, 40, 2000), rng.uniform(-3, 3, 2000), -(10 ** rng.uniform(0, 10, 100)),
                           10 ** rng.uniform(-10, 10, 100), [-38.5, -20.0, 0.0, -0.0, np.inf, -np.inf, np.nan]])


def _probabilities() -> np.ndarray:
    rng = np.random.default_rng(4)
    return np.concatenate([10 ** rng.uniform(-300, 0, 1000), rng.uniform(0, 1, 1000), 1 - 10 ** rng.uniform(-16, -1, 300),
                           [0.0, 1.0, 0.5, -0.1, 1.1, np.nan]])


# atol: torch's ndtr is (1 + erf(x / sqrt 2)) / 2, which is 0 below x ~ -8.3 where ember's (erfc-based) keeps the tail
@pytest.mark.parametrize("name,points,rtol,atol", [
    ("ndtr", _wide, 1e-14, 1e-16), ("log_ndtr", _wide, 1e-13, 0), ("erfcx", _wide, 1e-12, 0),
    ("entr", _wide, 1e-14, 0), ("i0e", _wide, 1e-13, 0), ("i1e", _wide, 1e-13, 0), ("ndtri", _probabilities, 1e-13, 1e-15)])
def test_special_ops_wide_range_float64(name: str, points, rtol: float, atol: float) -> None:
    x = points()
    assert_close(getattr(ember.special, name)(ember.tensor(x)), getattr(torch.special, name)(torch.tensor(x)), rtol, atol)


@pytest.mark.parametrize("name", ["ndtr", "log_ndtr", "erfcx", "entr", "i0e", "i1e", "ndtri"])
def test_special_ops_float32_and_ints(name: str) -> None:
    x = np.random.default_rng(5).uniform(0.01, 0.99, 400) if name == "ndtri" else \
        np.random.default_rng(5).uniform(-12, 12, 400)
    e, t = getattr(ember.special, name)(ember.tensor(x, dtype=ember.float32)), \
        getattr(torch.special, name)(torch.tensor(x, dtype=torch.float32))
    assert str(e.dtype) == str(t.dtype)
    # torch computes float32 in float32 (ndtr via erf: absolute error ~1e-8 in the tails); ember in float64
    assert_close(e.double(), t.double(), 1e-5, 1e-7 if name == "ndtr" else 1e-30)
    if name != "ndtri":
        k = np.arange(-3, 4)
        e, t = getattr(ember.special, name)(ember.tensor(k)), getattr(torch.special, name)(torch.tensor(k))
        assert str(e.dtype) == str(t.dtype)
        assert_close(e.double(), t.double(), 1e-5, 1e-7 if name == "ndtr" else 1e-30)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name: str) -> None:
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.uniform(-2, 2, 400), [-1.0, 1.0, 0.0, 0.5, 0.9, np.inf, -np.inf, 0.3]])
    if name.startswith("shifted"):
        x = x / 2 + 0.5  # their special points are 0 and 1
    # NaN x is not compared: torch's results there differ by family (0, NaN, or uninitialised memory for legendre)
    n = np.concatenate([rng.integers(-2, 25, x.size - 5), [np.nan, 3.0, -0.5, 300.0, 2.7]])
    f_e, f_t = getattr(ember.special, name), getattr(torch.special, name)
    assert_close(f_e(ember.tensor(x), ember.tensor(n)), f_t(torch.tensor(x), torch.tensor(n)), 1e-10, 1e-12)
    # float32 / integer operands, Python numbers on either side, broadcasting
    x32, k = x[:50].reshape(5, 10).astype(np.float32), rng.integers(0, 9, (10,))
    for args in ((x32, k), (x32, 4), (0.25, n[:30]), (rng.integers(-2, 3, (3, 1)), k.astype(np.float64))):
        e = f_e(*(ember.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
        t = f_t(*(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
        assert str(e.dtype) == str(t.dtype) and e.shape == t.shape
        assert_close(e.double(), t.double(), 1e-5, 1e-6)


BESSEL_NO_GRAD = ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", "modified_bessel_k0",
                  "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]


@pytest.mark.parametrize("name", BESSEL_NO_GRAD)
def test_bessel_without_gradient_match_torch(name: str) -> None:
    x = np.concatenate([_wide(), 10 ** np.random.default_rng(8).uniform(-12, 2.5, 2000), [1e-300, 2.0, 30.0]])
    assert_close(getattr(ember.special, name)(ember.tensor(x)), getattr(torch.special, name)(torch.tensor(x)), 1e-12,
             1e-300)
    k = np.arange(-3, 4)
    e, t = getattr(ember.special, name)(ember.tensor(k)), getattr(torch.special, name)(torch.tensor(k))
    assert str(e.dtype) == str(t.dtype)
    assert_close(e.double(), t.double(), 1e-6, 0)


@pytest.mark.parametrize("name", [*BESSEL_NO_GRAD, "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai",
                                  *POLYNOMIALS])
def test_results_do_not_require_grad_like_torch(name: str) -> None:
    for lib in (ember, torch):
        x = lib.tensor([0.3, 0.6], requires_grad=True)
        y = getattr(lib.special, name)(*((x,) if "bessel" in name or name == "airy_ai" else (x, 2)))
        assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_errors_match_torch(name: str) -> None:
    same_error(lambda lib: getattr(lib.special, name)(0.5, 2))


def test_zeta_matches_torch() -> None:
    rng = np.random.default_rng(7)
    q = rng.uniform(-20, 40, 3000) * np.where(rng.random(3000) < 0.5, 1, 0.01)
    x = np.where(q < 0, np.round(rng.uniform(1, 30, 3000)), rng.uniform(1, 30, 3000))  # q < 0 needs integer x
    x = np.concatenate([x, [1.0, 0.5, 2, 2, 3, 2.5, 4, 2, 50, 1.0001, 3, 2, np.nan, 2, np.inf, 1.5]])
    q = np.concatenate([q, [1.0, 1, 0, -1, -1.5, -1.5, -2.5, 1e9, 0.3, 1e-3, -7.25, np.inf, 1, np.nan, 2, 1e5]])
    assert_close(ember.special.zeta(ember.tensor(x), ember.tensor(q)), torch.special.zeta(torch.tensor(x), torch.tensor(q)),
             1e-12, 0)
    same_error(lambda lib: lib.special.zeta(2.0, 3.0))
    same_error(lambda lib: lib.special.zeta(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16)))
    same_error(lambda lib: lib.autograd.grad(lib.special.zeta(lib.tensor([2.0], requires_grad=True), lib.ones(1)).sum(),
                                             lib.ones(1)))


def test_zeta_has_no_derivative_for_x() -> None:
    def f(lib):
        x = lib.tensor([2.5, 3.0], requires_grad=True)
        lib.special.zeta(x, lib.tensor([1.0, 2.0])).sum().backward()
    same_error(f)


@pytest.mark.parametrize("kind", ["j", "y"])
@pytest.mark.parametrize("nu", [0, 1])
def test_bessel_j_y_match_torch_and_arbitrary_precision(kind: str, nu: int) -> None:
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-40, 40, 3000), 10 ** rng.uniform(-10, 10, 1000), [0.0, -0.0, 2.0, 25.0, 25.01]])
    name = f"bessel_{kind}{nu}"
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert np.array_equal(np.isnan(e), np.isnan(t)) and np.array_equal(np.isneginf(e), np.isneginf(t))
    f = np.isfinite(t)
    # torch's kernels are good to ~1e-6 absolute only (J near x = 5, Y1 between 5 and 25): mpmath decides below
    np.testing.assert_allclose(e[f], t[f], rtol=1e-12, atol=2e-6)
    for special in (np.inf, -np.inf, np.nan):
        assert_close(getattr(ember.special, name)(ember.tensor([special])),
                 getattr(torch.special, name)(torch.tensor([special])), 0, 0)
    mpmath = pytest.importorskip("mpmath")
    pts = x[::20]
    pts = pts[pts > 0] if kind == "y" else pts
    ref = mpmath.besselj if kind == "j" else mpmath.bessely
    want = np.array([float(ref(nu, v)) for v in pts])
    envelope = np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(pts) + 1e-300)))  # |J|, |Y| oscillate within this
    got = getattr(ember.special, name)(ember.tensor(pts)).numpy()
    np.testing.assert_array_less(np.abs(got - want), 1e-13 * envelope + 1e-12 * np.abs(want) + 1e-300)


def test_airy_ai_matches_torch_and_arbitrary_precision() -> None:
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.uniform(-60, 60, 2000), -(10 ** rng.uniform(-3, 4, 300)), 10 ** rng.uniform(-3, 2.5, 300),
                        [0.0, 2.0, -7.0, 105.0, 200.0]])
    e, t = ember.special.airy_ai(ember.tensor(x)).numpy(), torch.special.airy_ai(torch.tensor(x)).numpy()
    # scale: the oscillation envelope |x|^-1/4 for x < 0, the value itself for x > 0 (Ai decays there)
    scale = np.where(x < 0, np.minimum(1.0, np.abs(np.minimum(x, -1e-300)) ** -0.25), np.abs(t) + 1e-300)
    assert np.all(np.abs(e - t) <= 5e-6 * scale)  # torch is ~4e-6 off near x = -2
    for special in (np.inf, -np.inf, np.nan):
        assert_close(ember.special.airy_ai(ember.tensor([special])), torch.special.airy_ai(torch.tensor([special])), 0, 0)
    mpmath = pytest.importorskip("mpmath")
    pts = np.concatenate([x[::10], np.linspace(-10, 5, 61)])
    want = np.array([float(mpmath.airyai(v)) for v in pts])
    got = ember.special.airy_ai(ember.tensor(pts)).numpy()
    scale = np.where(pts < 0, np.minimum(1.0, np.abs(np.minimum(pts, -1e-300)) ** -0.25), np.abs(want) + 1e-300)
    # the phase 2/3 |x|^1.5 of the oscillation carries |x|^1.5 ulps for x << 0 (the problem's own conditioning)
    assert np.all(np.abs(got - want) <= (5e-12 + 1e-15 * np.abs(pts) ** 1.5) * scale)
