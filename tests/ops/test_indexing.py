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


# ---------------------------------------------------------------- bounds of the whole index family, get and set
# NOTE [index bounds] in ember/ops/indexing.py: a negative index must never wrap silently where torch refuses it,
# and every out-of-range index raises torch's exception type and message (never NumPy's). Each case runs on ember
# and torch: both raise the same error, or both give the same values.
def _index_family(lib, bad: int) -> dict:
    x = lambda: lib.arange(12.0).reshape(3, 4)  # noqa: E731
    xg = lambda: lib.arange(12.0).reshape(3, 4).requires_grad_()  # noqa: E731
    i = lambda *v: lib.tensor(list(v))  # noqa: E731
    b = bad
    return {
        "scatter_": lambda: x().scatter_(0, i([b, 0, 0, 0]), 1.0),
        "scatter src": lambda: x().scatter(1, i([0, b], [1, 1], [0, 0]), lib.ones(3, 4)),
        "scatter_add": lambda: x().scatter_add(0, i([b, 0, 0, 0]), lib.ones(1, 4)),
        "scatter_add grad": lambda: xg().scatter_add(0, i([b, 0, 0, 0]), lib.ones(1, 4)),
        "scatter_reduce": lambda: x().scatter_reduce(0, i([b, 0, 0, 0]), lib.ones(1, 4), "amax"),
        "gather": lambda: x().gather(1, i([b], [0], [1])),
        "gather grad": lambda: xg().gather(1, i([b], [0], [1])),
        "take_along_dim flat": lambda: lib.take_along_dim(x(), i(b)),
        "index_select": lambda: x().index_select(0, i(b)),
        "index_select grad": lambda: xg().index_select(0, i(b)),
        "index_add": lambda: x().index_add(0, i(b), lib.ones(1, 4)),
        "index_add grad": lambda: xg().index_add(0, i(b), lib.ones(1, 4)),
        "index_copy": lambda: x().index_copy(0, i(b), lib.ones(1, 4)),
        "index_fill": lambda: x().index_fill(1, i(b), 5.0),
        "index_reduce": lambda: x().index_reduce(0, i(b), lib.ones(1, 4), "prod"),
        "take": lambda: lib.take(x(), i(b)),
        "put_": lambda: x().put_(i(b), lib.tensor([7.0])),
        "put_ accumulate": lambda: x().put_(i(b), lib.tensor([7.0]), accumulate=True),
        "x[i]": lambda: x()[i(b)],
        "x[int]": lambda: x()[b],
        "x[:, i]": lambda: x()[:, i(b)],
        "x[i, j]": lambda: x()[i(b), i(0)],
        "x[i] grad": lambda: xg()[i(b)],
        "x[i] = v": lambda: _set(x(), i(b), 1.0),
        "x[int] = v": lambda: _set(x(), b, 1.0),
        "index_put_": lambda: x().index_put_((i(b),), lib.tensor(1.0)),
        "index_put_ accumulate": lambda: x().index_put_((i(b),), lib.tensor(1.0), accumulate=True),
        "index_put_ 2-d": lambda: x().index_put_((i(0), i(b)), lib.tensor(1.0)),
        "embedding": lambda: lib.nn.functional.embedding(i(b), x()),
        "embedding_bag": lambda: lib.nn.functional.embedding_bag(i(b), x(), i(0)),
        "one_hot": lambda: lib.nn.functional.one_hot(i(b), 3),
        "select": lambda: x().select(1, b),
        "select_scatter": lambda: lib.select_scatter(x(), lib.ones(4), 0, b),
        "narrow": lambda: x().narrow(0, b, 1),
    }


def _set(t, key, value):
    t[key] = value
    return t


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return "error", e


@pytest.mark.parametrize("bad", [-1, -3, -4, -5, 3, 4, 12, -13])
@pytest.mark.parametrize("name", sorted(_index_family(np, 0)))
def test_index_family_bounds_match_torch(name, bad):
    e_kind, e = _outcome(_index_family(ember, bad)[name])
    t_kind, t = _outcome(_index_family(torch, bad)[name])
    if t_kind == "error":
        assert e_kind == "error", f"ember gave {e!r}; torch raised {type(t).__name__}: {t}"
        same_error(lambda lib: _index_family(lib, bad)[name]())
    else:
        assert e_kind == "ok", f"ember raised {type(e).__name__}: {e}; torch gave {t}"
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("bad", [4, -5, 12])
def test_take_along_dim_refuses_what_torch_wraps(bad):
    """Beyond torch: torch's take_along_dim(dim=) wraps any index modulo the size (a silent wrong answer); ember
    counts -size..-1 from the end as torch does and raises torch's gather error for the rest."""
    x, idx = ember.arange(12.0).reshape(3, 4), ember.tensor([[bad], [0], [1]])
    with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1 with size 4"):
        ember.take_along_dim(x, idx, 1)
    got = ember.take_along_dim(x, ember.tensor([[-1], [0], [-4]]), 1)
    want = torch.take_along_dim(torch.arange(12.0).reshape(3, 4), torch.tensor([[-1], [0], [-4]]), 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(3), 0, 0),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(2, 4), 0, 0, 1),
    lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(3), 5),
    lambda lib: lib.zeros(3).narrow(0, 1, -1),
    lambda lib: lib.zeros(3).narrow(0, 2, 2),
])
def test_scatter_views_and_narrow_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("key", [1.5, (0, 1.5), np.float64(1.0), 2j, object(), "a"])
def test_index_of_a_wrong_type_raises_torchs_error(key):
    """x[1.5]: torch's IndexError (a str gives torch's TypeError)."""
    same_error(lambda lib: lib.arange(6).reshape(2, 3)[key])
    same_error(lambda lib: lib.arange(6).reshape(2, 3).__setitem__(key, 1))


def test_names_moved_out_of_indexing_resolve_there() -> None:
    """The gather/scatter, index_* and masked_* functions once defined in ops/indexing.py are still found there
    (NOTE [names of a split module]), as the objects their own modules define."""
    import importlib

    from ember.ops import indexing

    for name in ("gather scatter scatter_add scatter_reduce scatter_reduce_any index_select index_add index_copy "
                 "index_fill take take_along_dim masked_fill masked_select masked_scatter").split():
        obj = getattr(indexing, name)
        home = importlib.import_module(obj.__module__)
        assert home.__name__ != "ember.ops.indexing" and getattr(home, name) is obj, name
    with pytest.raises(AttributeError, match="has no attribute 'cat'"):
        _ = indexing.cat
