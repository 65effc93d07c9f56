"""Reductions and scans vs torch beyond the op table (tests/ops/op_db.py): dtypes, ties, NaN, zeros, empty
inputs, errors, random shapes."""
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import check, same_error, torch, ember

RNG = np.random.default_rng(1234)
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def dims_for(shape):
    """Valid dim arguments for a shape: None, ints (also negative), tuples."""
    n = len(shape)
    out = [None, 0, -1]
    if n >= 2:
        out += [1, (0, -1), (-2,)]
    if n >= 3:
        out += [(0, 2), (2, 0, 1)]
    return out


def _call(lib, name, x, dim, **kw):
    fn = getattr(lib, name)
    return fn(x, **kw) if dim is None else fn(x, dim, **kw)


# ----------------------------------------------------------------------------------------------- sum-likes


@pytest.mark.parametrize("zeros", [[(0,)], [(1,)], [(0,), (3,)], [(1,), (2,), (4,)]])
def test_prod_with_zeros_grads_match_torch(zeros):
    x = randn(5)
    for (i,) in zeros:
        x[i] = 0.0
    check(lambda lib, t: t.prod(), x, gradgrad=True)
    check(lambda lib, t: t.prod(0), x, gradgrad=True)
    m = randn(3, 4)
    m[0, 1] = m[2, 2] = m[2, 0] = m[1, 3] = 0
    for d in (0, 1, None):
        check(lambda lib, t: t.prod() if d is None else t.prod(d, keepdim=True), m, gradgrad=True)


def test_prod_and_sum_dtypes():
    i32 = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    for f in (lambda lib, t: t.prod(), lambda lib, t: t.prod(1), lambda lib, t: t.cumsum(0),
              lambda lib, t: t.cumprod(1), lambda lib, t: t.nansum(), lambda lib, t: t.prod(0, dtype=lib.float64),
              lambda lib, t: t.cumsum(1, dtype=lib.float32), lambda lib, t: (t > 2).sum(),
              lambda lib, t: (t > 2).cumsum(0), lambda lib, t: t.max(), lambda lib, t: t.amax(0),
              lambda lib, t: t.min(1), lambda lib, t: t.median(), lambda lib, t: t.logsumexp(1),
              lambda lib, t: (t > 2).prod(), lambda lib, t: t.to(lib.int8).sum(0)):
        check(f, i32, grad=False)
    check(lambda lib, t: t.prod(dtype=lib.float64), randn(3, 2, dtype=np.float32), gradgrad=True)
    check(lambda lib, t: t.cumprod(0, dtype=lib.float64), randn(3, 2, dtype=np.float32), gradgrad=True)


# ------------------------------------------------------------------------------------------- max / min family


def test_max_min_ties_follow_torch():
    x = np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0], [5, 5, 5, 5, 5]])
    for name in ("max", "min", "amax", "amin"):
        check(lambda lib, t: getattr(t, name)(), x, gradgrad=True)  # whole: split evenly among ties
        check(lambda lib, t: getattr(t, name)(1), x, gradgrad=True)  # max/min with dim: torch's index
        check(lambda lib, t: getattr(t, name)(0, True), x, gradgrad=True)
    check(lambda lib, t: t.amax((0, 1)), x, gradgrad=True)
    for name in ("argmax", "argmin"):
        check(lambda lib, t: getattr(t, name)(1), x, grad=False)
        check(lambda lib, t: getattr(t, name)(), x, grad=False)


def test_max_named_tuple_behaviour():
    x = randn(3, 4)
    e, t = ember.tensor(x), torch.tensor(x)
    for name in ("max", "min", "median"):
        re, rt = getattr(e, name)(1), getattr(t, name)(1)
        v, i = re
        assert type(re).__name__ == type(rt).__name__ and len(re) == 2
        assert re.values is re[0] and re.indices is i and v is re.values
        assert repr(re) == repr(rt)
        assert pickle.loads(pickle.dumps(re)).indices.tolist() == i.tolist()
    assert repr(e.sort()) == repr(t.sort())
    assert repr(ember.tensor(3.0).max(0)) == repr(torch.tensor(3.0).max(0))
    assert ember.return_types.max is type(e.max(0))


def test_nan_propagation():
    x = np.array([[1.0, np.nan, 2.0], [3.0, 0.5, 4.0]])
    for f in (lambda lib, t: t.max(), lambda lib, t: t.min(1), lambda lib, t: t.amax(1), lambda lib, t: t.argmax(1),
              lambda lib, t: t.max(1), lambda lib, t: t.median(), lambda lib, t: t.median(1),
              lambda lib, t: t.cummax(1), lambda lib, t: t.cummin(1), lambda lib, t: t.nansum(1),
              lambda lib, t: t.nanmean(), lambda lib, t: lib.nanmean(t, 0, keepdim=True), lambda lib, t: t.nansum()):
        check(f, x)
    check(lambda lib, t: t.cummax(0), np.array([3.0, np.nan, 2, np.nan, 5]))


