"""Sparse COO tensors against torch: construction, the printed form, coalescing, conversions, torch.sparse
functions, values and gradients (to the values, to dense operands, and a sparse leaf's sparse gradient)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_close, ember, torch, same_outcome

I = [[0, 1, 1, 0], [2, 0, 2, 2]]
V = [3.0, 4.0, 5.0, 1.0]
RNG = np.random.default_rng(0)
DENSE = RNG.standard_normal((3, 4)).astype(np.float32)


def _s(lib, values=V, dtype=None, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's once-per-process invariant-check notice (tested below)
        vals = values if isinstance(values, lib.Tensor) else lib.tensor(values, dtype=dtype)
        return lib.sparse_coo_tensor(lib.tensor(I), vals, (2, 3), **kw)


CALLS = """
repr(s)
repr(s.coalesce())
(s.is_sparse, str(s.layout), s.is_coalesced(), s._nnz(), s.sparse_dim(), s.dense_dim(), list(s.shape), str(s.dtype))
s.coalesce().indices().tolist(), s.coalesce().values().tolist(), s.coalesce().is_coalesced()
s._indices().tolist(), s._values().tolist()
s.indices()
s.values()
s.to_dense().tolist()
repr(torch.tensor([[0., 1.], [2., 0.]]).to_sparse())
repr(torch.tensor([[0., 1.], [0., 0.]]).to_sparse(1))
repr(torch.zeros(2, 2).to_sparse())
repr(s * 2), repr(2 * s), repr(s / 2), repr(-s)
repr(s + _s(torch, [1.0, 1.0, 1.0, 1.0])), (s + torch.ones(2, 3).to_sparse()).to_dense().tolist()
s + 1
s - torch.ones(2, 3)
(torch.ones(2, 3) + s).tolist()
(s @ torch.ones(3, 2)).tolist(), (torch.ones(1, 2) @ s).tolist()
s.sum().item(), torch.sparse.sum(s).item()
repr(torch.sparse.sum(s, dim=0)), repr(torch.sparse.sum(s, dim=1))
torch.sparse.sum(s, dim=(0, 1)).item()
repr(s.t())
repr(s.clone()), repr(s.detach()), repr(s.double())
repr(_s(torch, dtype=torch.float64))
repr(_s(torch, requires_grad=True))
s.numpy()
[round(x, 5) for x in torch.sparse.softmax(s.coalesce(), 1).to_dense().flatten().tolist()]
[round(x, 5) for x in torch.sparse.log_softmax(s.coalesce(), 0).to_dense().flatten().tolist()]
repr(torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(2, 3), (2, 3)))
list(torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V)).shape)
torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V[:3]), (2, 3))
torch.sparse_coo_tensor(torch.tensor([0, 1]), torch.tensor([1.0, 2.0]), (2,))
torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V), (1, 3), check_invariants=True)
torch.sparse.addmm(torch.ones(2, 2), s, torch.ones(3, 2), beta=0.5, alpha=2.0).tolist()
torch.spmm(s, torch.ones(3, 2)).tolist(), torch.spmm(torch.ones(1, 2), s).tolist()
torch.spmm(torch.ones(2, 2), torch.arange(6.0).reshape(2, 3)).tolist()
torch.spmm(torch.ones(3), torch.ones(3, 2))
torch.spmm(torch.ones(2, 3), torch.ones(2, 3))
torch.is_tensor(s), isinstance(s, torch.Tensor), torch.ones(2).is_sparse
torch.ones(2, 3).indices()
torch.ones(2, 3).values()
torch.ones(2, 3).coalesce()
torch.ones(2, 3).is_coalesced()
torch.ones(2, 3, 4).sparse_dim(), torch.ones(2, 3, 4).dense_dim(), torch.ones(()).dense_dim()
repr(torch.tensor([[0., 1.], [2., 0.]]).to_sparse_coo())
repr(s.to_sparse_coo()), s.to_sparse_coo().sparse_dim()
repr(torch.tensor(1.5).to_sparse()), repr(torch.tensor(0.0).to_sparse()), torch.tensor(2.0).to_sparse().to_dense().item()
torch.ones(2, 3).to_sparse(0)
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_sparse_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "s": _s(lib), "_s": _s}))


def test_invariant_warning_once() -> None:
    ember.sparse._warned_invariants[0] = False
    with pytest.warns(UserWarning, match="Sparse invariant checks are implicitly disabled"):
        ember.sparse_coo_tensor(ember.tensor(I), ember.tensor(V), (2, 3))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.sparse_coo_tensor(ember.tensor(I), ember.tensor(V), (2, 3))
        ember.sparse_coo_tensor(ember.tensor(I), ember.tensor(V), (2, 3), check_invariants=False)


