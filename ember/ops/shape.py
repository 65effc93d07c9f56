"""Shape ops: view/reshape, transpose/permute/t, expand, (un)squeeze, cat/stack, clone, casts."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._op import Op, silent

__all__ = ["reshape", "view", "transpose", "permute", "t", "expand", "squeeze", "unsqueeze",
           "flatten", "cat", "stack", "clone", "narrow", "split", "unbind", "select"]


def _infer_shape(shape, numel: int) -> tuple:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {shape.index(s)} of shape {list(shape)}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


class View(Op):
    """d view(x, shape) = grad.reshape(x.shape)"""

    __slots__ = ("shape",)
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, shape):
        if ctx is not None:
            ctx.shape = self.shape
        shape = _infer_shape(shape, self.size)
        try:
            return np.reshape(self, shape, copy=False)
        except ValueError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least "
                               "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                               "instead.") from None

    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class UnsafeView(Op):
    """d _unsafe_view(x, shape) = grad.reshape(x.shape) (reshape's view of its own contiguous copy)"""

    __slots__ = ("shape",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, shape):
        if ctx is not None:
            ctx.shape = self.shape
        return np.reshape(self, _infer_shape(shape, self.size))

    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class ReshapeAlias(View):
    """d reshape(x, shape) as a view of a non-contiguous x = grad.reshape(x.shape)"""

    __slots__ = ()


def reshape(input: Tensor, *shape) -> Tensor:
    """The same data with a new shape: a view when possible, else a copy (clone, then view)."""
    shape = _shape_args(shape)
    arr = input._data
    if arr.flags.c_contiguous:
        return View.apply(input, shape)
    try:
        np.reshape(arr, _infer_shape(shape, arr.size), copy=False)
    except ValueError:
        return UnsafeView.apply(Clone.apply(input), shape)
    return ReshapeAlias.apply(input, shape)


def view(input: Tensor, *shape) -> Tensor:
    """A view with a new shape (no copy; fails on incompatible strides)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return _to_dtype(input, D.to_dtype(shape[0]))  # view(dtype) of same itemsize
    return View.apply(input, _shape_args(shape))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, len(shape))
    e = _wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


class Transpose(Op):
    """d transpose(x, a, b) = grad.transpose(a, b)"""

    __slots__ = ("dim0", "dim1")
    nattrs = 2
    is_view = True

    @staticmethod
    def forward(ctx, self, dim0, dim1):
        n = self.ndim
        d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        if ctx is not None:
            ctx.dim0, ctx.dim1 = d0, d1
        if n < 2:
            return self.view()
        return np.swapaxes(self, d0, d1)

    def backward(ctx, grad):
        return grad.transpose(ctx.dim0, ctx.dim1)


class T(Op):
    """d x.t() = grad.t()"""

    __slots__ = ()
    is_view = True

    @staticmethod
    def forward(ctx, self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.T

    def backward(ctx, grad):
        return grad.t()


class Permute(Op):
    """d permute(x, dims) = grad.permute(inverse(dims))"""

    __slots__ = ("dims",)
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, dims):
        n = self.ndim
        if len(dims) != n:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                               f"the length of the desired ordering of dimensions i.e. input.dim() = {n} is not "
                               f"equal to len(dims) = {len(dims)}")
        dims = tuple(_wrap_dim(d, n) for d in dims)
        if len(set(dims)) != n:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        if ctx is not None:
            ctx.dims = dims
        return np.transpose(self, dims)

    def backward(ctx, grad):
        return grad.permute(tuple(np.argsort(ctx.dims)))


class Expand(Op):
    """d expand(x, shape) = grad summed back to x's shape"""

    __slots__ = ("shape",)
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, shape):
        if ctx is not None:
            ctx.shape = self.shape
        n = len(shape)
        if n < self.ndim:
            from ..autograd.graph import _type_name

            sizes = ", ".join(map(str, self.shape))
            raise RuntimeError(f"expand(torch.{_type_name(D.from_numpy_dtype(self.dtype))}{{[{sizes}]}}, "
                               f"size=[{', '.join(map(str, shape))}]): the number of sizes provided ({n}) must be "
                               f"greater or equal to the number of dimensions in the tensor ({self.ndim})")
        lead = n - self.ndim
        target = []
        for i, s in enumerate(shape):
            cur = self.shape[i - lead] if i >= lead else 1
            if s == -1:
                if i < lead:
                    raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                       "non-existing dimension 0")
                s = cur
            elif cur != 1 and cur != s:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                                   f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                                   f"{list(self.shape)}")
            target.append(s)
        return np.broadcast_to(self, tuple(target))

    def backward(ctx, grad):
        return grad.sum_to_size(ctx.shape)


