"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""
from __future__ import annotations

import math

from .. import _factories as _F
from .._tensor import Size
from ..linalg import cholesky as _cholesky, solve_triangular as _solve_triangular
from ..ops.solve import cholesky_inverse as _cholesky_inverse
from ..ops.shape import broadcast_shapes
from . import constraints
from ._families import _CentredAtLoc
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """|L^-1 x|^2 for a lower triangular L (a batch of them broadcasting against x's batch dims)."""
    n = bx.size(-1)
    if bL.dim() == 2:  # one L: solve for every vector at once, as columns
        columns = _solve_triangular(bL, bx.reshape(-1, n).mT, upper=False)
        return columns.pow(2).sum(-2).reshape(bx.shape[:-1])
    return _solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, without inverting P: with J the reversal permutation, chol(J P J) = J U J
    for P = U^T U (U upper), so L = U^-1 is a triangular solve."""
    Lf = _cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    return _solve_triangular(L_inv, _F.eye(P.shape[-1], dtype=P.dtype, device=P.device), upper=False)


class MultivariateNormal(_CentredAtLoc, Distribution):
    """The Gaussian with mean vector ``loc`` and a positive-definite covariance, given as exactly one of
    ``covariance_matrix``, ``precision_matrix`` or its lower Cholesky factor ``scale_tril``. Batch dims of the
    mean and the matrix broadcast; the factor is kept unbroadcast (``_unbroadcasted_scale_tril``)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _batched = {"loc": 1, "covariance_matrix": 2, "scale_tril": 2, "precision_matrix": 2}

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name}{' matrix' if name == 'scale_tril' else ''} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def _matrix_shape(self) -> Size:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        eps = _standard_normal(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
