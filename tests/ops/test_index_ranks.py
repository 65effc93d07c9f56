"""gather and the scatter family with an index whose rank differs from self's where torch allows it: a 0-d index
on a 1-d tensor (and the reverse), an empty index of any rank; values and gradients against torch."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, torch

# (self shape, index, src shape)
CASES = {
    "0d-index-1d-self": ((5,), np.array(2), ()),
    "0d-index-0d-self": ((), np.array(0), ()),
    "1d-index-0d-self": ((), np.array([0]), (1,)),
    "0d-index-1d-src": ((1,), np.array(0), (1,)),
    "0d-index-longer-src": ((5,), np.array(3), (3,)),
    "empty-1d-index-2d-self": ((3, 4), np.zeros(0, np.int64), (2,)),
    "empty-1d-index-0d-src": ((3, 4), np.zeros(0, np.int64), ()),
    "empty-2d-index-3d-self": ((2, 3, 4), np.zeros((0, 2), np.int64), (5,)),
    "empty-columns": ((3, 4), np.zeros((2, 0), np.int64), (3, 4)),
}
OPS = {
    "gather": lambda lib, x, src, idx: x.gather(0, idx),
    "scatter_add": lambda lib, x, src, idx: x.scatter_add(0, idx, src),
    "scatter_add_": lambda lib, x, src, idx: (x * 1).scatter_add_(0, idx, src),
    "scatter": lambda lib, x, src, idx: lib.scatter(x, 0, idx, src),
    "scatter_reduce": lambda lib, x, src, idx: x.scatter_reduce(0, idx, src, "sum"),
}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_index_of_another_rank(op, case):
    """Values and gradients as torch's (where torch's engine refuses src's gradient, which has the index's shape,
    the values)."""
    shape, idx, src_shape = CASES[case]
    rng = np.random.default_rng(0)
    x, src = rng.standard_normal(shape), rng.standard_normal(src_shape)

    def fn(lib, x, src):
        return OPS[op](lib, x, src, lib.tensor(idx.astype(np.int64)))

    def with_grads(lib):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, src)]
        lib.autograd.grad(fn(lib, *xs).sum(), xs, allow_unused=True)

    try:
        with_grads(torch)
    except RuntimeError as e:  # torch's engine refuses src's gradient, of the index's shape; ember's is src's
        assert "invalid gradient at index 1" in str(e)
        check(fn, x, src, grad=False)
        return
    check(fn, x, src)
