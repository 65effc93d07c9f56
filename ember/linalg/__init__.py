"""ember.linalg: the ``torch.linalg`` namespace (matrix functions, decompositions, norms)."""
from __future__ import annotations

from ..ops.decompositions import (LinAlgError, inv, solve, qr, eigh, eigvalsh, svdvals, vector_norm,
                                  matrix_norm, norm, pinv, matrix_power, multi_dot)
from ..ops.decompositions import _linalg_det as det, _linalg_slogdet as slogdet, _cholesky as cholesky, _svd as svd
from .. import _args
from ..ops.linalg import matmul, vecdot, cross as _cross

__all__ = ["LinAlgError", "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals",
           "vector_norm", "matrix_norm", "norm", "pinv", "matrix_power", "multi_dot", "matmul", "vecdot", "cross"]


def cross(input, other, *, dim: int = -1, out=None):
    """Cross product of 3-vectors along ``dim`` (default the last), broadcasting the rest."""
    return _cross(input, other, dim)


_args.install(globals(), ("cross",))