def expand(input: Tensor, *sizes) -> Tensor:
    return Expand.apply(input, _shape_args(sizes))


class Squeeze(Op):
    """d squeeze(x) = grad.reshape(x.shape)"""

    __slots__ = ("shape",)
    _name = "SqueezeBackward1"
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, dims):
        if ctx is not None:
            ctx.shape = self.shape
        if dims is None:
            return np.reshape(self, tuple(s for s in self.shape if s != 1))
        ax = tuple(d for d in (_wrap_dim(d, self.ndim) for d in dims) if self.ndim and self.shape[d] == 1)
        return np.squeeze(self, axis=ax) if ax else self.view()

    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class SqueezeAll(Squeeze):
    __slots__ = ()
    _name = "SqueezeBackward0"


class SqueezeDims(Squeeze):
    __slots__ = ()
    _name = "SqueezeBackward2"


class Unsqueeze(Op):
    """d unsqueeze(x, dim) = grad.squeeze(dim)"""

    __slots__ = ("dim",)
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, dim):
        d = _wrap_dim(dim, self.ndim + 1)
        if ctx is not None:
            ctx.dim = d
        return np.expand_dims(self, d)

    def backward(ctx, grad):
        return grad.squeeze(ctx.dim)


def squeeze(input: Tensor, dim=None) -> Tensor:
    if dim is None:
        return SqueezeAll.apply(input, None)
    if isinstance(dim, int):
        return Squeeze.apply(input, (dim,))
    return SqueezeDims.apply(input, tuple(dim))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return Unsqueeze.apply(input, dim)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return Transpose.apply(input, dim0, dim1)


swapaxes = swapdims = transpose


def permute(input: Tensor, *dims) -> Tensor:
    return Permute.apply(input, _shape_args(dims))


def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (0-d and 1-d tensors are returned as they are)."""
    return T.apply(input)


class Clone(Op):
    """d clone(x) = grad"""

    __slots__ = ()
    forward = staticmethod(lambda ctx, self: self.copy())

    def backward(ctx, grad):
        return grad


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own memory (differentiable)."""
    return Clone.apply(input)


class ToCopy(Op):
    """d x.to(dtype) = grad.to(x.dtype)"""

    __slots__ = ("dtype",)
    save = ()
    nattrs = 1

    @staticmethod
    @silent  # overflow to inf when narrowing (float64 -> float16), as torch
    def forward(ctx, self, dtype):
        if ctx is not None:
            ctx.dtype = D.from_numpy_dtype(self.dtype)
        return self.astype(dtype.np)

    def backward(ctx, grad):
        return grad.to(ctx.dtype)


def _to_dtype(input: Tensor, dtype: D.dtype) -> Tensor:
    return ToCopy.apply(input, dtype)


class Cat(Op):
    """d cat(xs, dim) = grad split back into the pieces along dim"""

    __slots__ = ("dim", "sizes")
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


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of ``length`` elements of ``dim`` from ``start``."""
    from .indexing import Slice

    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if start < 0:
        start += n
    if start < 0 or start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return Slice.apply(input, d, start, start + length, 1)


class Select(Op):
    """d x.select(dim, i) = grad placed at index i of zeros of x's shape"""

    __slots__ = ("dim", "index", "shape")
    nattrs = 2
    is_view = True

    @staticmethod
    def forward(ctx, self, dim, index):
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = _wrap_dim(dim, self.ndim)
        n = self.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                             f"dimension {d}")
        if ctx is not None:
            ctx.dim, ctx.index, ctx.shape = d, index % n, self.shape
        return self[(slice(None),) * d + (index, Ellipsis)]  # Ellipsis: a 0-d view, not a scalar

    def backward(ctx, grad):
        from .indexing import _slice_backward

        return _slice_backward(grad, ctx.shape, (slice(None),) * ctx.dim + (ctx.index,))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    return Select.apply(input, dim, index)


def _zeros_for(ctx, grads):
    """The incoming grads of a multi-output node with zeros for outputs that got none."""
    from .._tensor import _wrap

    return [g if g is not None else _wrap(np.zeros(shape, dt.np), dt) for g, (shape, dt) in zip(grads, ctx._meta_out)]


class Split(Op):
    """d split(x, size, dim) = cat(grads, dim) (zeros for unused pieces)"""

    __slots__ = ("dim",)
    nattrs = 2
    is_view = True

    @staticmethod
    def forward(ctx, self, dim, sizes):
        if ctx is not None:
            ctx.dim = dim
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

    __slots__ = ("dim",)
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, dim):
        if ctx is not None:
            ctx.dim = dim
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
