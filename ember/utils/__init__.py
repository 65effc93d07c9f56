"""ember.utils: data loading and other utilities."""
from . import checkpoint, data, safetensors

__all__ = ["checkpoint", "data", "safetensors"]
