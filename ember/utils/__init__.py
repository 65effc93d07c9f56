"""ember.utils: data loading and other utilities."""
from .._lazy import attach

__all__ = ["checkpoint", "data", "dlpack", "safetensors", "model_zoo", "benchmark"]

# each submodule loads on first use (data pulls in multiprocessing, safetensors tempfile)
__getattr__, __dir__ = attach(__name__, {name: f".{name}" for name in (*__all__, "_pytree")})
