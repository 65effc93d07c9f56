"""ember.testing.make_tensor against torch.testing.make_tensor: value sets/ranges, shape, strides, flags, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

from oracle import ember, same_error, torch

N = 4000


def _made(dtype: str, *shape, **kw):
    """``make_tensor`` of ember and of torch with the same arguments."""
    return tuple(lib.testing.make_tensor(*shape, dtype=getattr(lib, dtype), device="cpu", **kw) for lib in (ember, torch))


def _values(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


@pytest.mark.parametrize("dtype,low,high", [
    ("bool", None, None), ("uint8", None, None), ("int8", None, None), ("int16", -2.5, 2.5), ("int32", 3, 7),
    ("int64", None, None), ("uint8", -5, 3), ("int8", 100, 1000), ("int64", -1.2, 0.7)])
def test_integer_value_sets(dtype: str, low, high) -> None:
    e, t = _made(dtype, N, low=low, high=high)
    assert str(e.dtype) == str(t.dtype)
    assert set(np.unique(_values(e))) == set(np.unique(_values(t)))


@pytest.mark.parametrize("dtype,low,high", [
    ("float32", None, None), ("float64", None, None), ("float16", None, None), ("float32", -0.5, 0.25),
    ("float64", 2, 3), ("float16", -1e6, 1e6), ("float32", -math.inf, math.inf), ("float64", 1e300, None)])
def test_float_ranges(dtype: str, low, high) -> None:
    if low == 1e300:
        high = 1.5e308
    e, t = _made(dtype, N, low=low, high=high)
    ev, tv = _values(e), _values(t)
    assert str(e.dtype) == str(t.dtype) and np.all(np.isfinite(ev))
    width = tv.max() - tv.min()
    np.testing.assert_allclose([ev.min(), ev.max()], [tv.min(), tv.max()], atol=0.02 * width, rtol=0)
    assert abs((ev / width).mean() - (tv / width).mean()) < 0.1


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("shape", [((2, 3),), (2, 3), ((),), (), ((0, 4),), ((5,),), ([3, 1, 2],)])
def test_shape_and_contiguity(dtype: str, shape) -> None:
    for kw in ({}, dict(noncontiguous=True)):
        e, t = _made(dtype, *shape, **kw)
        assert tuple(e.shape) == tuple(t.shape)
        if t.numel():  # ember gives every empty tensor zero strides (a core difference, not make_tensor's)
            assert e.stride() == t.stride()
        assert e.is_contiguous() == t.is_contiguous()


def test_requires_grad_and_exclude_zero() -> None:
    e, t = _made("float64", 3, 4, requires_grad=True)
    assert e.requires_grad and t.requires_grad and e.is_leaf and t.is_leaf
    for dtype, low, high in (("int8", -1, 2), ("bool", None, None), ("float16", -1e-8, 1e-8)):
        e, t = _made(dtype, 500, low=low, high=high, exclude_zero=True)
        assert set(np.unique(_values(e))) == set(np.unique(_values(t)))


def test_errors_match_torch() -> None:
    def mk(dtype: str, **kw):
        return lambda lib: lib.testing.make_tensor(3, dtype=getattr(lib, dtype), device="cpu", **kw)

    same_error(mk("int64", requires_grad=True))
    same_error(mk("bool", requires_grad=True))
    same_error(mk("float32", low=3, high=1))
    same_error(mk("int32", low=5, high=5))
    same_error(mk("uint8", low=-5, high=-1))
    same_error(mk("float32", low=math.nan))
    same_error(lambda lib: lib.testing.make_tensor(3, dtype=lib.float32))
    with pytest.warns(FutureWarning):
        e = ember.testing.make_tensor(3, dtype=ember.float32, device="cpu", low=2.0, high=2.0)
    with pytest.warns(FutureWarning):
        t = torch.testing.make_tensor(3, dtype=torch.float32, device="cpu", low=2.0, high=2.0)
    assert np.all(_values(e) == 2.0) and np.all(_values(t) == 2.0)
