"""StudentT(df, loc, scale)."""
from __future__ import annotations

import math

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _broadcast_params, _standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by ``scale``: X / sqrt(Z / df)
    with X standard normal and Z ~ Chi2(df), so ``rsample`` is reparameterised through the Chi2 (Gamma)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batched = {"df": 0, "loc": 0, "scale": 0, "_chi2": 0}

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        _broadcast_params(self, df=df, loc=loc, scale=scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        m = df.clone()
        finite = df > 2
        m[finite] = self.scale[finite].pow(2) * df[finite] / (df[finite] - 2)
        m[(df <= 2) & (df > 1)] = math.inf
        m[df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=()):
        X = _standard_normal(self._extended_shape(sample_shape), dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * X * (Z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - Z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log()
                + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)
