"""The integer-valued and counting functions of ops/statistics.py, sorting.py and composites.py (no gradients:
values, dtypes, errors vs torch), and what the op table cannot express."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, check, compare, ember, same_error, torch


@pytest.mark.parametrize("args", [(3, 3), (4, 2), (2, 5, 1), (3, 4, -1), (0, 3), (4, 4, -5)])
def test_tril_triu_indices(args) -> None:
    compare(lambda lib: lib.tril_indices(*args))
    compare(lambda lib: lib.triu_indices(*args))
    compare(lambda lib: lib.tril_indices(*args, dtype=lib.int32))


def test_isin_bincount_histc_histogram() -> None:
    a = np.array([[1, 5, 2], [7, 2, 0]])
    compare(lambda lib: lib.isin(lib.tensor(a), lib.tensor([2, 7])))
    compare(lambda lib: lib.isin(lib.tensor(a), 2, invert=True))
    compare(lambda lib: lib.isin(3, lib.tensor(a)))
    compare(lambda lib: lib.bincount(lib.tensor([1, 1, 3, 0])))
    compare(lambda lib: lib.bincount(lib.tensor([1, 1, 3]), minlength=6))
    for dt in ("float32", "float64", "int64"):
        compare(lambda lib: lib.bincount(lib.tensor([1, 1, 3]), lib.tensor([0.5, 1.0, 2.0]).to(getattr(lib, dt))))
    x = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    compare(lambda lib: lib.histc(lib.tensor(x), bins=7))
    compare(lambda lib: lib.histc(lib.tensor(x).double(), bins=4, min=-1, max=1))
    compare(lambda lib: tuple(lib.histogram(lib.tensor(x), bins=5)))
    compare(lambda lib: tuple(lib.histogram(lib.tensor(x), bins=4, range=(-2.0, 2.0), density=True)))
    compare(lambda lib: tuple(lib.histogram(lib.tensor(x), lib.tensor([-1.0, 0.0, 0.5, 3.0]),
                                          weight=lib.tensor(np.abs(x)))))
    same_error(lambda lib: lib.bincount(lib.tensor([-1, 2])))
    same_error(lambda lib: lib.bincount(lib.tensor([[1, 2]])))
    same_error(lambda lib: lib.histc(lib.tensor([1.0]), bins=0), match_words=["bins must be > 0"])


def test_unique_consecutive_and_unravel_index() -> None:
    a = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    compare(lambda lib: lib.unique_consecutive(lib.tensor(a)))
    compare(lambda lib: lib.unique_consecutive(lib.tensor(a), return_inverse=True, return_counts=True))
    m = np.array([[1, 2], [1, 2], [3, 4], [1, 2]])
    compare(lambda lib: lib.tensor(m).unique_consecutive(dim=0, return_counts=True))
    compare(lambda lib: lib.unravel_index(lib.tensor([4, 1, 11, -1]), (3, 4)))
    compare(lambda lib: lib.unravel_index(lib.tensor(5), (2, 3)))
    compare(lambda lib: lib.unravel_index(lib.tensor([12, -13]), (3, 4)))  # torch wraps
    same_error(lambda lib: lib.unravel_index(lib.tensor([1.0]), (3, 4)))


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows(name: str) -> None:
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            compare(lambda lib: getattr(lib, name)(n, periodic))
            compare(lambda lib: getattr(lib, name)(n, periodic, dtype=lib.float64))
    same_error(lambda lib: getattr(lib, name)(4, dtype=lib.int64), match_words=["floating point"])


def test_window_options() -> None:
    compare(lambda lib: lib.hamming_window(9, False, alpha=0.6, beta=0.4, dtype=lib.float64))
    compare(lambda lib: lib.kaiser_window(9, True, 5.0, dtype=lib.float64))


def test_as_strided_scatter_gradient_is_the_mask_of_kept_positions() -> None:
    # torch 2.13's own gradient for ``input`` is inverted (see op_db); the correct one is derived here
    x = ember.zeros(3, 3, dtype=ember.float64, requires_grad=True)
    src = ember.zeros(2, 2, dtype=ember.float64, requires_grad=True)
    out = ember.as_strided_scatter(x, src, (2, 2), (1, 2), 1)
    gx, gs = ember.autograd.grad(out.sum(), [x, src])
    written = np.zeros(9, bool)
    written[[1, 2, 3, 4]] = True
    assert gx.numpy().reshape(-1).tolist() == (~written).astype(float).tolist()
    assert gs.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert_close(out.detach(), torch.as_strided_scatter(torch.zeros(3, 3, dtype=torch.float64),
                                                        torch.zeros(2, 2, dtype=torch.float64), (2, 2), (1, 2), 1))


def test_errors() -> None:
    same_error(lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5))
    same_error(lambda lib: lib.quantile(lib.tensor([1.0, 2.0]), 1.5))
    same_error(lambda lib: lib.quantile(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -0.5])))
    same_error(lambda lib: lib.quantile(lib.tensor([1.0, 2.0]), 0.5, interpolation="foo"))
    same_error(lambda lib: lib.diff(lib.tensor(1.0)))
    same_error(lambda lib: lib.cov(lib.zeros(2, 2, 2)))
    same_error(lambda lib: lib.combinations(lib.zeros(2, 2)))
    same_error(lambda lib: lib.block_diag(lib.zeros(2, 2, 2)))
    same_error(lambda lib: lib.cdist(lib.zeros(3), lib.zeros(3, 3)))
    same_error(lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(3, 4)), match_words=["same number of columns"])
    same_error(lambda lib: lib.pdist(lib.zeros(3)))
    same_error(lambda lib: lib.matrix_exp(lib.zeros(2, 3)), match_words=["square"])
    same_error(lambda lib: lib.zeros(3).fill_diagonal_(1.0))
    same_error(lambda lib: lib.zeros(2, 3, 2).fill_diagonal_(1.0))
    same_error(lambda lib: lib.index_reduce(lib.zeros(3), 0, lib.tensor([0]), lib.ones(1), "sum"))
    same_error(lambda lib: lib.put(lib.zeros(3), lib.tensor([3]), lib.ones(1)), match_words=["out of range"])
    same_error(lambda lib: lib.aminmax(lib.zeros(0)))


def test_mode_nanmedian_on_one_dimension_and_scalars() -> None:
    for a in (np.array([3.0, 1, 3, 1, 2]), np.array(2.5)):
        compare(lambda lib: tuple(lib.mode(lib.tensor(a))))
    compare(lambda lib: lib.nanmedian(lib.tensor([np.nan, 1.0, 3.0, 2.0])))
    compare(lambda lib: lib.nanmedian(lib.tensor([np.nan, np.nan])))


def test_matrix_exp_of_commuting_and_large_matrices() -> None:
    d = np.diag([1.0, -2.0, 30.0])
    compare(lambda lib: lib.matrix_exp(lib.tensor(d)))
    rot = np.array([[0.0, -2.0], [2.0, 0.0]])
    compare(lambda lib: lib.matrix_exp(lib.tensor(rot)))
    check(lambda lib, a: lib.matrix_exp(a * 10), np.random.default_rng(1).standard_normal((3, 3)) / 3,
          gradgrad=False, rtol=1e-6)
