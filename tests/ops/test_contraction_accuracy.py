"""float32 contractions sum as accurately as torch's: an einsum over tens of thousands of products (one operand a
broadcast view, as einops' repeat makes) stays within torch's distance of the float64 result."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import ember, torch


@pytest.mark.parametrize("shape", [(10, 11, 12), (40, 41, 42)])
def test_einsum_with_a_broadcast_operand_sums_accurately(shape):
    x = np.random.default_rng(0).random(shape).astype(np.float32)
    exact = np.einsum("abc,abc->", x.astype(np.float64), x.astype(np.float64))
    errs = {}
    for lib in (ember, torch):
        a = lib.tensor(x)
        out = lib.einsum("abc,abcd->d", a, a[..., None].expand(*shape, 4))
        assert out.dtype == lib.float32
        errs[lib] = float(np.abs(out.double().numpy() - exact).max())
    assert errs[ember] <= errs[torch] + 4 * np.finfo(np.float32).eps * exact
