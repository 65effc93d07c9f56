"""Linear algebra beyond the op table: torch's errors, LinAlgError, torch's vector-RHS rule of solve,
sign-invariant checks of eigh/svd/qr on random batched shapes, second derivatives, einsum fuzzing."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import check, ember, same_error, torch

F32, F64 = np.float32, np.float64


def _t(lib, a):
    return lib.tensor(np.asarray(a))


def _wellcond(rng, shape, dtype=F64):
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def _spd(rng, shape, dtype=F64):
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) / shape[-1] + np.eye(shape[-1])).astype(dtype)


SING = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], F32)
ERRORS = {
    "inv singular": lambda lib: lib.linalg.inv(_t(lib, [[1.0, 2.0], [2.0, 4.0]])),
    "inv singular batched": lambda lib: lib.linalg.inv(_t(lib, np.stack([np.eye(3), np.zeros((3, 3))]))),
    "inv singular 3x3": lambda lib: lib.linalg.inv(_t(lib, SING)),
    "inverse singular": lambda lib: lib.inverse(_t(lib, np.zeros((2, 2), F32))),
    "inv non-square": lambda lib: lib.linalg.inv(_t(lib, np.ones((2, 3), F32))),
    "inv 1-d": lambda lib: lib.linalg.inv(_t(lib, np.ones(3, F32))),
    "inv int": lambda lib: lib.linalg.inv(_t(lib, np.eye(3, dtype=np.int64))),
    "det non-square": lambda lib: lib.linalg.det(_t(lib, np.ones((2, 3), F32))),
    "slogdet non-square": lambda lib: lib.linalg.slogdet(_t(lib, np.ones((3, 2), F32))),
    "cholesky not PD": lambda lib: lib.linalg.cholesky(_t(lib, np.diag([1.0, -1.0, 2.0]))),
    "cholesky not PD order 1": lambda lib: lib.linalg.cholesky(_t(lib, -np.eye(3))),
    "cholesky batched": lambda lib: lib.linalg.cholesky(_t(lib, np.stack([np.eye(2), -np.eye(2)]))),
    "cholesky non-square": lambda lib: lib.linalg.cholesky(_t(lib, np.ones((2, 3), F32))),
    "solve singular": lambda lib: lib.linalg.solve(_t(lib, np.ones((3, 3))), _t(lib, np.ones(3))),
    "solve shapes": lambda lib: lib.linalg.solve(_t(lib, np.eye(3)), _t(lib, np.ones(4))),
    "solve batch mismatch": lambda lib: lib.linalg.solve(_t(lib, np.ones((2, 3, 3))), _t(lib, np.ones((3, 3, 1)))),
    "solve dtypes": lambda lib: lib.linalg.solve(_t(lib, np.eye(3, dtype=F32)), _t(lib, np.ones(3))),
    "eigh non-square": lambda lib: lib.linalg.eigh(_t(lib, np.ones((2, 3)))),
    "eigh UPLO": lambda lib: lib.linalg.eigh(_t(lib, np.eye(2)), UPLO="X"),
    "svd 1-d": lambda lib: lib.linalg.svd(_t(lib, np.ones(3))),
    "qr mode": lambda lib: lib.linalg.qr(_t(lib, np.eye(3)), mode="x"),
    "matrix_norm ord": lambda lib: lib.linalg.matrix_norm(_t(lib, np.eye(3)), 3),
    "norm 3-d with ord": lambda lib: lib.linalg.norm(_t(lib, np.ones((2, 2, 2))), 2),
    "matrix_power non-square": lambda lib: lib.linalg.matrix_power(_t(lib, np.ones((2, 3))), 2),
    "multi_dot one": lambda lib: lib.linalg.multi_dot([_t(lib, np.eye(3))]),
    "mv size": lambda lib: lib.mv(_t(lib, np.ones((3, 3))), _t(lib, np.ones(4))),
    "mv rank": lambda lib: lib.mv(_t(lib, np.ones((3, 3))), _t(lib, np.ones((3, 3)))),
    "dot rank": lambda lib: lib.dot(_t(lib, np.ones((3, 3))), _t(lib, np.ones((3, 3)))),
    "dot sizes": lambda lib: lib.dot(_t(lib, np.ones(3)), _t(lib, np.ones(4))),
    "dot dtypes": lambda lib: lib.dot(_t(lib, np.ones(3, F32)), _t(lib, np.ones(3))),
    "addmm shapes": lambda lib: lib.addmm(_t(lib, np.ones((3, 3))), _t(lib, np.ones((3, 3))), _t(lib, np.ones((4, 3)))),
    "addmm self shape": lambda lib: lib.addmm(_t(lib, np.ones(2)), _t(lib, np.ones((3, 3))), _t(lib, np.ones((3, 3)))),
    "bmm batch": lambda lib: lib.baddbmm(_t(lib, np.ones((2, 3, 3))), _t(lib, np.ones((2, 3, 4))),
                                         _t(lib, np.ones((3, 4, 3)))),
    "einsum few operands": lambda lib: lib.einsum("ij,jk", _t(lib, np.ones((3, 3)))),
    "einsum sizes": lambda lib: lib.einsum("ij,jk->ik", _t(lib, np.ones((3, 3))), _t(lib, np.ones((4, 2)))),
    "tensordot sizes": lambda lib: lib.tensordot(_t(lib, np.ones((3, 3))), _t(lib, np.ones((4, 2))), 1),
    "einsum dtypes": lambda lib: lib.einsum("i,i", _t(lib, np.ones(3, F32)), _t(lib, np.ones(3))),
    "einsum repeated output": lambda lib: lib.einsum("ij->ii", _t(lib, np.ones((3, 3)))),
    "einsum unknown output": lambda lib: lib.einsum("ij->k", _t(lib, np.ones((3, 3)))),
    "addmm dtypes": lambda lib: lib.addmm(_t(lib, np.ones((2, 2))), _t(lib, np.ones((2, 3), F32)),
                                          _t(lib, np.ones((3, 2)))),
    "addmm self dtype": lambda lib: lib.addmm(_t(lib, np.ones((2, 2), F32)), _t(lib, np.ones((2, 3))),
                                              _t(lib, np.ones((3, 2)))),
    "addmv dtypes": lambda lib: lib.addmv(_t(lib, np.ones(2, F32)), _t(lib, np.ones((2, 3), F32)), _t(lib, np.ones(3))),
    "multi_dot shapes": lambda lib: lib.linalg.multi_dot([_t(lib, np.ones((2, 3))), _t(lib, np.ones((4, 2)))]),
    "norm 1-d with str ord": lambda lib: lib.linalg.norm(_t(lib, np.ones(3)), "fro"),
    "vector_norm int": lambda lib: lib.linalg.vector_norm(_t(lib, np.arange(3))),
    "inv half": lambda lib: lib.linalg.inv(_t(lib, np.eye(2, dtype=np.float16))),
    "slogdet half": lambda lib: lib.linalg.slogdet(_t(lib, np.eye(2, dtype=np.float16))),
    "det half": lambda lib: lib.linalg.det(_t(lib, np.eye(2, dtype=np.float16))),
    "svd half": lambda lib: lib.linalg.svd(_t(lib, np.eye(2, dtype=np.float16))),
    "qr half": lambda lib: lib.linalg.qr(_t(lib, np.eye(2, dtype=np.float16))),
    "cholesky half": lambda lib: lib.linalg.cholesky(_t(lib, np.eye(2, dtype=np.float16))),
    "eigh int": lambda lib: lib.linalg.eigh(_t(lib, np.eye(2, dtype=np.int64))),
    "det int": lambda lib: lib.linalg.det(_t(lib, np.eye(2, dtype=np.int64))),
    "matrix_norm int": lambda lib: lib.linalg.matrix_norm(_t(lib, np.eye(2, dtype=np.int64))),
    "cross length": lambda lib: lib.linalg.cross(_t(lib, np.ones((2, 4))), _t(lib, np.ones((2, 4)))),
    "eig 1-d": lambda lib: lib.linalg.eig(_t(lib, np.ones(3))),
    "eig non-square": lambda lib: lib.linalg.eig(_t(lib, np.ones((2, 3)))),
    "eigvals non-square": lambda lib: lib.linalg.eigvals(_t(lib, np.ones((2, 3)))),
    "eig int": lambda lib: lib.linalg.eig(_t(lib, np.eye(2, dtype=np.int64))),
    "eigvals bool": lambda lib: lib.linalg.eigvals(_t(lib, np.eye(2, dtype=bool))),
    "eig half": lambda lib: lib.linalg.eig(_t(lib, np.eye(2, dtype=np.float16))),
    "eig nan": lambda lib: lib.linalg.eig(_t(lib, np.diag([np.nan, 1.0]))),
    "eigvals inf with grad": lambda lib: lib.linalg.eigvals(_t(lib, np.diag([np.inf, 1.0])).requires_grad_()),
    "eig phase-dependent loss": lambda lib: lib.linalg.eig(
        _t(lib, [[0.0, -1.0], [1.0, 0.0]]).requires_grad_())[1].sum().real.backward(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_error(ERRORS[name])


def test_linalg_error_is_a_runtime_error_with_torch_message() -> None:
    with pytest.raises(ember.linalg.LinAlgError) as e:
        ember.linalg.inv(ember.tensor(SING))
    assert isinstance(e.value, RuntimeError)
    t = pytest.raises(torch.linalg.LinAlgError, torch.linalg.inv, torch.tensor(SING)).value
    assert str(e.value) == str(t)
    e = pytest.raises(ember.linalg.LinAlgError, ember.linalg.cholesky, ember.tensor(np.diag([1.0, -1.0]))).value
    assert str(e) == ("linalg.cholesky: The factorization could not be completed because the input is not "
                      "positive-definite (the leading minor of order 2 is not positive-definite).")


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3,)),
                                             ((2, 3, 3), (3, 1)), ((2, 3, 3), (2, 3, 1)), ((1, 3, 3), (4, 3, 2)),
                                             ((3, 3), (3, 3)), ((2, 2, 2), (2, 2))])
def test_solve_vector_rhs_rule(a_shape, b_shape) -> None:
    rng = np.random.default_rng(1)
    check(lambda lib, a, b: lib.linalg.solve(a, b), _wellcond(rng, a_shape), rng.standard_normal(b_shape),
          gradgrad=True)


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 4), seed=st.integers(0, 2 ** 16),
       dtype=st.sampled_from([F32, F64]))
def test_square_functions_random_batches(batch, n, seed, dtype) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(batch) + (n, n)
    # float32 second derivatives of inv/det sum terms of size ~1e2: absolute rounding ~1e-2 (seed 65535, n=4)
    tol = dict(rtol=3e-3, atol=3e-2) if dtype == F32 else {}
    a, p = _wellcond(rng, shape, dtype), _spd(rng, shape, dtype)
    check(lambda lib, x: (lib.linalg.inv(x), lib.linalg.det(x), lib.linalg.slogdet(x)[1]), a, gradgrad=True, **tol)
    check(lambda lib, x: lib.linalg.cholesky(x), p, gradgrad=True, **tol)
    check(lambda lib, x: (lib.linalg.eigvalsh(x), lib.logdet(x)), p, gradgrad=True, **tol)


def _qr_inv(lib, q, r):
    """Sign-invariant functions of Q, R: the product and the projector Q Q^T."""
    return q @ r, q @ q.mT, r.abs()


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 5), n=st.integers(1, 5),
       seed=st.integers(0, 2 ** 16))
def test_qr_svd_random_shapes(batch, m, n, seed) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(tuple(batch) + (m, n))
    check(lambda lib, x: _qr_inv(lib, *lib.linalg.qr(x)), a, gradgrad=True, rtol=1e-6, atol=1e-8)
    check(lambda lib, x: _svd_inv(lib.linalg.svd(x, full_matrices=False)), a, gradgrad=True, rtol=1e-6, atol=1e-8)


def _svd_inv(res):
    u, s, vh = res
    k = s.shape[-1]
    return s, (u * s.unsqueeze(-2)) @ vh, u[..., :1] * vh[..., :1, :] if k else s


def test_eigh_projectors_and_reconstruction_float32() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 4)).astype(F32)
    a = x + np.swapaxes(x, -1, -2)

    def f(lib, m):
        w, v = lib.linalg.eigh(m)
        return w, v[..., :, :1] @ v[..., :, :1].mT, (v * w.unsqueeze(-2)) @ v.mT

    eo, _ = check(f, a, gradgrad=True, rtol=2e-3, atol=2e-4)
    assert eo[0].dtype == ember.float32


def test_float32_stays_float32() -> None:
    a = ember.tensor(_wellcond(np.random.default_rng(0), (3, 3), F32))
    for out in (ember.linalg.inv(a), ember.linalg.det(a), ember.linalg.svdvals(a), ember.linalg.qr(a).R,
                ember.linalg.solve(a, a[0]), ember.einsum("ij,jk", a, a), ember.linalg.matrix_norm(a, "nuc")):
        assert out.dtype == ember.float32


def test_qr_mode_r_backward_error_and_complete_tall() -> None:
    for lib in (ember, torch):
        a = lib.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
        q, r = lib.linalg.qr(a, mode="r")
        assert tuple(q.shape) == (0,)
        with pytest.raises(RuntimeError, match="mode='r'"):
            r.sum().backward()
        q, r = lib.linalg.qr(a, mode="complete")
        with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
            q.sum().backward()


def test_return_types_and_names() -> None:
    a = np.eye(3)
    for fname, fields in (("slogdet", ("sign", "logabsdet")), ("eigh", ("eigenvalues", "eigenvectors")),
                          ("eig", ("eigenvalues", "eigenvectors")),
                          ("qr", ("Q", "R")), ("svd", ("U", "S", "Vh"))):
        e, t = getattr(ember.linalg, fname)(ember.tensor(a)), getattr(torch.linalg, fname)(torch.tensor(a))
        assert type(e).__name__ == type(t).__name__
        for f in fields:
            assert getattr(e, f).shape == getattr(t, f).shape
    assert type(ember.svd(ember.tensor(a))).__name__ == type(torch.svd(torch.tensor(a))).__name__


_EINSUM_LETTERS = "abcd"


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_einsum_random_equations(data) -> None:
    """Random 1-3 operand equations (repeated indices, implicit/explicit outputs) to second order."""
    sizes = {c: data.draw(st.integers(1, 3)) for c in _EINSUM_LETTERS}
    nops = data.draw(st.integers(1, 3))
    subs = [data.draw(st.text(_EINSUM_LETTERS, min_size=0, max_size=3)) for _ in range(nops)]
    used = sorted(set("".join(subs)))
    explicit = data.draw(st.booleans())
    eq = ",".join(subs)
    if explicit:
        eq += "->" + "".join(data.draw(st.permutations(used))[:data.draw(st.integers(0, len(used)))])
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    arrays = [rng.standard_normal([sizes[c] for c in s_]) for s_ in subs]
    check(lambda lib, *xs: lib.einsum(eq, *xs), *arrays, gradgrad=True)


def test_einsum_ellipsis_broadcast_grads() -> None:
    rng = np.random.default_rng(0)
    check(lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b), rng.standard_normal((2, 1, 3, 4)),
          rng.standard_normal((5, 4, 2)), gradgrad=True)
    check(lambda lib, a, b: lib.einsum("b...i,b...i->b", a, b), rng.standard_normal((2, 3, 4)),
          rng.standard_normal((2, 1, 4)), gradgrad=True)


def test_addmm_is_linear_layer_node() -> None:
    x, w, b = (ember.randn(4, 3), ember.randn(2, 3, requires_grad=True), ember.randn(2, requires_grad=True))
    assert type(ember.addmm(b, x, w.t()).grad_fn).__name__ == "AddmmBackward0"


@pytest.mark.parametrize("dtype", [F32, F64])
def test_det_gradient_at_singular_matrices(dtype) -> None:
    """torch's det gradient is the cofactor matrix, which stays finite where A is singular."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 2))
    a = (x @ rng.standard_normal((2, 2, 4))).astype(dtype)  # rank 2 of 4
    b = np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -1.0, 2.0]], dtype)  # rank 2 of 3
    tol = dict(rtol=2e-3, atol=1e-4) if dtype == F32 else dict(rtol=1e-6, atol=1e-8)
    check(lambda lib, m: lib.linalg.det(m), b, gradgrad=True, **tol)
    check(lambda lib, m: lib.linalg.det(m), a, gradgrad=False, **tol)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.geqrf(lib.ones(3, 3, dtype=lib.float16)),
    lambda lib: lib.geqrf(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.geqrf(lib.ones(3)),
    lambda lib: lib.geqrf(lib.randn(3, 3, requires_grad=True))[0].sum().backward(),
    lambda lib: lib.linalg.householder_product(lib.randn(3, 4), lib.randn(2)),
    lambda lib: lib.linalg.householder_product(lib.randn(4, 3), lib.randn(4)),
])
def test_geqrf_householder_errors(fn):
    e, t = same_error(fn)
    assert str(e) == str(t)


