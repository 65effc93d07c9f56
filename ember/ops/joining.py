"""Joining and splitting: cat/stack and their hstack/vstack/dstack/column_stack forms, atleast_*d, split/chunk/
unbind/tensor_split and the hsplit/vsplit/dsplit forms (the pieces are views)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from .. import _args
from .._args import tensor_arg as _tensor_arg
from ..autograd._interpose import made
from ._op import Op, linear
from .indexing import Slice
from .shape import reshape, Unsqueeze

__all__ = ["cat", "concat", "concatenate", "stack", "split", "unbind", "hstack", "vstack", "dstack", "column_stack",
           "row_stack", "atleast_1d", "atleast_2d", "atleast_3d", "chunk", "tensor_split", "hsplit", "vsplit",
           "dsplit", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"]


class Cat(Op):
    """d cat(xs, dim) = grad split back into the pieces along dim"""

    __slots__ = ("dim", "sizes")
    jvp = linear
    nattrs = 1

    @staticmethod
    def forward(ctx, *args):
        *arrays, dim = args
        if not arrays:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        ref = next((a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)), arrays[0])
        if ref.ndim == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        d = _wrap_dim(dim, ref.ndim)
        for i, a in enumerate(arrays):
            if a.ndim == 1 and a.shape[0] == 0:
                continue  # torch skips legacy empty 1-d tensors
            if a.ndim != ref.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
            for k in range(ref.ndim):
                if k != d and a.shape[k] != ref.shape[k]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                       f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
        dt = D.result_type(*arrays).np if len({a.dtype for a in arrays}) > 1 else arrays[0].dtype
        keep = [a.astype(dt, copy=False) for a in arrays if not (a.ndim == 1 and a.shape[0] == 0 and ref.ndim != 1)]
        if ctx is not None:
            ctx.dim = d
            ctx.sizes = [a.shape[d] if a.ndim == ref.ndim else 0 for a in arrays]
        return np.concatenate(keep, axis=d)

    def backward(ctx, grad):
        out = []
        start = 0
        for n in ctx.sizes:
            out.append(grad.narrow(ctx.dim, start, n))
            start += n
        return tuple(out)


class Stack(Op):
    """d stack(xs, dim) = grad.unbind(dim)"""

    __slots__ = ("dim",)
    jvp = linear
    nattrs = 1

    @staticmethod
    def forward(ctx, *args):
        *arrays, dim = args
        if not arrays:
            raise RuntimeError("stack expects a non-empty TensorList")
        for i, a in enumerate(arrays):
            if a.shape != arrays[0].shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(arrays[0].shape)} at "
                                   f"entry 0 and {list(a.shape)} at entry {i}")
        d = _wrap_dim(dim, arrays[0].ndim + 1)
        if ctx is not None:
            ctx.dim = d
        dt = D.result_type(*arrays).np if len({a.dtype for a in arrays}) > 1 else arrays[0].dtype
        return np.stack([a.astype(dt, copy=False) for a in arrays], axis=d)

    def backward(ctx, grad):
        return tuple(grad.select(ctx.dim, i) for i in range(grad.shape[ctx.dim]))


def _tensor_list(tensors, fname: str):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    out = list(tensors)
    for i, t in enumerate(out):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return out


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Concatenate along an existing dimension."""
    return Cat.apply(*_tensor_list(tensors, "cat"), dim)


