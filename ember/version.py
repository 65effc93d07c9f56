"""torch.version's fields for ``import ember as torch``: the torch version whose API ember implements, with
ember's own release in its local label (``2.13.0+ember.0.1.0``); no CUDA, HIP, ROCm or XPU build."""
from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "torch_api", "ember_release"]

torch_api = "2.13.0"  # the torch release whose API and behaviour ember follows (its test oracle)
ember_release = "0.1.0"  # ember's own release (pyproject.toml's version)
__version__ = f"{torch_api}+ember.{ember_release}"
debug = False
cuda: str | None = None
git_version = "unknown"  # torch's field names its source commit; ember's installed copy does not know its own
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
