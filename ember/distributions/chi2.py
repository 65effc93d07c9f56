"""Chi2(df): the chi-squared distribution, Gamma(df / 2, 1 / 2)."""
from __future__ import annotations

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The sum of ``df`` squared standard normals (``df`` need not be an integer)."""

    arg_constraints = {"df": constraints.positive}
    _batched = Gamma._batched

    def __init__(self, df, validate_args=None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2
