"""LKJCholesky(dim, concentration): Cholesky factors of correlation matrices (Lewandowski, Kurowicka & Joe, 2009)."""
from __future__ import annotations

import math

from .. import _factories as _F
from .._dtype import finfo
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import mvlgamma as _mvlgamma
from ..ops.shape import cat as _cat
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The lower Cholesky factor L of a correlation matrix whose density is proportional to
    det(L L^T)^(concentration - 1). Sampled by the onion method: row i of L is a uniform direction scaled by the
    square root of a Beta draw, its diagonal entry filling the row to unit norm."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _batched = {"concentration": 0, "_beta": 1}

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i's squared off-diagonal norm ~ Beta(i / 2, concentration + (dim - 2 - i) / 2) (row 0 takes none)
        offset = _F.arange(dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = _cat([offset.new_zeros((1,)), offset])
        marginal = self.concentration + 0.5 * (dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), (dim, dim), validate_args)

    def sample(self, sample_shape=()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = _F.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            direction = u / u.norm(dim=-1, keepdim=True)
            direction[..., 0, :].fill_(0.0)
            w = y.sqrt() * direction
            diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _F.arange(2, self.dim + 1, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized - normalizer
