"""Shape ops beyond the op table: random shapes for repeat/roll/flip/rot90/diagonal (hypothesis), views that
share memory as torch's do, and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from oracle import check, same_error, ember, torch

_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


@settings(max_examples=30, deadline=None)
@given(shape=_shapes, data=st.data())
def test_repeat_random(shape, data) -> None:
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 2)))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    check(lambda lib, t: t.repeat(*reps), x, gradgrad=True)


@settings(max_examples=30, deadline=None)
@given(shape=_shapes, data=st.data())
def test_roll_flip_random(shape, data) -> None:
    n = len(shape)
    dims = tuple(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=n, unique_by=lambda d: d % n)))
    shifts = tuple(data.draw(st.lists(st.integers(-6, 6), min_size=len(dims), max_size=len(dims))))
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    check(lambda lib, t: t.roll(shifts, dims) * t.flip(dims), x, gradgrad=True)


@settings(max_examples=30, deadline=None)
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4), data=st.data())
def test_diagonal_random(shape, data) -> None:
    n = len(shape)
    d1 = data.draw(st.integers(-n, n - 1))
    d2 = data.draw(st.integers(-n, n - 1).filter(lambda d: d % n != d1 % n))
    off = data.draw(st.integers(-5, 5))
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float64)
    check(lambda lib, t: t.diagonal(off, d1, d2), x, gradgrad=True)
    check(lambda lib, t: lib.diag_embed(t, off, d1 % n, d2 % n), x, gradgrad=True)


@settings(max_examples=20, deadline=None)
@given(k=st.integers(-6, 6), shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
def test_rot90_random(k, shape) -> None:
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    check(lambda lib, t: t.rot90(k, (0, -1)), x, gradgrad=True)


@pytest.mark.parametrize("lib", [ember, torch])
def test_views_share_memory(lib) -> None:
    x = lib.zeros(3, 4)
    x.diagonal().fill_(1.0)
    x.unflatten(1, (2, 2))[0, 1, 1] = 5.0
    x.movedim(0, 1)[2, 1] = 7.0
    assert x.tolist() == [[1.0, 0.0, 0.0, 5.0], [0.0, 1.0, 7.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
    assert x.chunk(2, 1)[1].data_ptr() != x.data_ptr()  # a slice further into the storage


def test_diagonal_write_through_view_of_non_leaf_grad() -> None:
    x = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)

    def fn(lib, t):
        y = t * 1
        y.diagonal().mul_(3)
        return y

    check(fn, x, gradgrad=True)


def test_meshgrid_default_indexing_warns_like_torch() -> None:
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(ember.arange(2), ember.arange(3))


def test_repeat_interleave_output_values() -> None:
    check(lambda lib, x: lib.repeat_interleave(x, lib.tensor([2, 0, 1])), np.arange(3, dtype=np.float32),
          gradgrad=True)
    check(lambda lib, x: x.repeat_interleave(lib.tensor(2), dim=0), np.arange(6, dtype=np.float32).reshape(3, 2),
          gradgrad=True)


ERRORS = {
    "flip duplicate dims": lambda lib: lib.zeros(2, 3).flip(0, 0),
    "flip dim out of range": lambda lib: lib.zeros(2, 3).flip(2),
    "fliplr 1-d": lambda lib: lib.zeros(3).fliplr(),
    "roll mismatch": lambda lib: lib.zeros(2, 3).roll((1, 2), 0),
    "roll dim out of range": lambda lib: lib.zeros(2, 3).roll(1, 3),
    "rot90 1-d": lambda lib: lib.zeros(3).rot90(),
    "rot90 same dims": lambda lib: lib.zeros(2, 3).rot90(1, (1, 1)),
    "rot90 three dims": lambda lib: lib.zeros(2, 3).rot90(1, (0, 1, 2)),
    "repeat too few": lambda lib: lib.zeros(2, 3).repeat(2),
    "repeat negative": lambda lib: lib.zeros(2, 3).repeat(2, -1),
    "repeat_interleave negative": lambda lib: lib.zeros(3).repeat_interleave(-1),
    "repeat_interleave negative tensor": lambda lib: lib.zeros(3).repeat_interleave(lib.tensor([1, -1, 0])),
    "repeat_interleave size": lambda lib: lib.zeros(3).repeat_interleave(lib.tensor([1, 2]), dim=0),
    "unflatten bad sizes": lambda lib: lib.zeros(2, 6).unflatten(1, (4, 2)),
    "movedim repeated": lambda lib: lib.zeros(2, 3, 4).movedim((0, 0), (1, 2)),
    "movedim lengths": lambda lib: lib.zeros(2, 3, 4).movedim((0, 1), (1,)),
    "broadcast_to": lambda lib: lib.zeros(2, 3).broadcast_to((4, 3)),
    "broadcast_tensors": lambda lib: lib.broadcast_tensors(lib.zeros(2), lib.zeros(3)),
    "chunk zero": lambda lib: lib.zeros(4).chunk(0),
    "tensor_split zero": lambda lib: lib.zeros(4).tensor_split(0),
    "hsplit 0-d": lambda lib: lib.hsplit(lib.zeros(()), 2),
    "vsplit uneven": lambda lib: lib.vsplit(lib.zeros(3, 2), 2),
    "tril 1-d": lambda lib: lib.zeros(3).tril(),
    "diagonal same dims": lambda lib: lib.zeros(3, 3).diagonal(0, 1, 1),
    "diagonal dim out of range": lambda lib: lib.zeros(3, 3).diagonal(0, 0, 2),
    "diag 3-d": lambda lib: lib.zeros(2, 2, 2).diag(),
    "diag_embed 0-d": lambda lib: lib.diag_embed(lib.tensor(1.0)),
    "trace bool": lambda lib: lib.ones(2, 2, dtype=lib.bool).trace(),
    "meshgrid dtypes": lambda lib: lib.meshgrid(lib.zeros(2), lib.arange(2), indexing="ij"),
    "trace 1-d": lambda lib: lib.zeros(3).trace(),
    "meshgrid indexing": lambda lib: lib.meshgrid(lib.zeros(2), indexing="xx"),
    "meshgrid 2-d": lambda lib: lib.meshgrid(lib.zeros(2, 2), indexing="ij"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name) -> None:
    same_error(ERRORS[name])


# the public functions ops/shape.py defined before it was split by domain (NOTE [names of a split module])
_MOVED_FROM_SHAPE = ("cat concat concatenate stack split unbind hstack vstack dstack column_stack row_stack atleast_1d "
                     "atleast_2d atleast_3d chunk tensor_split hsplit vsplit dsplit split_with_sizes unsafe_split "
                     "unsafe_split_with_sizes unsafe_chunk repeat tile repeat_interleave flip fliplr flipud roll rot90 "
                     "tril triu diagonal diag_embed diag diagflat trace").split()


def test_names_moved_out_of_shape_resolve_there() -> None:
    import importlib

    from ember.ops import shape

    for name in _MOVED_FROM_SHAPE:
        obj = getattr(shape, name)
        home = importlib.import_module(obj.__module__)
        assert home.__name__ != "ember.ops.shape" and getattr(home, name) is obj, name
    with pytest.raises(AttributeError, match="has no attribute 'scatter'"):
        _ = shape.scatter
