"""Where CuPy differs from NumPy, the strict stand-in imitates it (NOTE [cupy's missing numpy] in ember/_backend.py),
so that code right on NumPy and wrong on a GPU fails here: arrays made over another's memory (``as_strided``,
``strided_view``) have no ``.base``, as CuPy's ``ndarray(memptr=...)``; full reductions and 0-d indexing give 0-d
arrays, not NumPy scalars. Each test compares the stand-in cuda device with torch on the CPU."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import _backend as B


def _pair(a: np.ndarray):
    """(ember tensor on the stand-in cuda, torch tensor), both requiring grad."""
    return (ember.tensor(a).to("cuda").requires_grad_(True), torch.tensor(a).requires_grad_(True))


def _check(e, t) -> None:
    assert e.device == ember.device("cuda", 0)
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_memory_views_have_no_base(stand_in) -> None:
    a = np.arange(12.0).view(B.StandInArray)
    v = B.as_strided(a, (3,), (32,))
    w = B.strided_view(a, (2, 2), (8, 24), 8)
    assert v.base is None and w.base is None  # as CuPy's
    assert B.same_memory(v, a) and B.same_memory(w, a) and not B.same_memory(a.copy(), a)
    assert B.address(B.storage_of(w)) == B.address(B.storage_of(a[2:])) == B.address(a)


def _diag_write(lib, x):
    t = x * 1
    t.diagonal().mul_(2)
    return t


def _as_strided_write(lib, x):
    t = x * 1
    lib.as_strided(t, (2, 2), (1, 3), 1).add_(1).mul_(3)
    return t


def _unfold_write(lib, x):
    t = x * 1
    t.reshape(-1).unfold(0, 2, 3).mul_(-2)
    return t


def _as_strided_of_view(lib, x):
    t = x * 1
    v = t[1:]  # storage offsets count from the storage's start, not v's
    return lib.as_strided(v, (3,), (3,), 4) * 1


@pytest.mark.parametrize("fn", [_diag_write, _as_strided_write, _unfold_write, _as_strided_of_view])
def test_writes_through_memory_views(stand_in, fn) -> None:
    """"diagonal then inplace" gave half of torch's gradient on the diagonal on a GPU only: CuPy's as_strided has
    no .base, so the diagonal was taken for a copy and its in-place change left its base's history."""
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    e, t = _pair(a)
    oe, ot = fn(ember, e), fn(torch, t)
    _check(oe, ot)
    up = np.random.default_rng(1).standard_normal(tuple(ot.shape)).astype(np.float32)
    ge, = ember.autograd.grad(oe, e, ember.tensor(up).to("cuda"))
    gt, = torch.autograd.grad(ot, t, torch.tensor(up))
    _check(ge, gt)


@pytest.mark.parametrize("shape", [(), (2,)])
def test_gradient_accumulated_into_a_view_stays_on_the_device(stand_in, shape) -> None:
    """A ``.grad`` that is a view of another tensor is summed out of place; the sum (a 0-d array for a 0-d
    parameter) stays on the parameter's device (np.asarray moved it to the host, and raises on CuPy arrays)."""
    a = np.arange(1.0, 3.0 + len(shape), dtype=np.float32)
    p, pt = _pair(np.full(shape, 2.0, np.float32))
    p.grad = ember.tensor(a).to("cuda")[1:][0] if not shape else ember.tensor(a).to("cuda")[1:]
    pt.grad = torch.tensor(a)[1:][0] if not shape else torch.tensor(a)[1:]
    (p * 3).sum().backward()
    (pt * 3).sum().backward()
    _check(p.grad, pt.grad)
    assert type(p.grad._data) is B.StandInArray


@pytest.mark.parametrize("fn", [
    lambda x, i: x.scatter_reduce(0, i, x, "prod"),
    lambda x, i: x.scatter_add(0, i, x),
    lambda x, i: x.scatter(0, i, x),
    lambda x, i: x.index_reduce(0, i[:, 0], x, "prod"),
    lambda x, i: x.gather(0, i),
    lambda x, i: x.take_along_dim(i, 0),
    lambda x, i: x.index_select(0, i[:, 0]),
    lambda x, i: ember.nn.functional.embedding(i, x),
])
def test_scatter_index_on_another_device(stand_in, fn) -> None:
    """torch's gather, scatter and index_select kernels check the index's device: a CPU index for a cuda input is
    refused at once (the prod reduction accepted it and failed in backward with a stand-in mixing TypeError; gather
    and index_select ran on the host)."""
    x = ember.ones(3, 2).to("cuda").requires_grad_(True)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cuda:0 and cpu!"):
        fn(x, ember.tensor([[0, 1], [2, 0], [1, 1]]))
    fn(x, ember.tensor([[0, 1], [2, 0], [1, 1]]).to("cuda"))
