"""ember.sparse: sparse COO tensors (torch.sparse_coo_tensor, Tensor.to_sparse, torch.sparse.mm ...).

# NOTE [sparse COO over dense storage]
A ``SparseTensor`` is a Tensor whose array holds its dense values, with its COO form (indices, values, whether
coalesced) kept beside it in ``_ext["coo"]``. It is made from its values by a differentiable scatter
(``index_put`` with accumulation), so gradients reach the values through any op, and dense ops on it compute
as on its dense form (``sparse @ dense``, ``dense + sparse``, ``sum`` give torch's values). The sparse API reads
the COO form: ``indices``/``values`` (coalesced only, with torch's error otherwise), ``coalesce`` (sorted, the
duplicates summed), ``_nnz``, torch's printed form, and sparse results for ``t``, ``clone``, ``*`` by a number,
``sparse + sparse``. ``torch.sparse.mm`` gives a sparse leaf its gradient at its stored positions only, as torch.
Memory is that of the dense tensor; ops torch does not define for sparse tensors compute densely here.
"""
from __future__ import annotations

import builtins
import re
import warnings

import numpy as np

from .. import _dtype as D
from .._layout import layout, strided as _strided
from .._tensor import Tensor, _wrap
from ..autograd.function import Function

__all__ = ["SparseTensor", "sparse_coo_tensor", "mm", "addmm", "sum", "softmax", "log_softmax",
           "check_sparse_tensor_invariants", "sparse_coo"]

sparse_coo = layout("sparse_coo")
_warned_invariants = [False]
_FORMAT_NAMES = {"preserve_format": "Preserve", "contiguous_format": "Contiguous", "channels_last": "ChannelsLast",
                 "channels_last_3d": "ChannelsLast3d"}


class _NoReduce:
    def __repr__(self) -> str:
        return "<no reduction>"


_NO_REDUCE = _NoReduce()  # torch.sparse.mm's two-argument overload


def _idx_tensors(indices: np.ndarray) -> tuple:
    return tuple(_wrap(np.ascontiguousarray(row), D.int64) for row in indices)


def _make(indices: np.ndarray, values: Tensor, size: tuple, coalesced: bool) -> "SparseTensor":
    """The sparse tensor of ``values`` at ``indices`` (NOTE [sparse COO over dense storage])."""
    from .._factories import zeros

    if indices.shape[0] == 0:  # no sparse dims (a 0-d tensor): the stored values summed
        dense = values.sum(0) if indices.shape[1] else zeros(size, dtype=values.dtype)
    else:
        dense = zeros(size, dtype=values.dtype)
        if indices.shape[1]:
            dense = dense.index_put(_idx_tensors(indices), values, accumulate=True)
    dense.__class__ = SparseTensor
    dense._ext = dict(dense._ext or {}, coo=[indices, values, coalesced])
    return dense


def _coalesced_form(indices: np.ndarray, values: Tensor, size: tuple) -> tuple:
    """(sorted unique indices, values with duplicates summed): differentiable in the values."""
    if indices.shape[1] == 0:
        return indices, values
    sparse_shape = size[:indices.shape[0]]
    flat = np.ravel_multi_index(tuple(indices), sparse_shape)
    unique, inverse = np.unique(flat, return_inverse=True)
    new_indices = np.array(np.unravel_index(unique, sparse_shape), dtype=np.int64).reshape(indices.shape[0], -1)
    from .._factories import zeros

    summed = zeros(len(unique), *values.shape[1:], dtype=values.dtype).index_add(
        0, _wrap(inverse.astype(np.int64), D.int64), values)
    return new_indices, summed


