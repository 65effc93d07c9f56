"""LogisticNormal(loc, scale): a normal vector mapped onto the simplex by stick breaking."""
from __future__ import annotations

from . import constraints
from ._families import _Transformed, _from_base
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(_Transformed, TransformedDistribution):
    """StickBreakingTransform()(X) with X ~ Normal(loc, scale): a point of the (K+1)-simplex from K normals."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    loc = _from_base("base_dist.loc")  # the base is Independent(Normal)
    scale = _from_base("base_dist.scale")