@pytest.mark.parametrize("how", ["sparse.mm", "matmul", "mm", "spmm", "to_dense", "coalesce"])
def test_gradients_reach_values_and_dense_operand(how: str) -> None:
    grads = {}
    for lib in (ember, torch):
        values = lib.tensor(V, requires_grad=True)
        dense = lib.tensor(DENSE, requires_grad=True)
        s = _s(lib, values)
        out = {"sparse.mm": lambda: lib.sparse.mm(s, dense), "matmul": lambda: s @ dense,
               "mm": lambda: lib.mm(s, dense), "spmm": lambda: lib.spmm(s, dense), "to_dense": lambda: s.to_dense() * 3,
               "coalesce": lambda: lib.sparse.mm(s.coalesce(), dense)}[how]()
        (out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))).sum().backward()
        grads[lib] = (out, values.grad, dense.grad if how != "to_dense" else None)
        assert values.grad is not None
    for e, t in zip(grads[ember], grads[torch]):
        assert_close(e, t, check_dtype=False)


def test_sparse_leaf_gradients() -> None:
    """torch.sparse.mm gives a sparse leaf a sparse gradient at its stored positions; @ gives a dense one."""
    for how in ("sparse.mm", "matmul"):
        got = {}
        for lib in (ember, torch):
            leaf = _s(lib).coalesce().requires_grad_()
            dense = lib.tensor(DENSE)
            out = lib.sparse.mm(leaf, dense) if how == "sparse.mm" else leaf @ dense
            out.sum().backward()
            g = leaf.grad
            got[lib] = (g.is_sparse, g.to_dense() if g.is_sparse else g)
        assert got[ember][0] == got[torch][0]
        assert_close(got[ember][1], got[torch][1])


def test_hybrid_and_to_sparse_round_trip() -> None:
    x = RNG.standard_normal((4, 3)) * (RNG.random((4, 3)) > 0.5)
    for sd in (1, 2):
        e, t = ember.tensor(x).to_sparse(sd), torch.tensor(x).to_sparse(sd)
        assert e._indices().tolist() == t._indices().tolist()
        assert_close(e._values(), t._values())
        assert_close(e.to_dense(), t.to_dense())


# ---------------------------------------------------------------- arguments torch's sparse functions take
def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return type(e).__name__, str(e).split(". ")[0]
    if hasattr(r, "layout"):
        return str(r.layout), (r.to_dense() if r.is_sparse else r).tolist()
    return r


def _argument_cases(lib) -> dict:
    s = lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    d = lib.tensor([[1.0, 0.0], [2.0, 3.0]])
    cases = {f"clone {f}": lambda f=f: s.clone(memory_format=getattr(lib, f))
             for f in ("preserve_format", "contiguous_format", "channels_last")}
    cases.update({
        "to_sparse strided": lambda: d.to_sparse(layout=lib.strided),
        "to_sparse coo": lambda: d.to_sparse(layout=lib.sparse_coo),
        "to_sparse blocksize": lambda: d.to_sparse(blocksize=(1, 1)),
        "to_sparse dense_dim": lambda: d.to_sparse(dense_dim=1)._indices().tolist(),
        "to_sparse dense_dim 3": lambda: d.to_sparse(dense_dim=3),
        "to_sparse sparse_dim 3": lambda: d.to_sparse(3),
        "to_sparse sparse_dim and layout": lambda: d.to_sparse(1, layout=lib.sparse_coo),
        "sparse to strided": lambda: s.to_sparse(layout=lib.strided),
        "sparse to_sparse 1": lambda: s.to_sparse(1),
        "sparse to_sparse blocksize": lambda: s.to_sparse(blocksize=(1, 1)),
        "sparse to_sparse dense_dim": lambda: s.to_sparse(dense_dim=1),
        "mm reduce": lambda: lib.sparse.mm(s, lib.ones(2, 2), "sum"),
        "mm reduce keyword": lambda: lib.sparse.mm(s, lib.ones(2, 2), reduce="amax"),
        "mm reduce None": lambda: lib.sparse.mm(s, lib.ones(2, 2), None),
        "mm dense reduce": lambda: lib.sparse.mm(d, lib.ones(2, 2), "sum"),
        "mm": lambda: lib.sparse.mm(s, lib.ones(2, 2)),
        "pin_memory": lambda: lib.sparse_coo_tensor(lib.tensor([[0]]), lib.tensor([1.0]), (2,), pin_memory=True),
    })
    for masked in (None, True, False):
        def grad(masked=masked):
            x = lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse().requires_grad_()
            (x.to_dense(masked_grad=masked) * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
            return x.grad
        cases[f"to_dense masked_grad={masked}"] = grad
    return cases


def test_sparse_arguments_as_torch():
    """clone's memory_format, to_sparse's layout/blocksize/dense_dim, sparse.mm's reduce, pin_memory and
    to_dense's masked_grad: torch's results or torch's errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = {k: _outcome(f) for k, f in _argument_cases(ember).items()}
        theirs = {k: _outcome(f) for k, f in _argument_cases(torch).items()}
    assert mine == theirs
