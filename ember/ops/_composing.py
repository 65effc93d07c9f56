"""Helpers of the ops composed from other ember ops (ops/statistics.py, sorting.py, linalg.py, solve.py)."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Tensor, _wrap


def _long(arr) -> Tensor:
    return _wrap(_B.asarray(arr, np.int64), D.int64)


def _ember():
    import ember

    return ember
