"""sort, argsort, topk, kthvalue, unique vs torch beyond the op table (tests/ops/op_db.py): ties, NaN,
unsorted topk, unique, errors, random shapes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import check, same_error, torch, ember

RNG = np.random.default_rng(99)


def randn(*shape):
    return RNG.standard_normal(shape)


def test_sort_ties_stable_and_nan_last():
    x = np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0], [np.nan, 1, np.nan, -1, 0]])
    for desc in (False, True):
        check(lambda lib, t: tuple(t.sort(1, descending=desc)), x, gradgrad=True)
        check(lambda lib, t: tuple(t.sort(dim=0, descending=desc, stable=True)), x, gradgrad=True)
        check(lambda lib, t: t.argsort(1, descending=desc), x, grad=False)
    i = RNG.integers(0, 3, (4, 6)).astype(np.int32)
    check(lambda lib, t: tuple(t.sort(1)), i, grad=False)
    check(lambda lib, t: tuple(t.sort(0, descending=True)), i, grad=False)
    check(lambda lib, t: tuple((t > 0).sort(1)), i, grad=False)


def test_topk_unsorted_gives_the_same_set():
    x = randn(3, 6)
    e = ember.tensor(x).topk(3, sorted=False)
    t = torch.tensor(x).topk(3, sorted=False)
    np.testing.assert_allclose(np.sort(e.values.numpy(), 1), np.sort(t.values.numpy(), 1))
    np.testing.assert_array_equal(np.sort(e.indices.numpy(), 1), np.sort(t.indices.numpy(), 1))


def test_ties_values_and_grads_for_selection():
    """topk/kthvalue/median pick an implementation-defined index among equal values (torch documents
    that too): compare values, and that the gradient lands on one of the tied positions."""
    x = np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0]])
    for _name, f in [("topk", lambda t: t.topk(2, 1)), ("kthvalue", lambda t: t.kthvalue(2, 1)),
                    ("median", lambda t: t.median(1))]:
        e, tt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        re, rt = f(e), f(tt)
        np.testing.assert_array_equal(re.values.detach().numpy(), rt.values.detach().numpy())
        np.testing.assert_array_equal(np.take_along_axis(x, re.indices.numpy().reshape(2, -1), 1).reshape(
            re.values.shape), rt.values.detach().numpy())
        re.values.sum().backward()
        assert e.grad.sum().item() == rt.values.numel()


def test_unique():
    a = np.array([3, 1, 2, 1, 3, 3], np.int64)
    check(lambda lib, t: lib.unique(t), a, grad=False)
    check(lambda lib, t: t.unique(return_inverse=True), a, grad=False)
    check(lambda lib, t: lib.unique(t, return_counts=True), a, grad=False)
    check(lambda lib, t: lib.unique(t, sorted=False, return_inverse=True, return_counts=True), a, grad=False)
    m = np.array([[1.0, 2, 1], [0, 0, 0], [1, 2, 1]])
    check(lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True), m, grad=False)
    check(lambda lib, t: lib.unique(t, dim=0, return_inverse=True, return_counts=True), m, grad=False)
    check(lambda lib, t: lib.unique(t, dim=1, return_inverse=True), m, grad=False)
    check(lambda lib, t: lib.unique(t), np.zeros(0), grad=False)
    check(lambda lib, t: lib.unique(t), np.float64(2.0), grad=False)
    for lib in (ember, torch):
        u = lib.tensor(m, requires_grad=True).unique()
        assert u.requires_grad and u.grad_fn.name() == "Unique2Backward0"
    same_error(lambda lib: lib.tensor(m, requires_grad=True).unique().sum().backward())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(2, 3).sort(2), lambda lib: lib.zeros(2, 3).argsort(-3), lambda lib: lib.zeros(2, 3).topk(4),
    lambda lib: lib.zeros(2, 3).topk(-1), lambda lib: lib.zeros(0).topk(1), lambda lib: lib.zeros(2, 3).kthvalue(0),
    lambda lib: lib.zeros(2, 3).kthvalue(4), lambda lib: lib.zeros(0).kthvalue(1), lambda lib: lib.zeros(2, 3).topk(1, 2),
    lambda lib: lib.zeros(2, 3).kthvalue(1, 5), lambda lib: lib.zeros(2, 3).unique(dim=5),
])
def test_errors_match_torch(fn):
    same_error(fn)


def test_repr():
    x = randn(3, 4)
    for f in (lambda t: t.sort(0), lambda t: t.topk(2), lambda t: t.kthvalue(2, 0, True)):
        assert repr(f(ember.tensor(x))) == repr(f(torch.tensor(x)))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_random_shapes(shape, data):
    x = RNG.standard_normal(shape)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[d]
    k = data.draw(st.integers(1, n))
    desc = data.draw(st.booleans())
    check(lambda lib, t: tuple(t.sort(d, desc)), x, gradgrad=True)
    check(lambda lib, t: tuple(t.topk(k, d, desc)), x, gradgrad=True)
    check(lambda lib, t: tuple(t.kthvalue(k, d, desc)), x, gradgrad=True)