class SparseTensor(Tensor):
    """A sparse COO tensor (layout ``torch.sparse_coo``)."""

    __slots__ = ()

    @property
    def _coo(self) -> list:
        return self._ext["coo"]

    is_sparse = property(lambda self: True)
    layout = property(lambda self: sparse_coo)

    def _indices(self) -> Tensor:
        return _wrap(self._coo[0], D.int64)

    def _values(self) -> Tensor:
        return self._coo[1]

    def indices(self) -> Tensor:
        if not self._coo[2]:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices()

    def values(self) -> Tensor:
        if not self._coo[2]:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values()

    def is_coalesced(self) -> bool:
        return self._coo[2]

    def coalesce(self) -> "SparseTensor":
        """Sorted indices, each once (duplicates summed)."""
        if self._coo[2]:
            return self
        indices, values = _coalesced_form(self._coo[0], self._coo[1], tuple(self.shape))
        return _make(indices, values, tuple(self.shape), True)

    def _nnz(self) -> int:
        return int(self._coo[0].shape[1])

    def sparse_dim(self) -> int:
        return int(self._coo[0].shape[0])

    def dense_dim(self) -> int:
        return self.dim() - self.sparse_dim()

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor (differentiable): a leaf's gradient is sparse, at its stored positions unless
        ``masked_grad=False`` (then every position), as torch's."""
        if self.requires_grad and self.grad_fn is None:
            self._ext["sparse_grad"] = "full" if masked_grad is False else True
        out = Tensor.clone(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def clone(self, *, memory_format=None) -> "SparseTensor":
        if memory_format is not None:
            raise RuntimeError(f"unsupported memory format option {_FORMAT_NAMES.get(memory_format.name, '')}")
        return _make(self._coo[0].copy(), self._coo[1].clone(), tuple(self.shape), self._coo[2])

    def detach(self) -> "SparseTensor":
        return _make(self._coo[0], self._coo[1].detach(), tuple(self.shape), self._coo[2])

    def to(self, *args, **kwargs) -> "SparseTensor":
        values = self._coo[1].to(*args, **kwargs)
        return self if values is self._coo[1] else _make(self._coo[0], values, tuple(self.shape), self._coo[2])

    def double(self) -> "SparseTensor":
        return self.to(D.float64)

    def float(self) -> "SparseTensor":
        return self.to(D.float32)

    def t(self) -> "SparseTensor":
        if self.sparse_dim() != 2 or self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return _make(self._coo[0][::-1].copy(), self._coo[1], tuple(self.shape)[::-1], False)

    def __neg__(self) -> "SparseTensor":
        return _make(self._coo[0], -self._coo[1], tuple(self.shape), self._coo[2])

    def __mul__(self, other):
        if isinstance(other, (int, float, bool)):
            return _make(self._coo[0], self._coo[1] * other, tuple(self.shape), self._coo[2])
        return Tensor.__mul__(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, float)):
            return _make(self._coo[0], self._coo[1] / other, tuple(self.shape), self._coo[2])
        return Tensor.__truediv__(self, other)

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            if tuple(other.shape) != tuple(self.shape):
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                                   f"{list(self.shape)} while other has size {list(other.shape)} (FYI: op2-sparse "
                                   f"addition does not currently support broadcasting)")
            from ..ops.shape import cat

            if np.array_equal(self._coo[0], other._coo[0]):  # the same positions: values add (torch's fast path)
                values = self._coo[1] + other._coo[1].to(self.dtype)
                return _make(self._coo[0], values, tuple(self.shape), self._coo[2] and other._coo[2])
            indices = np.concatenate([self._coo[0], other._coo[0]], axis=1)
            return _make(indices, cat([self._coo[1], other._coo[1].to(self.dtype)]), tuple(self.shape), False)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def __sub__(self, other):
        if isinstance(other, SparseTensor):
            return self + (-other)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    @property
    def grad(self):
        g = Tensor.grad.fget(self)
        how = (self._ext or {}).get("sparse_grad")
        if g is not None and not isinstance(g, SparseTensor) and how:
            return to_sparse(g) if how == "full" else _pattern_of(self, g)
        return g

    @grad.setter
    def grad(self, value) -> None:
        Tensor.grad.fset(self, value)

    def __repr__(self) -> str:
        pad_i, pad_v = " " * len("tensor(indices="), " " * len("       values=")
        text = (f"tensor(indices={_inner(self._indices()).replace(chr(10), chr(10) + pad_i)},\n"
                f"       values={_inner(self._values().detach()).replace(chr(10), chr(10) + pad_v)},\n"
                f"       size={tuple(self.shape)}, nnz={self._nnz()}")
        if self.dtype is not D.get_default_dtype():
            text += f", dtype={self.dtype}"
        text += ", layout=torch.sparse_coo"
        if self.requires_grad:
            text += ", requires_grad=True" if self.grad_fn is None else f", grad_fn=<{self.grad_fn.name()}>"
        return text + ")"

    __str__ = __repr__