concat = concatenate = cat


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Join along a new dimension."""
    return Stack.apply(*_tensor_list(tensors, "stack"), dim)


def _zeros_for(ctx, grads):
    """The incoming grads of a multi-output node with zeros for outputs that got none."""
    return [g if g is not None else _wrap(made(np.zeros(shape, dt.np)), dt) for g, (shape, dt) in zip(grads, ctx._meta_out)]


class Split(Op):
    """d split(x, size, dim) = cat(grads, dim) (zeros for unused pieces)"""

    __slots__ = ()
    jvp = linear
    attrs = ("dim", "sizes")
    is_view = True

    @staticmethod
    def forward(ctx, self, dim, sizes):
        out, start = [], 0
        pre = (slice(None),) * dim
        for n in sizes:
            out.append(self[pre + (slice(start, start + n),)])
            start += n
        return tuple(out)

    def backward(ctx, *grads):
        return Cat.apply(*_zeros_for(ctx, grads), ctx.dim)


class SplitWithSizes(Split):
    __slots__ = ()


def split(tensor: Tensor, split_size_or_sections, dim: int = 0):
    """Split into chunks of a size (last may be smaller) or of the given sizes."""
    d = _wrap_dim(dim, tensor._data.ndim)
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and n):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                               if step == 0 else f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
        return Split.apply(tensor, d, sizes)
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                           f"at dimension {d}), but got split_sizes={sizes}")
    return SplitWithSizes.apply(tensor, d, sizes)


class Unbind(Op):
    """d unbind(x, dim) = stack(grads, dim) (zeros for unused slices)"""

    __slots__ = ()
    jvp = linear
    attrs = ("dim",)
    is_view = True

    @staticmethod
    def forward(ctx, self, dim):
        pre = (slice(None),) * dim
        return tuple(self[pre + (i,)] for i in range(self.shape[dim]))

    def backward(ctx, *grads):
        return Stack.apply(*_zeros_for(ctx, grads), ctx.dim)


def unbind(input: Tensor, dim: int = 0):
    """All slices along ``dim`` as a tuple."""
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, input._data.ndim)
    if input._data.shape[d] == 0:
        return ()
    return Unbind.apply(input, d)


def atleast_1d(*tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = tensors[0] if len(tensors) == 1 and not one else tensors
    out = tuple(reshape(t, (1,)) if t._data.ndim == 0 else t for t in ts)
    return out[0] if one else out


def atleast_2d(*tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = tensors[0] if len(tensors) == 1 and not one else tensors
    out = tuple(Unsqueeze.apply(atleast_1d(t), 0) if t._data.ndim < 2 else t for t in ts)
    return out[0] if one else out


def atleast_3d(*tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = tensors[0] if len(tensors) == 1 and not one else tensors
    out = []
    for t in ts:
        n = t._data.ndim
        if n == 0:
            t = reshape(t, (1, 1, 1))
        elif n == 1:
            t = Unsqueeze.apply(Unsqueeze.apply(t, 0), -1)
        elif n == 2:
            t = Unsqueeze.apply(t, -1)
        out.append(t)
    return out[0] if one else tuple(out)


def hstack(tensors) -> Tensor:
    ts = atleast_1d(*_tensor_list(tensors, "hstack"))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    return cat(atleast_2d(*_tensor_list(tensors, "vstack")), 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    return cat(atleast_3d(*_tensor_list(tensors, "dstack")), 2)


def column_stack(tensors) -> Tensor:
    ts = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")]
    return cat(ts, 1)


def chunk(input: Tensor, chunks: int, dim: int = 0):
    """At most ``chunks`` pieces of equal size along ``dim`` (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return Split.apply(input, d, [0] * chunks)
    return split(input, size, d)


def _sections_or_indices(fname: str, sections, indices, tensor_indices_or_sections=None):
    """The one of torch's overload parameters (sections=int, indices=list, tensor_indices_or_sections) given."""
    given = [v for v in (sections, indices, tensor_indices_or_sections) if v is not None]
    if len(given) != 1:
        raise TypeError(f"{fname}() received an invalid combination of arguments: give one of sections, indices"
                        + (", tensor_indices_or_sections" if fname == "tensor_split" else ""))
    return given[0]


def tensor_split(input: Tensor, sections=None, dim: int = 0, *, indices=None, tensor_indices_or_sections=None):
    """Pieces split at indices, or ``sections`` pieces of near-equal size (the first ones larger); the second
    argument is either (torch names it ``sections``, ``indices`` or ``tensor_indices_or_sections`` by type)."""
    ios = _sections_or_indices("tensor_split", sections, indices, tensor_indices_or_sections)
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if isinstance(ios, Tensor):
        ios = ios.tolist()
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, ios)
        bounds, start = [], 0
        for i in range(ios):
            start += q + (i < r)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = [int(i) for i in ios]
    out, start = [], 0
    for b in bounds + [n]:
        b = min(max(b if b >= 0 else b + n, 0), n)
        lo = min(start, n)
        out.append(Slice.apply(input, d, lo, max(lo, b), 1))
        start = max(b, start) if b >= start else b
    return tuple(out)


def _split_dir(name: str, dim: int, min_dim: int):
    def f(input: Tensor, sections=None, *, indices=None):
        indices_or_sections = _sections_or_indices(name, sections, indices)
        n = input._data.ndim
        if n < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {n} dimensions!")
        d = 0 if name == "hsplit" and n == 1 else dim
        if isinstance(indices_or_sections, int) and input._data.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input._data.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    f.__name__ = name
    return f


hsplit, vsplit, dsplit = _split_dir("hsplit", 1, 1), _split_dir("vsplit", 0, 2), _split_dir("dsplit", 2, 3)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Pieces of the given sizes along ``dim`` (they must add up to its length)."""
    _tensor_arg("split_with_sizes", input)
    sizes = [int(s) for s in split_sizes]
    n = input.shape[dim] if input.dim() else 1
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={sizes}")
    return input.split(sizes, dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple:
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    return input.chunk(chunks, dim)


# NOTE [foreign errors] (ember/_malloc.py): functions that compute on arrays before (or instead of) an op
_translate_errors_of(globals(), ("tensor_split", "chunk", "hsplit", "vsplit", "dsplit"))
_args.install(globals(), (
    "cat concat concatenate stack unbind hstack vstack row_stack dstack column_stack chunk tensor_split hsplit vsplit "
    "dsplit split_with_sizes unsafe_split unsafe_split_with_sizes unsafe_chunk").split(),
    out=("hstack", "vstack", "row_stack", "dstack", "column_stack"))
