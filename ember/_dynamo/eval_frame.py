"""torch._dynamo.eval_frame: the names user code checks for compiled modules."""
from __future__ import annotations

from .. import nn

__all__ = ["OptimizedModule"]


class OptimizedModule(nn.Module):
    """A module wrapped by torch.compile (``_orig_mod`` is the original); ember.compile returns the module itself,
    so no ember module is an OptimizedModule."""

    def __init__(self, mod: nn.Module, dynamo_ctx=None) -> None:
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)