def test_int_and_bool_max():
    a = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
    for f in (lambda lib, t: t.max(), lambda lib, t: t.max(0), lambda lib, t: t.amin(1), lambda lib, t: t.argmax(),
              lambda lib, t: (t > 0).max(), lambda lib, t: t.cummax(1), lambda lib, t: t.cummin(0)):
        check(f, a, grad=False)


# ---------------------------------------------------------------------------------------------- var / std
def test_var_std_corrections():
    shape = (3, 4)
    x = randn(*shape)
    for name in ("var", "std", "var_mean", "std_mean"):
        check(lambda lib, t: getattr(lib, name)(t), x, gradgrad=True)
        check(lambda lib, t: getattr(lib, name)(t, 0, unbiased=False), x, gradgrad=True)
        check(lambda lib, t: getattr(lib, name)(t, -1, correction=2, keepdim=True), x, gradgrad=True)
        check(lambda lib, t: getattr(lib, name)(t, False), x, gradgrad=True)
        check(lambda lib, t: getattr(lib, name)(t, dim=(0, -1) if len(shape) > 1 else 0, correction=0), x,
              gradgrad=True)
    check(lambda lib, t: t.std(0, True), x, gradgrad=True)


def test_std_of_constant_has_zero_grad_and_dof_warning():
    check(lambda lib, t: t.std(1), np.ones((2, 3)), gradgrad=True)
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            lib.tensor([1.0, 2.0]).var(correction=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib, t: t.std(correction=3), np.array([1.0, 2.0]), grad=False)
        check(lambda lib, t: t.var(0), np.array([3.0]), grad=False)
        check(lambda lib, t: t.var(), np.zeros(0), grad=False)


# -------------------------------------------------------------------------------------------------- norm


def test_norm_at_zero_and_ties():
    z = np.zeros((2, 3))
    z[1, 0] = 2.0
    for p in (2, 1, 3, 0.5, "fro"):
        check(lambda lib, t: t.norm(p, dim=1), z)
    ties = np.array([[1.0, -3, 3, 0], [2, 2, -2, 1]])
    for p in (math.inf, -math.inf):
        check(lambda lib, t: t.norm(p, dim=1), ties, gradgrad=True)
        check(lambda lib, t: t.norm(p), ties, gradgrad=True)
    check(lambda lib, t: t.norm(dtype=lib.float64), randn(4, dtype=np.float32), gradgrad=True)


# --------------------------------------------------------------------------------------------- logsumexp
def test_logsumexp_stable_and_softmax_grad():
    x = np.array([[1e4, 1e4 + 1, -1e4], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    check(lambda lib, t: t.logsumexp(1), x, grad=False)
    check(lambda lib, t: t[:2].logsumexp(1), x)
    big = randn(4, 5) * 1e4
    check(lambda lib, t: lib.logsumexp(t, (0, 1)), big, gradgrad=True, rtol=1e-6)
    check(lambda lib, t: lib.logsumexp(t, -1, keepdim=True), big.astype(np.float32), gradgrad=True)
    check(lambda lib, t: lib.logsumexp(t, 0), np.arange(6).reshape(2, 3), grad=False)


# ---------------------------------------------------------------------------------------------- scans


@pytest.mark.parametrize("zeros", [[0], [2], [1, 3], [0, 1], [4], [1, 2, 4]])
def test_cumprod_with_zeros(zeros):
    x = randn(5)
    x[zeros] = 0.0
    check(lambda lib, t: t.cumprod(0), x, gradgrad=True)
    check(lambda lib, t: t.cumprod(0), x)  # first order only: the O(n) formula
    m = np.stack([x, randn(5), x[::-1].copy()])
    check(lambda lib, t: t.cumprod(1), m, gradgrad=True)
    check(lambda lib, t: t.cumprod(1), m)
    check(lambda lib, t: t.cumprod(0), m.T.copy(), gradgrad=True)


def test_cummax_cummin_ties_take_latest_index():
    x = np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0]])
    check(lambda lib, t: t.cummax(1), x, gradgrad=True)
    check(lambda lib, t: t.cummin(1), x, gradgrad=True)
    check(lambda lib, t: t.cummin(0), x, gradgrad=True)


# ---------------------------------------------------------------------------------------------- median


def test_median_lower_and_ties():
    check(lambda lib, t: t.median(), np.array([4.0, 1, 3, 2]), gradgrad=True)  # lower median
    check(lambda lib, t: t.median(), np.array([[1.0, 3, 1], [1, 0, 5]]), gradgrad=True)  # tie: evenly
    check(lambda lib, t: t.median(1).values, np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0]]), gradgrad=True)
    check(lambda lib, t: t.median(), np.zeros(0), grad=False)


