"""torch's factor-and-solve functions outside torch.linalg, composed from ember ops: LU with partial pivoting
(lu, lu_unpack, lu_solve: NumPy pivots, Doolittle in ember ops), triangular and Cholesky solves by substitution
(a zero pivot gives inf/nan as LAPACK does), cholesky_inverse, and the deprecated torch.qr."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import return_types as RT
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap
from ._composing import _ember
from ._op import Op

__all__ = ["triangular_solve", "cholesky_solve", "cholesky_inverse", "qr", "lu", "lu_unpack", "lu_solve"]


def _triangle(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    T = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        eye = _ember().eye(n, dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    return T


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False,
                     *, out=None):
    """(solution X of op(T) X = input, a copy of A) with T the triangle of A (torch.return_types.triangular_solve)."""
    T = _triangle(A, upper, unitriangular)
    lower = not upper
    if transpose:
        T, lower = T.mT, upper
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    coefficient = A.expand(*batch, *A.shape[-2:]).clone() if batch else A.clone()
    return RT.triangular_solve(_substitute(T, input, lower), coefficient)


def _substitute(T: Tensor, b: Tensor, lower: bool) -> Tensor:
    """X with T X = b for triangular T by forward/back substitution, one row of ember ops at a time (a zero on the
    diagonal gives inf/nan as torch's, no error)."""
    em = _ember()
    n = T.shape[-1]
    batch = np.broadcast_shapes(tuple(b.shape[:-2]), tuple(T.shape[:-2]))
    T = T.expand(*batch, n, n)
    b = b.expand(*batch, *b.shape[-2:])
    rows: list = [None] * n
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = b[..., i, :]
        done = [j for j in (range(i) if lower else range(i + 1, n))]
        if done:
            xs = em.stack([rows[j] for j in done], -2)  # (..., k, m)
            acc = acc - (T[..., i, done].unsqueeze(-2) @ xs).squeeze(-2)
        rows[i] = acc / T[..., i, i].unsqueeze(-1)
    if n == 0:
        return b * 1
    return em.stack(rows, -2)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with (L L^H) X = input for the Cholesky factor L = ``input2`` (upper: U^H U)."""
    from ..linalg import solve

    T = _factor(input2, upper)
    A = T.mH @ T if upper else T @ T.mH
    return solve(A, input)


def _factor(L: Tensor, upper: bool) -> Tensor:
    """The triangle of ``L`` as the value, ``L`` itself for the gradient (torch's derivative is dense)."""
    other = L - (L.triu() if upper else L.tril())
    return L - other.detach()


def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of L L^H (upper: U^H U) from its Cholesky factor L = ``input``."""
    from ..linalg import inv

    T = _factor(input, upper)
    return inv(T.mH @ T if upper else T @ T.mH)


def qr(input: Tensor, some: bool = True, *, out=None):
    """(Q, R) of the reduced (some=True) or complete QR decomposition (torch.return_types.qr)."""
    from ..linalg import qr as linalg_qr

    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return RT.qr(Q, R)


def _pivots(a: np.ndarray) -> np.ndarray:
    """LAPACK's 1-based row interchanges (ipiv) of partial pivoting, per matrix of a batch (..., m, n)."""
    work = np.array(a, np.complex128 if a.dtype.kind == "c" else np.float64, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    piv = np.empty(a.shape[:-2] + (k,), np.int32)
    for j in range(k):
        col = work[..., j:, j]
        col = np.abs(col.real) + np.abs(col.imag) if col.dtype.kind == "c" else np.abs(col)  # LAPACK's i?amax
        p = (np.argmax(col, axis=-1) + j) if col.shape[-1] else np.full(a.shape[:-2], j)
        piv[..., j] = p + 1
        rows_j = np.take_along_axis(work, np.full(a.shape[:-2] + (1, n), j), -2)
        rows_p = np.take_along_axis(work, p[..., None, None].repeat(n, -1), -2)
        np.put_along_axis(work, np.full(a.shape[:-2] + (1, n), j), rows_p, -2)
        np.put_along_axis(work, p[..., None, None].repeat(n, -1), rows_j, -2)
        pivot = work[..., j:j + 1, j:j + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = work[..., j + 1:, j:j + 1] / pivot
        work[..., j + 1:, :] -= factors * work[..., j:j + 1, :]
    return piv


def _permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """perm with (P^T A) = A[perm]: the row order the interchanges produce."""
    perm = np.broadcast_to(np.arange(m, like=piv), piv.shape[:-1] + (m,)).copy()
    for j in range(piv.shape[-1]):
        p = piv[..., j].astype(np.int64) - 1
        a = perm[..., j].copy()
        b = np.take_along_axis(perm, p[..., None], -1)[..., 0]
        perm[..., j] = b
        np.put_along_axis(perm, p[..., None], a[..., None], -1)
    return perm


class LuPivots(Op):
    """LAPACK's 1-based pivots of partial pivoting (int32, no gradient); any leading batch dims."""

    __slots__ = ()
    _name = "LuPivots"

    @staticmethod
    def forward(ctx, self):
        return _pivots(self)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None


class LuPermutation(Op):
    """The row order (int64) that ``m``-row pivots produce; any leading batch dims."""

    __slots__ = ()
    nattrs = 1
    _name = "LuPermutation"

    @staticmethod
    def forward(ctx, piv, m):
        return _permutation(piv, m)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None


def _rows(A: Tensor, perm: Tensor) -> Tensor:
    """``A``'s rows in the order ``perm`` (int64, leading dims as A's)."""
    return A.gather(-2, perm.unsqueeze(-1).expand(tuple(perm.shape) + (A.shape[-1],)))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """(LU, pivots[, infos]): L (unit lower, below the diagonal) and U in one matrix with P^T A = L U, pivots as
    LAPACK's 1-based interchanges. Pivots come from NumPy; L and U are computed by ember ops (Doolittle), so the
    factors are differentiable."""
    em = _ember()
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
    if not pivot:
        raise RuntimeError("LU without pivoting is not implemented on the CPU")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lu_factor: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    k = min(m, n)
    piv = LuPivots.apply(A.detach())  # ops (values read inside them), so vmap batches lu
    PA = _rows(A, LuPermutation.apply(piv, m))
    batch = tuple(A.shape[:-2])
    u_rows, l_cols = [], []
    for j in range(k):
        u = PA[..., j, j:]
        if j:
            Lj = em.stack([c[..., j] for c in l_cols], -1)  # L[j, :j]
            Uj = _u_block(u_rows, j, j)  # U[:j, j:]
            u = u - (Lj.unsqueeze(-2) @ Uj).squeeze(-2)
        u_rows.append(em.cat([em.zeros(*batch, j, dtype=A.dtype, device=A.device), u], -1) if j else u)
        below = PA[..., j + 1:, j]
        if j:
            Lb = em.stack([c[..., j + 1:] for c in l_cols], -1)  # L[j+1:, :j]
            Uc = em.stack([r[..., j] for r in u_rows[:j]], -1)  # U[:j, j]
            below = below - (Lb @ Uc.unsqueeze(-1)).squeeze(-1)
        col = below / u[..., :1]
        l_cols.append(em.cat([em.zeros(*batch, j + 1, dtype=A.dtype, device=A.device), col], -1))
    U = em.stack(u_rows, -2) if k else em.zeros(*batch, 0, n, dtype=A.dtype, device=A.device)  # (k, n)
    L = em.stack(l_cols, -1) if k else em.zeros(*batch, m, 0, dtype=A.dtype, device=A.device)  # (m, k), strictly lower
    LU = (em.cat([L, em.zeros(*batch, m, n - k, dtype=A.dtype, device=A.device)], -1) if n > k else L) + \
        (em.cat([U, em.zeros(*batch, m - k, n, dtype=A.dtype, device=A.device)], -2) if m > k else U)
    result = (LU, piv, _wrap(np.zeros(batch, np.int32, like=_B.ref(LU._data)), D.int32)) if get_infos else (LU, piv)
    return result if out is None else _args.write_out(out, result, "lu")


def _u_block(u_rows: list, j: int, start: int) -> Tensor:
    """U[:j, start:] from the rows built so far."""
    return _ember().stack([r[..., start:] for r in u_rows[:j]], -2)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *,
              out=None):
    """(P, L, U) with A = P L U from ``lu``'s packed factors (torch.return_types.lu_unpack)."""
    em = _ember()
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = LU_data.tril(-1)[..., :, :k] + em.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data.triu()[..., :k, :]
    else:
        L = U = em.zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_pivots:
        perm = LuPermutation.apply(LU_pivots, m)
        # P^T = rows perm of I: (P^T)[i, perm[i]] = 1
        P = (perm.unsqueeze(-1) == em.arange(m, device=perm.device)).to(LU_data.dtype).mT.contiguous()
    else:
        P = em.zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    return RT.lu_unpack(P, L, U)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """X with A X = input from ``lu``'s factors of A (substitution in ember ops: differentiable in input and
    LU_data)."""
    em = _ember()
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.", UserWarning,
                  stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
    n = LU_data.shape[-1]
    if LU_data.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: Expected LU to be square")
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(LU_data.shape[:-2]))
    Pb = _rows(input.expand(*batch, *input.shape[-2:]), LuPermutation.apply(LU_pivots, n).expand(batch + (n,)))
    L = LU_data.tril(-1) + em.eye(n, dtype=LU_data.dtype, device=LU_data.device)
    y = _substitute(L, Pb, True)
    return _substitute(LU_data.triu(), y, False)


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), __all__, python=("lu",))
