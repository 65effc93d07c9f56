"""ember.utils: data loading and other utilities."""
from . import checkpoint, data, dlpack, safetensors

__all__ = ["checkpoint", "data", "dlpack", "safetensors"]