def _inner(t: Tensor) -> str:
    """A component's printed form inside a sparse tensor's: no dtype (the outer form states it), sizes of empties."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    return re.sub(r",\s*dtype=torch\.\w+\)$", ")", repr(t))


def _pattern_of(s: SparseTensor, dense: Tensor) -> SparseTensor:
    """``dense`` at ``s``'s stored positions, as a coalesced sparse tensor."""
    c = s.coalesce()
    indices = c._coo[0]
    values = dense[_idx_tensors(indices)] if indices.shape[1] else dense.reshape(0, *dense.shape[c.sparse_dim():])
    return _make(indices, values.detach(), tuple(s.shape), True)


def _check_invariants_warning() -> None:
    if not _warned_invariants[0] and not _invariants[0]:
        _warned_invariants[0] = True
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur "
                      "when operating on a sparse tensor which violates the invariants, but checks incur "
                      "performance overhead. To silence this warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance. ", UserWarning,
                      stacklevel=3)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants=None, is_coalesced=None) -> SparseTensor:
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (duplicates allowed: they add up)."""
    from .._device import _check_device
    from .._factories import tensor as _tensor

    _check_device(device)
    if pin_memory:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if check_invariants is None:
        _check_invariants_warning()
    idx = indices if isinstance(indices, Tensor) else _tensor(indices, dtype=D.int64)
    vals = values if isinstance(values, Tensor) else _tensor(values, dtype=dtype)
    if dtype is not None:
        vals = vals.to(dtype)
    idx_np = np.asarray(idx._data, dtype=np.int64)
    if size is not None and idx_np.ndim >= 1 and len(size) != idx_np.shape[0] + vals.dim() - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {idx_np.shape[0]}, dense_dim = {vals.dim() - 1}")
    if idx_np.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx_np.shape)}")
    if idx_np.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx_np.shape[1]}, "
                           f"nnz from values: {vals.shape[0]}")
    if size is None:
        sparse = tuple(int(m) + 1 for m in idx_np.max(axis=1)) if idx_np.shape[1] else (0,) * idx_np.shape[0]
        size = sparse + tuple(vals.shape[1:])
    size = tuple(int(s) for s in size)
    if check_invariants or _invariants[0]:
        for d in range(idx_np.shape[0]):
            if idx_np.shape[1] and (idx_np[d].max() >= size[d] or idx_np[d].min() < 0):
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(idx_np[d].max())}")
    out = _make(idx_np, vals, size, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None,
              dense_dim=None) -> Tensor:
    """A dense tensor's nonzero entries as a coalesced sparse COO tensor (Tensor.to_sparse); ``layout=strided``:
    the dense tensor. The other sparse layouts do not exist here."""
    if sparse_dim is not None and (layout is not None or blocksize is not None or dense_dim is not None):
        raise TypeError("to_sparse() takes 0 positional arguments but 1 was given")
    sparse = isinstance(self, SparseTensor)
    if layout is _strided:
        return self.to_dense() if sparse else self
    kind = "to_sparse: conversion from Sparse" if sparse else "dense_to_sparse: conversion from Strided"
    for name, value in (("blocksize", blocksize), ("dense_dim", dense_dim if sparse else None)):
        if value is not None:
            raise RuntimeError(f"{kind} to Sparse with {name} argument given is not supported")
    if sparse:
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self
    for name, value in (("sparse_dim", sparse_dim), ("dense_dim", dense_dim)):
        if value is not None and not 0 <= value <= self.dim():
            raise RuntimeError(f"dense_to_sparse: {name} argument must be in [0,{self.dim()}] range, but {value} is "
                               "given")
    sd = self.dim() - int(dense_dim) if dense_dim is not None else self.dim() if sparse_dim is None else int(sparse_dim)
    arr = self._data
    if sd == 0:
        if self.dim():
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
        nnz = int(bool(arr != 0))  # a 0-d tensor: one stored value unless it is zero
        return _make(np.zeros((0, nnz), np.int64), self.reshape(1)[:nnz], (), True)
    mask = arr.reshape(arr.shape[:sd] + (-1,)).any(axis=-1) if sd < arr.ndim else arr != 0
    indices = np.array(np.nonzero(mask), dtype=np.int64).reshape(sd, -1)
    values = self[_idx_tensors(indices)] if indices.shape[1] else self.reshape(-1)[:0].reshape(
        0, *self.shape[sd:])
    return _make(indices, values, tuple(self.shape), True)


# ---------------------------------------------------------------- torch.sparse functions
class _SparseMM(Function):
    """sparse @ dense; a sparse input's gradient is kept at its stored positions only (torch.sparse.mm)."""

    @staticmethod
    def forward(ctx, s_dense, dense, s):
        ctx.save_for_backward(s_dense, dense)
        ctx.sparse = s
        return s_dense @ dense

    @staticmethod
    def backward(ctx, grad):
        s_dense, dense = ctx.saved_tensors
        g_s = g_d = None
        if ctx.needs_input_grad[0]:
            g_s = _pattern_of(ctx.sparse, grad @ dense.mT)
        if ctx.needs_input_grad[1]:
            g_d = s_dense.mT @ grad
        return g_s, g_d, None


