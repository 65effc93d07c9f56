"""ember.utils: data loading and other utilities."""
from . import data, dlpack

__all__ = ["data", "dlpack"]