@pytest.mark.parametrize("dtype", [F32, F64, np.complex64, np.complex128])
def test_eig_reconstructs_and_is_complex(dtype) -> None:
    """A V = V diag(L) with complex L and V (also for real A, and for a real spectrum), unit-norm eigenvectors; empty
    and 1 x 1 matrices."""
    rng = np.random.default_rng(5)
    for a in (rng.standard_normal((2, 4, 4)).astype(dtype), np.diag([1.0, 2.0, 3.0]).astype(dtype),
              np.ones((2, 0, 0), dtype), np.full((1, 1), 2.0, dtype)):
        w, v = ember.linalg.eig(ember.tensor(a))
        tw = torch.linalg.eigvals(torch.tensor(a))
        assert w.dtype == getattr(ember, str(tw.dtype).replace("torch.", "")) and v.dtype == w.dtype
        assert tuple(w.shape) == tuple(tw.shape)
        tol = 1e-4 if dtype in (F32, np.complex64) else 1e-10
        np.testing.assert_allclose((ember.tensor(a).to(v.dtype) @ v).numpy(), (v * w.unsqueeze(-2)).numpy(),
                                   atol=tol)
        np.testing.assert_allclose(np.linalg.norm(v.numpy(), axis=-2), 1.0, atol=tol)
        pairs = zip(w.numpy().reshape(-1, a.shape[-1]), tw.numpy().reshape(-1, a.shape[-1])) if a.size else ()
        for e_vals, t_vals in pairs:
            gaps = np.abs(e_vals[:, None] - t_vals[None, :])  # the same spectrum, in whatever order
            assert (gaps.min(0) < tol * 10).all() and (gaps.min(1) < tol * 10).all()


def test_eigvals_of_a_non_finite_matrix_without_gradient_is_nan() -> None:
    """torch hands the matrix to LAPACK (NaNs here; other inputs vary, some crash): ember's eigenvalues are NaN."""
    a = np.stack([np.diag([np.inf, 1.0]), np.eye(2) * 3])
    e, t = ember.linalg.eigvals(ember.tensor(a)).numpy(), torch.linalg.eigvals(torch.tensor(a)).numpy()
    assert np.isnan(e[0]).all() and np.isnan(t[0]).all()
    np.testing.assert_allclose(e[1], t[1])
