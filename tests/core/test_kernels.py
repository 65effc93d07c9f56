"""ember/_kernels.py: the fast paths equal NumPy's general kernels (select: np.where bit for bit; fsum/rowdot: np.sum
within float rounding, np.sum itself beyond EINSUM_MAX terms)."""
from __future__ import annotations

import numpy as np
import pytest

from ember import _kernels as K

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.0, 7.5])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((64, 64), (64, 64), (64, 64)), ((64, 64), (64,), ()), ((64, 1), (1, 64), (64, 64)),
                                    ((4096,), (), (4096,)), ((8,), (8,), (8,))])
def test_select_is_np_where_bit_for_bit(dtype, shapes):
    r = np.random.default_rng(0)
    sc, sa, sb = shapes
    cond = r.random(sc) > 0.5

    def values(shape):
        v = r.standard_normal(shape)
        if v.ndim:
            v.flat[: len(SPECIAL)] = SPECIAL[: v.size]
        return v.astype(dtype)

    for a, b in ((values(sa), values(sb)), (values(sa), 0.0), (1.5, values(sb)), (values(sa), -0.0)):
        got = K.select(cond, a, b, np.dtype(dtype))
        want = np.asarray(np.where(cond, a, b), dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("shape,axes", [((512, 128), (1,)), ((32, 16, 1024), (0, 2)), ((256, 256), (0, 1)),
                                        ((3, 4, 5), (1,)), ((7,), (0,)), ((2, 0, 3), (1,)), ((64, 256), (0,))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
def test_fsum_and_rowdot_equal_np_sum(shape, axes, dtype):
    r = np.random.default_rng(1)
    a = (r.standard_normal(shape) * 3 + 1).astype(dtype)
    b = (r.standard_normal(shape)).astype(dtype)
    for keep in (False, True):
        got, want = K.fsum(a, axes, keep), np.sum(a, axis=axes, keepdims=keep)
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == np.shape(want)
        tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}.get(dtype, 0)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(a.astype(np.float64)).sum() ** 0.5)
        if dtype != np.int64:
            got, want = K.rowdot(a, b, axes, keep), np.sum(a * b, axis=axes, keepdims=keep)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(a.astype(np.float64) * b).sum() ** 0.5)


def test_long_and_small_sums_keep_pairwise_summation(monkeypatch):
    a = np.random.default_rng(2).random(20000).astype(np.float32)
    assert K.fsum(a[:1000], (0,)).tobytes() == np.sum(a[:1000], axis=(0,)).tobytes()
    monkeypatch.setattr(K, "EINSUM_MAX", 100)
    assert K.fsum(a, (0,)).tobytes() == np.sum(a, axis=(0,)).tobytes()


def _keys(r):
    """Keys of the shapes the ops pass (and some that take np.add.at's own path)."""
    g = list(np.ogrid[:3, :4])
    g[1] = r.integers(0, 5, (3, 4))
    yield (10, 4), r.integers(0, 10, 7), (7, 4)                                  # embedding rows
    yield (10, 4), r.integers(-10, 10, (3, 2)), (3, 2, 4)                        # negative, 2-d index
    yield (3, 10, 4), (slice(None), r.integers(0, 10, 5)), (3, 5, 4)             # index_select dim 1
    yield (3, 10, 4), (slice(None), slice(None), r.integers(0, 4, 6)), (3, 10, 6)
    yield (3, 5), tuple(g), (3, 4)                                               # take-along (gather)
    yield (6, 5), (r.integers(0, 6, (4, 1)), r.integers(0, 5, (1, 3))), (4, 3)   # broadcast index arrays
    yield (6, 5, 2), (r.integers(0, 6, (4, 1)), r.integers(0, 5, (1, 3))), (1,)  # broadcast values
    yield (6, 5), (r.integers(0, 6, 3), slice(1, 4)), (3, 3)                     # a partial slice: np.add.at
    yield (6, 5), r.random((6, 5)) > 0.5, None                                   # a mask: np.add.at


def test_scatter_add_equals_np_add_at():
    r = np.random.default_rng(3)
    for shape, key, vshape in _keys(r):
        want = np.zeros(shape)
        vals = r.standard_normal(vshape if vshape else np.zeros(shape)[key].shape)
        np.add.at(want, key, vals)
        got = np.zeros(shape)
        K.scatter_add(got, key, vals)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(key))


@pytest.mark.parametrize("seed", range(6))
def test_take_along_and_wrapped_equal_numpy(seed):
    """take_along is np.take_along_axis (contiguous or not, an index smaller than x in other dims); wrapped is %."""
    r = np.random.default_rng(seed)
    nd = int(r.integers(1, 4))
    shape = tuple(int(n) for n in r.integers(1, 6, nd))
    dim = int(r.integers(0, nd))
    x = r.standard_normal(shape)
    if seed % 2:
        x = np.asfortranarray(x)  # not C-contiguous: NumPy's own path
    ishape = tuple(int(r.integers(1, n + 1)) if d != dim else int(r.integers(0, 7)) for d, n in enumerate(shape))
    idx = r.integers(0, shape[dim], ishape)
    part = x[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(ishape))]
    np.testing.assert_array_equal(K.take_along(x, idx, dim), np.take_along_axis(part, idx, dim))
    neg = idx - shape[dim]
    np.testing.assert_array_equal(K.wrapped(neg, shape[dim]), idx)
    assert K.wrapped(idx, shape[dim]) is idx
