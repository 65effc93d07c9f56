"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)."""
from __future__ import annotations

import math

from .. import _factories as _F
from ..linalg import cholesky as _cholesky, solve_triangular as _solve_triangular
from ..ops.shape import broadcast_tensors
from . import constraints
from ._families import _CentredAtLoc
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix I + W^T D^-1 W (m x m for a rank-m factor W)."""
    m = W.size(-1)
    K = (W.mT / D.unsqueeze(-2)) @ W
    return _cholesky(K + _F.eye(m, dtype=K.dtype, device=K.device))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma: log det(C) + log det(D)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity: x^T D^-1 x - |C^-1 W^T D^-1 x|^2 (C the capacitance
    factor)."""
    Wt_Dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(_CentredAtLoc, Distribution):
    """A Gaussian whose covariance is low rank plus diagonal, W W^T + diag(D), with W = ``cov_factor`` (n x m) and
    D = ``cov_diag``; densities cost O(n m^2) instead of O(n^3)."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _batched = {"loc": 1, "cov_diag": 1, "cov_factor": 2}

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, cov_diag "
                             f"{cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def _shape(self, *extra):
        return self._batch_shape + self._event_shape + extra

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._shape())

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2: scale D^1/2 the Cholesky factor of the middle
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        A = self._unbroadcasted_cov_factor / sqrt_d
        K = A @ A.mT + _F.eye(n, dtype=A.dtype, device=A.device)
        return (sqrt_d * _cholesky(K)).expand(self._shape(n))

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.mT + D.diag_embed()).expand(self._shape(self._event_shape[0]))

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - A^T A with A = C^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = _solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (D.reciprocal().diag_embed() - A.mT @ A).expand(self._shape(self._event_shape[0]))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps_W = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], dtype=self.loc.dtype,
                                 device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                       value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
