"""ember.testing: the ``torch.testing`` namespace (assert_close, its deprecated assert_allclose, make_tensor)."""
from __future__ import annotations

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
