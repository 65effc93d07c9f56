"""Every differentiable op, one family per module; see NOTE [declaring an op] in _op.py."""
from .arithmetic import add, sub, subtract, rsub, mul, multiply, div, divide, true_divide, neg, negative, pow
from .comparison import (eq, ne, lt, le, gt, ge, greater, greater_equal, less, less_equal, not_equal,
                         logical_and, logical_or, logical_xor, logical_not, bitwise_and, bitwise_or,
                         bitwise_xor, bitwise_not, equal, allclose, isclose)
from .indexing import where, index_put, nonzero, argwhere
from .gather_scatter import (gather, scatter, scatter_add, scatter_reduce, index_select, index_add, index_copy,
                             index_fill, take, take_along_dim)
from .masked import masked_fill, masked_select, masked_scatter
from .shape import unflatten, movedim, moveaxis, broadcast_to, broadcast_tensors, broadcast_shapes, meshgrid
from .joining import (hstack, vstack, dstack, column_stack, row_stack, atleast_1d, atleast_2d, atleast_3d, chunk,
                      tensor_split, hsplit, vsplit, dsplit)
from .rearrange import repeat_interleave, tile, flip, fliplr, flipud, roll, rot90
from .triangular import tril, triu, diagonal, diag_embed, diag, diagflat, trace
from .elementwise import *  # noqa: F401,F403 - see elementwise.__all__
from .linalg import matmul, mm, bmm
from .linalg import (mv, dot, vdot, inner, outer, ger, addmm, addmv, addr, baddbmm, addbmm, einsum, tensordot, kron,
                     cross)
from .decompositions import inverse, det, logdet, slogdet, cholesky, svd, matrix_power, pinverse, geqrf
from .decompositions import orgqr
from .reduction import sum, mean, sum_to_size
from .reduction import (prod, max, min, amax, amin, argmax, argmin, var, std, var_mean, std_mean, norm, logsumexp,
                        cumsum, cumprod, cummax, cummin, median, all, any, count_nonzero, nansum, nanmean)
from .sorting import sort, argsort, topk, kthvalue, unique, searchsorted, bucketize
from .shape import (reshape, view, transpose, swapaxes, swapdims, permute, t, expand, squeeze, unsqueeze,
                    flatten, clone, narrow, select)
from .joining import cat, concat, concatenate, stack, split, unbind
from .piecewise import relu, abs, absolute, sign, clamp, clip, clamp_min, clamp_max
from .complex_numbers import (view_as_real, view_as_complex, real, imag, conj, conj_physical, conj_physical_,
                              resolve_conj, resolve_neg, is_conj, is_neg, is_complex, complex, polar, sgn)
from .random import normal, bernoulli, multinomial, poisson, binomial
from . import _op
from ._op import Op, _registry

__all__ = [n for n, v in dict(globals()).items() if not n.startswith("_") and type(v) is not type(_op)]  # no submodules



def load_library(path) -> None:
    """torch.ops.load_library: loads a compiled torch extension. ember runs no C++ kernels (an extension's are
    built against libtorch), so this raises OSError, as torch does for a library it cannot load; callers such as
    torchvision then go on without their compiled operators."""
    raise OSError(f"{path}: cannot load a compiled torch extension: ember runs no C++ kernels")
