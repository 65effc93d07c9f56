"""LinearCrossEntropyOptions: torch's chunking options for linear_cross_entropy (torch 2.13), validated as torch
validates them. ember computes linear_cross_entropy one way (the reference form: linear then cross_entropy), so
the options change nothing but which calls warn; see NOTE [linear_cross_entropy's options] in functional.py."""
from __future__ import annotations

import dataclasses

from ... import _dtype as D

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = ("accurate", "balanced", "compact", "auto")
# torch's per-(device, dtype) picks for the "auto" sentinels (the CPU rows), and the fallback
_AUTO_DEFAULTS = {("cpu", "bfloat16"): ("accurate", "aspect_ratio"), ("cpu", "float16"): ("accurate", "aspect_ratio")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How torch's chunked linear_cross_entropy splits the batch (rows per chunk or a sizing heuristic) and
    accumulates (policy and dtype); ``allow_retain_graph`` permits a second backward."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    def _chunk_size(self, num_batches: int, in_features: int, num_classes: int, method: str) -> int:
        """Rows per chunk by the aspect-ratio heuristic: the chunk's logits as large as the input, over N."""
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // in_features))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype, device=None):
        """The options with the "auto" sentinels resolved for one call (torch's ValueError when an explicit
        ``batch_chunk_size`` and ``chunking_method`` disagree)."""
        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if acc_policy == "auto" or method == "auto":
            picks = _AUTO_DEFAULTS.get((getattr(device, "type", None), str(dtype).replace("torch.", "")),
                                       _AUTO_FALLBACK) if device is not None else _AUTO_FALLBACK
            acc_policy = picks[0] if acc_policy == "auto" else acc_policy
            method = picks[1] if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') "
                                 f"give different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            low = dtype in (D.float16, D.bfloat16) and self.acc_policy == "auto" and device is not None
            acc_dtype = D.float32 if low and getattr(device, "type", None) == "cpu" else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)