def mm(mat1: Tensor, mat2: Tensor, reduce: str = _NO_REDUCE) -> Tensor:
    """``mat1 @ mat2`` with a sparse ``mat1`` (its gradient sparse, at its stored positions). ``reduce`` needs
    the sparse CSR layout, which does not exist here: torch's error for COO and dense inputs."""
    if reduce is not _NO_REDUCE:
        if not isinstance(reduce, str):
            raise TypeError(f"_sparse_mm(): argument 'reduce' (position 3) must be str, not {type(reduce).__name__}")
        backend = "SparseCPU" if isinstance(mat1, SparseTensor) else "CPU"
        raise NotImplementedError(f"Could not run 'aten::_sparse_mm_reduce_impl' with arguments from the '{backend}' "
                                  "backend. This could be because the operator doesn't exist for this backend, or was "
                                  "omitted during the selective/custom build process (if using custom build).")
    if not isinstance(mat1, SparseTensor):
        return mat1 @ mat2
    if mat1.requires_grad and mat1.grad_fn is None:
        mat1._ext["sparse_grad"] = True
    return _SparseMM.apply(mat1, mat2, mat1)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    return mat * beta + mm(mat1, mat2) * alpha


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # noqa: A001 - torch's name
    """The sum over all (a dense scalar) or over ``dim`` (sparse over the remaining sparse dims)."""
    if dim is None:
        out = input.sum()
        return out if dtype is None else out.to(dtype)
    dense = input.to_dense().sum(dim) if isinstance(input, SparseTensor) else input.sum(dim)
    if dtype is not None:
        dense = dense.to(dtype)
    dims = [dim] if isinstance(dim, int) else list(dim)
    sd = input.sparse_dim() if isinstance(input, SparseTensor) else input.dim()
    left = sd - builtins.sum(1 for d in dims if d % input.dim() < sd)
    if left == 0:
        return dense
    return to_sparse(dense, left)


def _masked(input: SparseTensor, dim: int, log: bool) -> SparseTensor:
    """Softmax over the stored entries along ``dim`` (unstored entries take no part and stay unstored)."""
    from ..nn import functional as F

    c = input.coalesce()
    dense = c.to_dense()
    mask = _wrap(_make(c._coo[0], c._coo[1].detach() * 0 + 1, tuple(c.shape), True)._data != 0, D.bool)
    filled = dense.masked_fill(~mask, float("-inf"))
    out = F.log_softmax(filled, dim) if log else F.softmax(filled, dim)
    out = out.masked_fill(~mask, 0.0)
    return _make(c._coo[0], out[_idx_tensors(c._coo[0])], tuple(c.shape), True)


def softmax(input: Tensor, dim: int, *, dtype=None) -> SparseTensor:
    return _masked(input if dtype is None else input.to(dtype), dim, log=False)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> SparseTensor:
    return _masked(input if dtype is None else input.to(dtype), dim, log=True)


_invariants = [False]


class check_sparse_tensor_invariants:  # noqa: N801 - torch's name
    """Context manager / switch checking that sparse tensors' indices lie inside their size."""

    @staticmethod
    def is_enabled() -> bool:
        return _invariants[0]

    @staticmethod
    def enable() -> None:
        _invariants[0] = True

    @staticmethod
    def disable() -> None:
        _invariants[0] = False

    def __init__(self, enable: bool = True) -> None:
        self.state, self.saved = enable, None

    def __enter__(self):
        self.saved, _invariants[0] = _invariants[0], self.state
        return self

    def __exit__(self, *exc) -> None:
        _invariants[0] = self.saved
