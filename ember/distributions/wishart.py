"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): distributions over positive-definite matrices."""
from __future__ import annotations

import math
import warnings

from .. import _factories as _F
from .._dtype import finfo
from .._tensor import Size
from ..linalg import cholesky as _cholesky, slogdet as _slogdet
from ..ops.composites import tril_indices as _tril_indices
from ..ops.elementwise import mvlgamma as _mvlgamma
from ..ops.solve import cholesky_solve as _cholesky_solve
from ..ops.linalg import einsum as _einsum
from ..ops.shape import broadcast_shapes
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _Number, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function: sum_i digamma(x - i / 2), i < p."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - _F.arange(p, dtype=x.dtype, device=x.device).div(2).expand(x.shape + (-1,))).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """The distribution of X^T X for ``df`` rows X_i ~ N(0, Sigma), Sigma given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``; ``df`` may be real (> p - 1). ``rsample`` is the
    Bartlett decomposition, reparameterised through the Chi2 diagonal."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _Number):
            batch_shape = Size(param.shape[:-2])
            self.df = _F.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if self.df.lt(p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """Chi2(df - i) for the i-th diagonal entry of Bartlett's factor."""
        p = self._event_shape[-1]
        steps = _F.arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=self._unbroadcasted_scale_tril.device).expand(batch_shape + (-1,))
        return Chi2(df=self.df.unsqueeze(-1) - steps)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        eye = _F.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype, device=self._unbroadcasted_scale_tril.device)
        return _cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + _einsum("...i,...j->...ij", d, d))

    def _bartlett_sampling(self, sample_shape=()):
        """L A A^T L^T with A lower triangular: sqrt(Chi2(df - i)) on the diagonal, N(0, 1) below it."""
        p = self._event_shape[-1]
        noise = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = noise.clamp(min=finfo(noise.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = _tril_indices(p, p, offset=-1)
        noise[..., i, j] = _F.randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,), dtype=noise.dtype,
                                    device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett samples; a singular draw (possible for df < p) is redrawn up to ``max_try_correction`` (10)
        times."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)  # torch's name; it holds the non-singular flags at first
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def _log_scale_det(self):
        """p log(2) / 2 + log det(L)."""
        return self._event_shape[-1] * _LOG_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = _cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._log_scale_det() - _mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * _slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._log_scale_det() + _mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_slogdet(-2 * x).logabsdet + _LOG_2 * p) + _mvlgamma(y + (p + 1) / 2, p=p)
