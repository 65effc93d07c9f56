"""ember.utils: data loading and other utilities."""
from . import data

__all__ = ["data"]
