"""Matrix products: matmul (every rank case), mm."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from ._op import Op, silent
from ..autograd.grad_mode import _mode

_matmul = silent(np.matmul)  # inf * 0 inside the products: nan as torch, no NumPy warning

__all__ = ["matmul", "mm", "bmm"]


def _check_dtypes(a, b, name: str) -> None:
    if a.dtype != b.dtype:
        da, db = D.from_numpy_dtype(a.dtype), D.from_numpy_dtype(b.dtype)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {da.name_long} != {db.name_long}"
                           if hasattr(da, "name_long") else
                           f"expected m1 and m2 to have the same dtype, but got: {_long(da)} != {_long(db)}")


def _long(d) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[d.name]


def _matmul_forward(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    _check_dtypes(a, b, "matmul")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                               "respectively")
        return np.asarray(np.dot(a, b))
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if b.ndim >= 3:
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            from .arithmetic import _broadcast_error

            raise _broadcast_error(np.empty(a.shape[:-2]), np.empty(b.shape[:-2])) from None
        if k_a != k_b:
            n = int(np.prod(batch))
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {k_a}] but got: "
                               f"[{n}, {k_b}].")
    elif k_a != k_b:
        rows = int(np.prod(a.shape[:-1]))
        if b.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({k_b})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {k_b}x{b.shape[-1]})")
    try:
        return _matmul(a, b)
    except ValueError:
        from .arithmetic import _broadcast_error

        raise _broadcast_error(np.empty(a.shape[:-2]), np.empty(b.shape[:-2])) from None


class Matmul(Op):
    """d(self @ other) = grad @ other^T, self^T @ grad (1-d operands act as vectors)"""

    __slots__ = ()
    _name = "UnsafeViewBackward0"
    save = ("self", "other")
    forward = staticmethod(lambda ctx, self, other: _matmul_forward(self, other))

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        n0, n1 = ctx._next
        ga = gb = None
        if a.ndim == 1 and b.ndim == 1:
            return (grad * b if n0[0] is not None else None, grad * a if n1[0] is not None else None)
        if a.ndim == 1:
            if n0[0] is not None:
                ga = (grad.unsqueeze(-2) @ b.mT).squeeze(-2)
            if n1[0] is not None:
                gb = a.unsqueeze(-1) @ grad.unsqueeze(-2)
        elif b.ndim == 1:
            if n0[0] is not None:
                ga = grad.unsqueeze(-1) @ b.unsqueeze(-2)
            if n1[0] is not None:
                gb = (a.mT @ grad.unsqueeze(-1)).squeeze(-1)
        else:
            if n0[0] is not None:
                ga = grad @ b.mT
            if n1[0] is not None:
                gb = a.mT @ grad
        return ga, gb


def _named(name: str):
    return type(name.replace("Backward0", "").replace("Backward4", "Vec"), (Matmul,), {"__slots__": (), "_name": name})


# torch's matmul is a composite; the node it leaves on the result depends on the ranks (and, for a
# matrix times a batch, on whether the matrix requires grad). The math is Matmul's in every case.
Mm, Dot, Mv, Bmm, VecMat, MatBatch = (_named(n) for n in ("MmBackward0", "DotBackward0", "MvBackward0",
                                                          "BmmBackward0", "SqueezeBackward4", "CloneBackward0"))


def matmul(input, other):
    """Matrix product with NumPy/torch rank rules (1-d operands are vectors, batches broadcast)."""
    na, nb = input.ndim, other.ndim
    if na == 2:
        if nb == 2:
            return Mm.apply(input, other)
        if nb == 1:
            return Mv.apply(input, other)
        if nb >= 3 and input._requires_grad and _mode.grad_enabled:
            return MatBatch.apply(input, other)
    elif na == 1:
        if nb == 1:
            return Dot.apply(input, other)
        if nb == 2:
            return VecMat.apply(input, other)
    return Matmul.apply(input, other)


def mm(input, mat2):
    """Product of two matrices (2-d only)."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return Mm.apply(input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-d tensors with the same batch size."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
                           f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return Bmm.apply(input, mat2)
