"""ember.compiler: torch.compiler's API over ember.compile (NOTE [compile]). ``compile`` is ember.compile;
``is_compiling`` is true while a call is traced; ``reset``, ``disable`` and ``set_stance`` are torch._dynamo's;
nothing is ever exported; ``config`` keeps torch's settings."""
from __future__ import annotations

import functools

import numpy as np

from .. import _dynamo
from .._dynamo import (allow_in_graph, assume_constant_result, disable, list_backends, reset, set_stance,
                       substitute_in_graph)
from ..utils._config_module import ConfigModule

__all__ = ["compile", "config", "assume_constant_result", "reset", "allow_in_graph", "substitute_in_graph",
           "list_backends", "disable", "set_default_backend", "get_default_backend", "set_stance",
           "cudagraph_mark_step_begin", "wrap_numpy", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "save_cache_artifacts", "load_cache_artifacts", "nested_compile_region"]

config = ConfigModule(__name__ + ".config", "torch.compiler.config", {
    "job_id": None, "pgo_extra_read_key": None, "pgo_extra_write_key": None, "cache_key_tag": "",
    "force_disable_caches": False, "dynamic_sources": "", "dynamic_values": "", "unbacked_sources": "",
    "force_cudagraph_gc": False})
_default_backend = ["inductor"]


def compile(*args, **kwargs):  # noqa: A001 - torch's name
    """ember.compile (see there)."""
    from .. import compile as _compile

    return _compile(*args, **kwargs)


def is_compiling() -> bool:
    """True while ember.compile traces the calling code (nothing is ever exported)."""
    return _dynamo.is_compiling()


def is_dynamo_compiling() -> bool:
    return _dynamo.is_compiling()


def is_exporting() -> bool:
    return False


def set_default_backend(backend) -> None:
    _default_backend[0] = backend


def get_default_backend():
    return _default_backend[0]


def cudagraph_mark_step_begin() -> None:
    """Mark the start of an iteration for CUDA graphs (there are none)."""


def save_cache_artifacts():
    """The compiler's cache as bytes: None, nothing is compiled."""
    return None


def load_cache_artifacts(serialized_artifacts: bytes):
    return None


def nested_compile_region(fn=None, *, options=None, max_reuse_entries: int = 8, reuse_hash_fn=None):
    """Mark a region compiled once and reused (the function itself here)."""
    if fn is None:
        return lambda f: f
    return fn


def wrap_numpy(fn):
    """Let a NumPy function take and return tensors: tensors in are passed as arrays, arrays out become tensors."""
    from .._factories import from_numpy
    from .._tensor import Tensor
    from ..utils import _pytree

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = _pytree.tree_map_only(Tensor, lambda t: t.numpy(), (args, kwargs))
        out = fn(*args, **kwargs)
        return _pytree.tree_map_only(np.ndarray, from_numpy, out)

    return wrapped
