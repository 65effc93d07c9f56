"""Every differentiable op, one family per module; see NOTE [declaring an op] in _op.py."""
from .arithmetic import add, sub, subtract, rsub, mul, multiply, div, divide, true_divide, neg, negative, pow
from .comparison import (eq, ne, lt, le, gt, ge, greater, greater_equal, less, less_equal, not_equal,
                         logical_and, logical_or, logical_xor, logical_not, bitwise_and, bitwise_or,
                         bitwise_xor, bitwise_not, equal, allclose, isclose)
from .indexing import where
from .elementwise import *  # noqa: F401,F403 - see elementwise.__all__
from .linalg import matmul, mm, bmm
from .reduction import sum, mean, sum_to_size
from .reduction import (prod, max, min, amax, amin, argmax, argmin, var, std, var_mean, std_mean, norm, logsumexp,
                        cumsum, cumprod, cummax, cummin, median, all, any, count_nonzero, nansum, nanmean)
from .sorting import sort, argsort, topk, kthvalue, unique
from .shape import (reshape, view, transpose, swapaxes, swapdims, permute, t, expand, squeeze, unsqueeze,
                    flatten, cat, concat, concatenate, stack, clone, narrow, split, unbind, select)
from .unary import relu, abs, absolute, sign, clamp, clip, clamp_min, clamp_max
from ._op import Op, _registry

__all__ = [n for n in dir() if not n.startswith("_")]


def _nonzero(condition):
    from .._tensor import _wrap
    from .. import _dtype as D
    import numpy as np

    return tuple(_wrap(i.astype(np.int64), D.int64) for i in np.nonzero(condition._data))