# ----------------------------------------------------------------------------------- all / any / counts
@pytest.mark.parametrize("shape", SHAPES)
def test_all_any_count_nonzero(shape):
    x = (RNG.random(shape) > 0.3).astype(np.float64) * randn(*shape) if shape else np.float64(0.0)
    for name in ("all", "any", "count_nonzero"):
        check(lambda lib, t: getattr(lib, name)(t), x, grad=False)
        for d in dims_for(shape)[1:]:
            if name == "count_nonzero":
                check(lambda lib, t: lib.count_nonzero(t, d), x, grad=False)
            elif isinstance(d, int):
                check(lambda lib, t: getattr(t, name)(d), x, grad=False)
                check(lambda lib, t: getattr(t, name)(d, keepdim=True), x, grad=False)
    u8 = np.array([[0, 2], [3, 4]], np.uint8)
    check(lambda lib, t: t.all(), u8, grad=False)
    check(lambda lib, t: t.any(1), u8, grad=False)
    check(lambda lib, t: (t > 1).all(0), u8, grad=False)


# ------------------------------------------------------------------------------------------ edge shapes
def test_empty_inputs():
    e0, e2 = np.zeros(0), np.zeros((2, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (lambda lib, t: t.prod(), lambda lib, t: t.sum(), lambda lib, t: t.norm(),
                  lambda lib, t: t.logsumexp(0), lambda lib, t: t.cumsum(0), lambda lib, t: t.cumprod(0),
                  lambda lib, t: t.amax(0), lambda lib, t: t.max(0), lambda lib, t: t.all(), lambda lib, t: t.any(),
                  lambda lib, t: t.count_nonzero(), lambda lib, t: t.nansum(), lambda lib, t: t.prod(1),
                  lambda lib, t: t.std(1), lambda lib, t: t.cummax(1), lambda lib, t: t.sum(1)):
            check(f, e2)
        check(lambda lib, t: t.prod(), e0)
        check(lambda lib, t: t.logsumexp(0), e0)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(0).max(), lambda lib: lib.zeros(0).min(), lambda lib: lib.zeros(0).amax(),
    lambda lib: lib.zeros(2, 0).amax(1), lambda lib: lib.zeros(2, 0).max(1), lambda lib: lib.zeros(0).argmax(),
    lambda lib: lib.zeros(2, 0).argmin(1), lambda lib: lib.zeros(2, 0).median(1),
    lambda lib: lib.zeros(0).norm(float("inf")), lambda lib: lib.zeros(2, 3).max(2),
    lambda lib: lib.zeros(2, 3).sum(5), lambda lib: lib.zeros(2, 3).amax((0, 0)), lambda lib: lib.zeros(2, 3).cumsum(2),
    lambda lib: lib.zeros(2, 3).cumprod(-3), lambda lib: lib.zeros(2, 3).argmax(2), lambda lib: lib.zeros(2, 3).std(4),
    lambda lib: lib.zeros(2, 3).logsumexp(3), lambda lib: lib.tensor(1.0).max(1), lambda lib: lib.zeros(3).prod(1),
    lambda lib: lib.arange(3).std(), lambda lib: lib.arange(3).var(0), lambda lib: lib.arange(3).norm(),
    lambda lib: lib.arange(3).nanmean(), lambda lib: lib.zeros(2, 3).median(2), lambda lib: lib.zeros(3).cummax(1),
    lambda lib: lib.zeros(2, 3).all(2), lambda lib: lib.zeros(2, 3).count_nonzero(2),
    lambda lib: lib.norm(lib.zeros(2, 3, 4), dim=(0, 1, 2)),
])
def test_errors_match_torch(fn):
    same_error(fn)


def test_noncontiguous_inputs():
    x = randn(4, 6)
    for f in (lambda lib, t: t.t().max(0), lambda lib, t: t[:, ::2].prod(1), lambda lib, t: t.t().cumprod(1),
              lambda lib, t: t[::2].std(0), lambda lib, t: t.t().logsumexp(0), lambda lib, t: t.t().cummax(0),
              lambda lib, t: t[:, 1::2].median(0), lambda lib, t: t.t().amin((0, 1)), lambda lib, t: lib.var_mean(t.t(), 1)):
        check(f, x, gradgrad=True)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_random_shapes_and_dims(shape, data):
    x = RNG.standard_normal(shape)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["amax", "std", "var", "logsumexp", "norm", "prod", "max", "median", "min"]))
    if name in ("max", "min", "median"):
        check(lambda lib, t: tuple(getattr(t, name)(d, keepdim)), x, gradgrad=True)
    elif name == "norm":
        check(lambda lib, t: t.norm(2, d, keepdim), x, gradgrad=True)
    else:
        check(lambda lib, t: getattr(t, name)(d, keepdim=keepdim), x, gradgrad=True)


def test_empty_dim_list_reduces_everything():
    x = randn(2, 3)
    for f in (lambda lib, t: t.sum(()), lambda lib, t: t.mean(()), lambda lib, t: t.amax(()),
              lambda lib, t: t.sum([], keepdim=True)):
        check(f, x, gradgrad=True)
