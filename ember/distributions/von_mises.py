"""VonMises(loc, concentration): the circular normal distribution."""
from __future__ import annotations

import math

from .. import _factories as _F
from .._dtype import bool as _bool, float64
from ..autograd.grad_mode import no_grad
from ..ops.indexing import where as _where
from ..special import i0e as _i0e, i1e as _i1e
from . import constraints
from ._families import _CentredAtLoc
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x >= 0 (order 0 or 1), from the exponentially scaled Bessel functions.

    torch evaluates Abramowitz & Stegun's polynomial approximations here (relative error up to ~1e-7); these are
    exact to rounding, so ember's values may differ from torch's in the seventh digit."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    return (_i0e(x) if order == 0 else _i1e(x)).log() + x


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best & Fisher's (1979) wrapped Cauchy envelope, repeated until every element is accepted."""
    done = _F.zeros(x.shape, dtype=_bool, device=x.device)
    while not done.all():
        u1, u2, u3 = _F.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = _where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(_CentredAtLoc, Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on the circle, reported in [-pi, pi).
    Sampling is by rejection (no ``rsample``)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _batched = {"loc": 0, "concentration": 0}

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return _where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))  # Taylor form for tiny kappa

    def sample(self, sample_shape=()):
        with no_grad():
            x = _F.empty(self._extended_shape(sample_shape), dtype=self._loc.dtype, device=self._loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    @lazy_property
    def variance(self):
        """1 - I1(kappa) / I0(kappa) (the circular variance)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
