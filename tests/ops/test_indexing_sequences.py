"""Keys that are lists (NOTE [sequences as keys] in ember/ops/indexing.py) read as torch reads them: a short list
holding a sequence, tensor, slice, None or Ellipsis is a tuple of indices (with torch's deprecation warning), any
other list one index tensor; nested lists, floats and bools inside keys; get and set, with and without autograd."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_close, check, same_error, ember, torch

pytestmark = pytest.mark.filterwarnings("ignore:Using a non-tuple sequence:UserWarning")
SHAPE = (3, 4, 2)

# name -> key(lib). Keys are built per library (tensors inside keys are that library's).
KEYS = {
    "ints": lambda lib: [0, 2],
    "negative-ints": lambda lib: [-1, 0, 1],
    "empty": lambda lib: [],
    "list-of-lists": lambda lib: [[0, 1], [1, 2]],
    "list-of-tuples": lambda lib: [(0, 1), (1, 2)],
    "list-of-ranges": lambda lib: [range(2), 1],
    "nested-3": lambda lib: [[[0, 1]], [[1, 2]]],
    "ragged-broadcast": lambda lib: [[0, 1], [1]],
    "seq-and-int": lambda lib: [[0, 1], 1],
    "bools": lambda lib: [True, False, True],
    "bool-and-int": lambda lib: [True, 1],
    "floats": lambda lib: [0.0, 1.0],
    "floats-truncated": lambda lib: [0.5, 1.7],
    "floats-in-lists": lambda lib: [[0.5, 1.0], [0, 1]],
    "slice-and-list": lambda lib: [slice(None), [0, 2]],
    "slice-and-int": lambda lib: [slice(0, 2), 1],
    "ellipsis-and-list": lambda lib: [Ellipsis, [0, 1]],
    "none-and-list": lambda lib: [None, [0, 1]],
    "int-and-none": lambda lib: [0, None],
    "one-tensor": lambda lib: [lib.tensor([0, 1])],
    "two-tensors": lambda lib: [lib.tensor([0, 1]), lib.tensor([1, 2])],
    "0d-tensors": lambda lib: [lib.tensor(0), lib.tensor(1)],
    "tensor-and-int": lambda lib: [lib.tensor([0, 1]), 1],
    "bool-tensors-in-list": lambda lib: ([lib.tensor(True), lib.tensor(False), lib.tensor(True)],),
    "numpy-arrays": lambda lib: [np.array([0, 1]), np.array([1, 2])],
    "numpy-ints": lambda lib: [np.int64(0), np.int64(2)],
    "31-lists": lambda lib: [[0, 1]] * 2,
    "32-lists-one-index": lambda lib: [[0, 1]] * 32,
    "40-ints": lambda lib: [0, 1] * 20,
    "tuple-of-lists": lambda lib: ([0, 1], [1, 2]),
    "tuple-of-nested": lambda lib: ([[0, 1], [1, 0]], [[1, 2], [2, 3]]),
    "tuple-list-slice": lambda lib: ([0, 1], slice(None)),
    "tuple-slice-list": lambda lib: (slice(None), [0, 2]),
    "tuple-mask-int": lambda lib: ([True, False, True], 1),
    "tuple-floats": lambda lib: ([0.0, 1.0], 0),
    "tuple-negative-floats": lambda lib: ([-0.5, -1.5], 0),
    "tuple-0d-tensors": lambda lib: ([lib.tensor(0), lib.tensor(1)], 0),
    "tuple-1-element-tensor": lambda lib: ([lib.tensor([1])], 0),
    "tuple-empty-list": lambda lib: ([], 0),
    "tuple-empty-nested": lambda lib: ([[], []],),
    "size": lambda lib: lib.Size([0, 1]),
    "numpy-2d": lambda lib: np.array([[0, 1], [1, 2]]),
}

ERRORS = {
    "out-of-bounds": lambda lib: [[0, 5], [0, 1]],
    "index-past-dims": lambda lib: [[0, 1], [1, 2], [0, 3]],
    "mismatch": lambda lib: [[0, 1], [0, 1, 2]],
    "too-many": lambda lib: [[0], [0], [0], [0]],
    "short-mask": lambda lib: [True, False],
    "str": lambda lib: ["a"],
    "float-tensor": lambda lib: [lib.tensor([0.0, 1.0])],
    "multi-element-tensors-in-list": lambda lib: ([lib.tensor([0, 1]), lib.tensor([1, 2])], 0),
    "float-0d-tensors-in-list": lambda lib: ([lib.tensor(0.0), lib.tensor(1.0)], 0),
    "list-in-leaf": lambda lib: ([0, [1]], 0),
    "number-in-row": lambda lib: ([[0, 1], 1], 0),
    "ragged": lambda lib: ([[0, 1], [1]], 0),
    "none-in-list": lambda lib: ([None], 0),
    "object": lambda lib: ([object()], 0),
    "float-overflow": lambda lib: [[1e20, 0], [0, 1]],
    "int-overflow": lambda lib: ([2 ** 63], 0),
}


def _x(seed=0):
    return np.random.default_rng(seed).standard_normal(SHAPE)


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(m.message).split(" (Triggered")[0] for m in w if m.category is UserWarning]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_get(name):
    """Values, gradients and second gradients of x[key], and torch's deprecation warning exactly when it warns."""
    check(lambda lib, x: x[KEYS[name](lib)] * x[KEYS[name](lib)], _x(), gradgrad=True)
    (_, we), (_, wt) = (_warned(lambda lib=lib: lib.tensor(_x())[KEYS[name](lib)]) for lib in (ember, torch))
    assert we == wt


@pytest.mark.parametrize("name", sorted(KEYS))
@pytest.mark.parametrize("grad", [False, True])
def test_set(name, grad):
    """x[key] = v on a non-leaf (and without a graph): the written values and the gradients to x and v."""
    def fn(lib, x, v):
        y = x * 1
        k = KEYS[name](lib)
        y[k] = v.expand(y[k].shape) if y[k].ndim else v.sum()
        return y
    region = torch.zeros(SHAPE)[KEYS[name](torch)].shape
    v = np.random.default_rng(1).standard_normal(region[-1:] if region else ())
    if grad:
        check(fn, _x(), v)
    else:
        check(fn, _x(), v, grad=False)


@pytest.mark.parametrize("name", ["list-of-lists", "two-tensors", "slice-and-list", "bools", "floats"])
def test_set_scalar_warns_as_torch(name):
    outs = []
    for lib in (ember, torch):
        x = lib.zeros(SHAPE)
        _, w = _warned(lambda: x.__setitem__(KEYS[name](lib), 1.0))
        outs.append((x, w))
    assert_close(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda lib: lib.zeros(SHAPE)[ERRORS[name](lib)])
        same_error(lambda lib: lib.zeros(SHAPE).__setitem__(ERRORS[name](lib), 1.0))


def test_warning_points_at_the_callers_line():
    x = ember.zeros(SHAPE)
    for op in (lambda: x[[[0, 1], [1, 2]]], lambda: x.__setitem__([[0, 1], [1, 2]], 1.0)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            op()
        assert w[0].filename == __file__
