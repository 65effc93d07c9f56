"""Inputs for the transform tests (the comparison itself is ``oracle.compare``)."""
from __future__ import annotations

import numpy as np

__all__ = ["rand"]


def rand(*shape, seed=0, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)
