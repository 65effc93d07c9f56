"""HalfCauchy(scale) (defined with HalfNormal in half_normal.py)."""
from .half_normal import HalfCauchy

__all__ = ["HalfCauchy"]
