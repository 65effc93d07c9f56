"""ember.linalg: the ``torch.linalg`` namespace (matrix functions, decompositions, norms)."""
from __future__ import annotations

from ..ops.decompositions import (LinAlgError, inv, solve, qr, eigh, eigvalsh, eig, eigvals, svdvals, vector_norm,
                                  matrix_norm, norm, pinv, matrix_power, multi_dot, householder_product)
from ..ops.decompositions import _linalg_det as det, _linalg_slogdet as slogdet, _cholesky as cholesky, _svd as svd
from .. import _args
from ..ops.linalg import matmul, vecdot, cross as _cross

__all__ = ["LinAlgError", "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "eigvalsh", "eig", "eigvals",
           "svd", "svdvals", "vector_norm", "matrix_norm", "norm", "pinv", "matrix_power", "multi_dot", "matmul",
           "vecdot", "cross", "cholesky_ex", "solve_triangular", "householder_product"]


def cross(input, other, *, dim: int = -1, out=None):
    """Cross product of 3-vectors along ``dim`` (default the last), broadcasting the rest."""
    return _cross(input, other, dim)


def cholesky_ex(input, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): the Cholesky factor and, per matrix, 0 or the order of the first leading minor that is not
    positive-definite (L is then unspecified, as in torch). ``check_errors`` raises instead."""
    import numpy as np

    from .. import _dtype as D
    from .._tensor import _wrap
    from ..return_types import linalg_cholesky_ex

    info = np.zeros(input.shape[:-2], np.int32)
    try:
        L = cholesky(input, upper=upper)
    except LinAlgError:
        if check_errors:
            raise
        a = input._data.swapaxes(-1, -2) if upper else input._data  # LAPACK reads the triangle named by ``upper``
        flat = a.reshape((-1,) + a.shape[-2:])
        factors = np.zeros_like(flat)
        for i, m in enumerate(flat):
            try:
                factors[i] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                info.reshape(-1)[i] = next(k for k in range(1, m.shape[-1] + 1)
                                           if _not_positive_definite(m[:k, :k]))
        factors = factors.reshape(a.shape)
        L = _wrap(np.ascontiguousarray(factors.swapaxes(-1, -2)) if upper else factors, input.dtype)
    return linalg_cholesky_ex(L, _wrap(info, D.int32))


def _not_positive_definite(m) -> bool:
    import numpy as np

    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return True
    return False


def solve_triangular(input, B, *, upper: bool, left: bool = True, unitriangular: bool = False, out=None):
    """X with A X = B (``left``) or X A = B, A = ``input`` triangular (its other triangle is not read); batches
    broadcast."""
    from ..ops.solve import triangular_solve

    for name, M in (("A", input), ("B", B)):
        if M.dim() < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    n, (rows, cols) = input.shape[-1], B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return triangular_solve(B.mT, input.mT, upper=not upper, unitriangular=unitriangular)[0].mT
    return triangular_solve(B, input, upper=upper, unitriangular=unitriangular)[0]


_args.install(globals(), ("cross", "cholesky_ex", "solve_triangular"))
