"""ContinuousBernoulli(probs | logits): the continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham,
2019)."""
from __future__ import annotations

import math

from .. import _factories as _F
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits as _bce_logits
from ..ops.indexing import where as _where
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryParameter, _broadcast_params, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_BinaryParameter, ExponentialFamily):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1]. Near p = 1/2 (inside ``lims``) the normaliser C and the moments
    are evaluated by their Taylor expansions, since the closed forms divide 0 by 0 there."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _batched = {"probs": 0, "logits": 0, "_param": 0}

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            batch_shape = _broadcast_params(self, probs=probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            batch_shape = _broadcast_params(self, logits=logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def _outside_unstable_region(self):
        return self.probs.le(self._lims[0]) | self.probs.gt(self._lims[1])

    def _cut_probs(self):
        return _where(self._outside_unstable_region(), self.probs, self._lims[0] * _F.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p) (its Taylor series around 1/2 inside ``lims``)."""
        cut = self._cut_probs()
        below = _where(cut.le(0.5), cut, _F.zeros_like(cut))
        above = _where(cut.ge(0.5), cut, _F.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - _where(
            cut.le(0.5), (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        vs = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _where(self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=()):
        u = _F.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        return self.icdf(_F.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _where(self._outside_unstable_region(), cdfs, value)
        return _where(value.le(0.0), _F.zeros_like(value), _where(value.ge(1.0), _F.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return _where(self._outside_unstable_region(),
                      ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p()),
                      value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = x.le(self._lims[0] - 0.5) | x.gt(self._lims[1] - 0.5)
        cut = _where(outside, x, (self._lims[0] - 0.5) * _F.ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _where(outside, log_norm, taylor)
