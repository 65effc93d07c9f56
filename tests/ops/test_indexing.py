"""Indexing beyond the op table: random keys (hypothesis), advanced setitem on non-leaves, accumulation of
duplicate indices, and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import check, same_error, ember, torch

SHAPE = (4, 3, 5)


@st.composite
def _keys(draw):
    """A torch key over SHAPE mixing ints, slices, None, Ellipsis, int lists and bool masks."""
    items, dim, ellipsis = [], 0, False
    n = draw(st.integers(1, 4))
    for _ in range(n):
        kinds = ["int", "slice", "none", "list", "mask"] + ([] if ellipsis else ["ellipsis"])
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            items.append(None)
            continue
        if kind == "ellipsis":
            ellipsis = True
            items.append(Ellipsis)
            dim = None  # remaining positions are counted from the end: keep it simple, stop here
            break
        if dim >= len(SHAPE):
            break
        size = SHAPE[dim]
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            a = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            b = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            items.append(slice(a, b, draw(st.one_of(st.none(), st.integers(1, 3)))))
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=4)))
        else:
            items.append(("mask", draw(st.lists(st.booleans(), min_size=size, max_size=size))))
        dim += 1
    if dim is None:
        tail = draw(st.sampled_from([[], [0], [[1, 0]], [slice(1, None)]]))
        items += tail
    return tuple(items)


def _materialize(lib, key):
    return tuple(lib.tensor(k[1]) if isinstance(k, tuple) else k for k in key)


@settings(max_examples=60, deadline=None)
@given(key=_keys())
def test_random_keys_match_torch(key) -> None:
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    n_adv = sum(isinstance(k, (list, tuple)) for k in key)
    try:
        torch.zeros(SHAPE)[_materialize(torch, key)]
    except (IndexError, RuntimeError):
        same_error(lambda lib: lib.zeros(SHAPE)[_materialize(lib, key)])
        return
    eo, to = check(lambda lib, t: t[_materialize(lib, key)], x, gradgrad=True)
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__ or n_adv == 0


@settings(max_examples=40, deadline=None)
@given(key=_keys(), seed=st.integers(0, 100))
def test_random_keys_setitem_non_leaf(key, seed) -> None:
    x = np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)
    try:
        region = torch.zeros(SHAPE)[_materialize(torch, key)].shape
    except (IndexError, RuntimeError):
        return
    v = np.random.default_rng(seed + 1).standard_normal(tuple(region)).astype(np.float32)

    def fn(lib, t, val):
        y = t * 2
        y[_materialize(lib, key)] = val
        return y

    eo, to = check(fn, x, v, gradgrad=True)
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__


@pytest.mark.parametrize("key", [[0, 0, 2], ([1, 1], [2, 2]), (slice(None), [0, 0, 0])])
def test_duplicate_indices_accumulate_grads(key) -> None:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    check(lambda lib, t: t[key] * 3, x, gradgrad=True)


def test_index_put_accumulate_duplicates() -> None:
    x = np.zeros((3, 4), np.float32)
    v = np.arange(3, dtype=np.float32)
    check(lambda lib, t, val: t.index_put((lib.tensor([1, 1, 2]), lib.tensor([0, 0, 3])), val, accumulate=True),
          x, v, gradgrad=True)
    check(lambda lib, t, val: (t * 1).index_put_((lib.tensor([0, 0]),), val, accumulate=True),
          x, np.ones(4, np.float32), gradgrad=True)


def test_index_add_duplicates_and_scatter_add_duplicates() -> None:
    x = np.zeros((3, 2), np.float32)
    check(lambda lib, t, s: t.index_add(0, lib.tensor([1, 1, 1]), s, alpha=0.5), x, np.ones((3, 2), np.float32),
          gradgrad=True)
    check(lambda lib, t, s: t.scatter_add(0, lib.tensor([[2, 2], [2, 0]]), s), x, np.ones((2, 2), np.float32),
          gradgrad=True)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_with_zeros(include_self) -> None:
    x = np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [2.0, 1.0, 0.5]], np.float64)
    src = np.array([[0.0, 0.0, 2.0], [3.0, 0.0, 0.5]], np.float64)
    index = [[0, 1, 1], [0, 1, 2]]
    check(lambda lib, t, v: t.scatter_reduce(0, lib.tensor(index), v, "prod", include_self=include_self),
          x, src, gradgrad=False)


@pytest.mark.parametrize("node,key", [("CopySlices", (0, [1, 2])), ("CopySlices", (slice(1, None), [0])),
                                      ("IndexPutBackward0", ([0, 1],)), ("IndexPutBackward0", (slice(None), [2])),
                                      ("CopySlices", (slice(0, 2),))])
def test_setitem_node_names(node, key) -> None:
    for lib in (ember, torch):
        y = lib.randn(3, 4, requires_grad=True) * 1
        y[key] = 1.0
        assert type(y.grad_fn).__name__ == node


def test_masked_setitem_with_0d_tensor_value() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)

    def fn(lib, t, v):
        y = t * 1
        y[t.detach() > 0] = v
        return y

    check(fn, x, np.float32(2.5), gradgrad=True)


def test_masked_fill_inplace_on_view_of_non_leaf() -> None:
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)

    def fn(lib, t):
        y = t * 1
        y[1].masked_fill_(y[1].detach() > 0, 0.0)
        return y

    check(fn, x, gradgrad=True)


ERRORS = {
    "getitem out of bounds": lambda lib: lib.zeros(3)[5],
    "getitem list out of bounds": lambda lib: lib.zeros(3, 2)[[0, 5]],
    "getitem tensor out of bounds": lambda lib: lib.zeros(3, 2)[:, lib.tensor([2])],
    "mask shape mismatch": lambda lib: lib.zeros(3, 2)[lib.tensor([True, False])],
    "float index": lambda lib: lib.zeros(3)[lib.tensor([0.0])],
    "too many indices": lambda lib: lib.zeros(3)[0, 0],
    "setitem out of bounds": lambda lib: lib.zeros(3).__setitem__([4], 1.0),
    "setitem shape mismatch": lambda lib: lib.zeros(3, 2).__setitem__([0, 1], lib.ones(3)),
    "gather index dtype": lambda lib: lib.zeros(3).gather(0, lib.tensor([0], dtype=lib.int16)),
    "gather rank": lambda lib: lib.zeros(3, 2).gather(0, lib.tensor([0])),
    "gather size": lambda lib: lib.zeros(3, 2).gather(0, lib.tensor([[0, 1, 0]])),
    "gather out of bounds": lambda lib: lib.zeros(3, 2).gather(0, lib.tensor([[3, 0]])),
    "gather dim out of range": lambda lib: lib.zeros(3, 2).gather(2, lib.tensor([[0, 0]])),
    "scatter index dtype": lambda lib: lib.zeros(3).scatter(0, lib.tensor([0.0]), 1.0),
    "scatter out of bounds": lambda lib: lib.zeros(3).scatter(0, lib.tensor([3]), lib.ones(1)),
    "scatter src dtype": lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64)),
    "scatter_add size": lambda lib: lib.zeros(3, 2).scatter_add(0, lib.tensor([[0, 1, 0]]), lib.ones(1, 3)),
    "scatter index larger than src": lambda lib: lib.zeros(3, 2).scatter(0, lib.tensor([[0, 1]]), lib.ones(1, 1)),
    "scatter bad reduce": lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), 1.0, reduce="max"),
    "scatter reduce backward": lambda lib: lib.zeros(3, requires_grad=True).scatter(
        0, lib.tensor([0]), lib.ones(1), reduce="add").sum().backward(),
    "index_select out of range": lambda lib: lib.zeros(3).index_select(0, lib.tensor([3])),
    "index_select float index": lambda lib: lib.zeros(3).index_select(0, lib.tensor([0.0])),
    "index_select 2-d index": lambda lib: lib.zeros(3).index_select(0, lib.tensor([[0]])),
    "index_add count": lambda lib: lib.zeros(3, 2).index_add(0, lib.tensor([0, 1]), lib.ones(3, 2)),
    "index_add dtype": lambda lib: lib.zeros(3).index_add(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64)),
    "index_copy out of range": lambda lib: lib.zeros(3).index_copy(0, lib.tensor([5]), lib.ones(1)),
    "index_fill 1-d value": lambda lib: lib.zeros(3).index_fill(0, lib.tensor([0]), lib.ones(2)),
    "index_put dtype": lambda lib: lib.zeros(3).index_put((lib.tensor([0]),), lib.ones(1, dtype=lib.float64)),
    "masked_fill int mask": lambda lib: lib.zeros(3).masked_fill(lib.tensor([1, 0, 1]), 1.0),
    "masked_fill 1-d value": lambda lib: lib.zeros(3).masked_fill(lib.tensor([True, False, True]), lib.ones(2)),
    "masked_fill shape": lambda lib: lib.zeros(3).masked_fill(lib.tensor([True, False]), 1.0),
    "masked_fill_ mask larger than self": lambda lib: lib.zeros(3).masked_fill_(lib.tensor([[True], [False]]), 1.0),
    "masked_select int mask": lambda lib: lib.zeros(3).masked_select(lib.tensor([1, 0, 1])),
    "masked_scatter too small": lambda lib: lib.zeros(3).masked_scatter(lib.tensor([True, True, True]), lib.ones(2)),
    "take out of range": lambda lib: lib.zeros(3, 4).take(lib.tensor([12])),
    "take_along_dim broadcast": lambda lib: lib.take_along_dim(lib.zeros(3, 4), lib.tensor([[0, 2]]), 0),
    "take_along_dim rank": lambda lib: lib.take_along_dim(lib.zeros(3, 4), lib.tensor([0]), 0),
    "searchsorted side": lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0]), lib.tensor([1.0]), side="up"),
    "searchsorted side vs right": lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]), right=True,
                                                              side="left"),
    "searchsorted rows": lambda lib: lib.searchsorted(lib.zeros(2, 3), lib.zeros(3, 1)),
    "bucketize 2-d boundaries": lambda lib: lib.bucketize(lib.zeros(2), lib.zeros(2, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name) -> None:
    same_error(ERRORS[name])
