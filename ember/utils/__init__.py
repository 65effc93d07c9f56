"""ember.utils: data loading and other utilities."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
