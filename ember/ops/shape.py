"""Shape ops: view/reshape, transpose/permute/t, expand, (un)squeeze, cat/stack, clone, casts."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from .. import _args
from .._args import tensor_arg as _tensor_arg
from .. import _layout
from .._data import astype as _astype
from ..autograd._interpose import data_shaped, made
from ._op import Op, linear, silent

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
    jvp = linear
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
    jvp = linear
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


def reshape(input: Tensor, shape) -> Tensor:
    """The same data with a new shape: a view when possible, else a copy (clone, then view)."""
    shape = _shape_args((shape,))
    arr = input._data
    if arr.flags.c_contiguous:
        return View.apply(input, shape)
    try:
        np.reshape(arr, _infer_shape(shape, arr.size), copy=False)
    except ValueError:
        return UnsafeView.apply(Clone.apply(input), shape)
    return ReshapeAlias.apply(input, shape)


def view(input: Tensor, *shape, dtype=None) -> Tensor:
    """A view with a new shape (no copy; fails on incompatible strides), or as another ``dtype`` of the same size."""
    if dtype is not None:
        shape = (dtype,)
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return _view_dtype(input, D.to_dtype(shape[0]))
    return View.apply(input, _shape_args(shape))


def _view_dtype(input: Tensor, dtype: D.dtype) -> Tensor:
    """``input.view(dtype)``: the same bytes read as ``dtype`` (the last dim rescaled when the element sizes differ);
    not differentiable, as torch's."""
    if dtype is input._dtype:
        return View.apply(input, tuple(input.shape))
    arr = input._data
    old, new = input._dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"to view {input._dtype._scalar_name} as {dtype._scalar_name} (different element sizes)"
        if arr.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if arr.shape[-1] != 1 and arr.strides[-1] != old:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {arr.strides[-1] // old}")
        if new > old:
            ratio = new // old
            if arr.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {arr.shape[-1]}")
            offset = input.storage_offset()
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
    out = _wrap(arr.view(dtype.np), dtype)
    from ._op import _link_view

    _link_view(out, input)
    return out


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
    jvp = linear
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
    jvp = linear
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
    jvp = linear
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
    jvp = linear
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


def expand(input: Tensor, *sizes, implicit: bool = False) -> Tensor:
    """``input`` broadcast to ``sizes`` (-1 keeps a size) as a view; ``implicit`` only marks tracer-inserted
    expands in torch and changes nothing."""
    return Expand.apply(input, _shape_args(sizes))


class Squeeze(Op):
    """d squeeze(x) = grad.reshape(x.shape)"""

    __slots__ = ("shape",)
    jvp = linear
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
    jvp = linear
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


swapdims = transpose


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """transpose, with NumPy's parameter names."""
    return Transpose.apply(input, axis0, axis1)


def permute(input: Tensor, dims) -> Tensor:
    return Permute.apply(input, _shape_args((dims,)))


def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (0-d and 1-d tensors are returned as they are)."""
    return T.apply(input)


class Clone(Op):
    """d clone(x) = grad"""

    __slots__ = ()
    jvp = linear
    forward = staticmethod(lambda ctx, self: self.copy())

    def backward(ctx, grad):
        return grad


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own memory (differentiable), laid out as ``memory_format`` asks (default preserve_format:
    the strides of a dense input, else row-major)."""
    out = Clone.apply(input)
    arr = input._data
    if memory_format is _layout.contiguous_format or type(arr) is not np.ndarray or type(out._data) is not np.ndarray \
            or (arr.flags.c_contiguous and (memory_format is None or memory_format is _layout.preserve_format)):
        return out
    laid = _layout.empty_like(arr, arr.dtype, memory_format)  # the fresh result's values, in the asked layout
    if laid.strides != out._data.strides:
        np.copyto(laid, out._data)
        out._data = laid
    return out


class ToCopy(Op):
    """d x.to(dtype) = grad.to(x.dtype)"""

    __slots__ = ("dtype",)
    jvp = linear
    save = ()
    nattrs = 1
    reduced_native = True  # converts the stored 16-bit values itself (NOTE [reduced precision] in ops/_op.py)

    @staticmethod
    @silent  # overflow to inf when narrowing (float64 -> float16), as torch
    def forward(ctx, self, dtype):
        if ctx is not None:
            ctx.dtype = D.from_numpy_dtype(self.dtype)
        if self.dtype.kind == "c" and not dtype.is_complex:
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=5)
            self = self.real
        return _astype(self, dtype.np)

    def backward(ctx, grad):
        if grad._dtype.is_complex and not ctx.dtype.is_complex:  # a real input's share: the real part
            grad = grad.real
        return grad.to(ctx.dtype)


def _to_dtype(input: Tensor, dtype: D.dtype) -> Tensor:
    return ToCopy.apply(input, dtype)


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


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of ``length`` elements of ``dim`` from ``start``."""
    from .indexing import Slice

    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return Slice.apply(input, d, start, start + length, 1)


class Select(Op):
    """d x.select(dim, i) = grad placed at index i of zeros of x's shape"""

    __slots__ = ("dim", "index", "shape")
    jvp = linear
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


# ---------------------------------------------------------------- more shape ops (views, copies, stacking)
__all__ += ["unflatten", "movedim", "moveaxis", "broadcast_to", "broadcast_tensors", "broadcast_shapes", "repeat",
            "repeat_interleave", "tile", "flip", "fliplr", "flipud", "roll", "rot90", "hstack", "vstack", "dstack",
            "column_stack", "row_stack", "atleast_1d", "atleast_2d", "atleast_3d", "chunk", "tensor_split",
            "hsplit", "vsplit", "dsplit", "tril", "triu", "diagonal", "diag_embed", "diag", "diagflat", "trace",
            "meshgrid"]


def _dims_arg(dims) -> tuple:
    return (dims,) if isinstance(dims, int) else tuple(dims)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one of them may be -1)."""
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = _infer_shape(sizes, shape[d]) if -1 in sizes or np.prod(sizes) == shape[d] else None
    if inner is None:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shape[d]}) in the input tensor")
    return View.apply(input, shape[:d] + inner + shape[d + 1:])


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (others keep their order)."""
    n = input._data.ndim
    src, dst = _dims_arg(source), _dims_arg(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src = tuple(_wrap_dim(d, n) for d in src)
    dst = tuple(_wrap_dim(d, n) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError("movedim: repeated dim in `source` " + f"({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `destination` " + f"({list(destination)})")
    order = [d for d in range(n) if d not in src]
    for s_, d_ in sorted(zip(dst, src)):
        order.insert(s_, d_)
    return Permute.apply(input, tuple(order))


moveaxis = movedim


def broadcast_to(input: Tensor, size) -> Tensor:
    return Expand.apply(input, _shape_args((size,)))


def broadcast_shapes(*shapes):
    from .._tensor import Size

    try:
        return Size(np.broadcast_shapes(*(tuple(s) if not isinstance(s, int) else (s,) for s in shapes)))
    except ValueError:
        raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape") from None


def broadcast_tensors(*tensors):
    """All tensors expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    try:
        shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    except ValueError:
        from .arithmetic import _broadcast_error

        raise _broadcast_error(*(t._data for t in tensors[:2])) from None
    return tuple(t if t._data.shape == shape else Expand.apply(t, shape) for t in tensors)


class Repeat(Op):
    """d x.repeat(reps) = grad summed over the copies"""

    __slots__ = ("shape", "reps")
    jvp = linear
    nattrs = 1

    @staticmethod
    def forward(ctx, self, reps):
        if len(reps) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                               "of tensor")
        if any(r < 0 for r in reps):
            target = [r * s for r, s in zip(reps, (1,) * (len(reps) - self.ndim) + self.shape)]
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(target)}: {target}")
        if ctx is not None:
            ctx.shape, ctx.reps = self.shape, reps
        return np.tile(self, reps)

    def backward(ctx, grad):
        lead = len(ctx.reps) - len(ctx.shape)
        shape = (1,) * lead + ctx.shape
        split = []
        for r, s in zip(ctx.reps, shape):
            split += [r, s]
        g = grad.reshape(split).sum(tuple(range(0, 2 * len(shape), 2)))
        return g.reshape(ctx.shape)


def repeat(input: Tensor, *sizes) -> Tensor:
    return Repeat.apply(input, tuple(int(r) for r in _shape_args(sizes)))


def tile(input: Tensor, dims) -> Tensor:
    dims = _shape_args((dims,))
    n = input._data.ndim
    return Repeat.apply(input, (1,) * (n - len(dims)) + dims)


def repeat_interleave(input: Tensor | None = None, repeats=None, dim: int | None = None, *,
                      output_size=None) -> Tensor:
    """Each element repeated ``repeats`` times along ``dim`` (flattened when ``dim`` is None);
    ``repeat_interleave(repeats)``: each index repeated by its count. ``output_size``, when given, must be the
    result's length along ``dim`` (torch's errors otherwise)."""
    if input is None:
        input, repeats = repeats, None
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        data_shaped("repeat_interleave")
        r = input._data
        return _wrap(_repeat_indices(np.arange(r.shape[0], like=_B.ref(r)), r, output_size), D.int64)
    x = flatten(input) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != n * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but got {output_size}")
        shape = x._data.shape
        y = Unsqueeze.apply(x, d + 1)
        y = Expand.apply(y, shape[:d + 1] + (repeats,) + shape[d + 1:])
        return View.apply(Clone.apply(y), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])
    if isinstance(repeats, Tensor):
        data_shaped("repeat_interleave")
    r = repeats._data if isinstance(repeats, Tensor) else _B.asarray(repeats)
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.size == 1 and n != 1:  # one count for every element
        r = _B.full(n, r.reshape(()), like=_B.ref(r))
    if r.size != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{r.shape[0] if r.ndim else 1} and input.size({d}) = {n}")
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    from .indexing import index_select

    r = r.reshape(-1)
    return index_select(x, d, _wrap(_repeat_indices(np.arange(n, like=_B.ref(x._data)), r, output_size), D.int64))


def _repeat_indices(index: np.ndarray, counts: np.ndarray, output_size) -> np.ndarray:
    if output_size is not None:
        if output_size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {output_size}: [{output_size}]")
        if output_size != counts.sum():
            raise RuntimeError("allocated size does not match required size")
    return _B.repeat(index, counts)


class Flip(Op):
    """d flip(x, dims) = flip(grad, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("dims",)

    @staticmethod
    def forward(ctx, self, dims):
        if self.ndim == 0:
            return self.copy()
        return np.flip(self, dims).copy()

    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims)


def _check_unique_dims(dims, n: int, what: str = "flip") -> tuple:
    out = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out


def flip(input: Tensor, dims) -> Tensor:
    return Flip.apply(input, _check_unique_dims(_shape_args((dims,)), input._data.ndim))


def fliplr(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


class Roll(Op):
    """d roll(x, shifts, dims) = roll(grad, -shifts, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("shifts", "dims")

    @staticmethod
    def forward(ctx, self, shifts, dims):
        if dims is None:
            return np.roll(self.reshape(-1), shifts).reshape(self.shape)
        return np.roll(self, shifts, dims)

    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims)


def roll(input: Tensor, shifts, dims=()) -> Tensor:
    """Elements shifted cyclically along ``dims`` (over the flattened tensor when none)."""
    shifts = _dims_arg(shifts)
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is not provided, but got "
                               f"{len(shifts)}")
        return Roll.apply(input, shifts, None)
    dims = _dims_arg(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, shifts, tuple(_wrap_dim(d, input._data.ndim) for d in dims))


class Rot90(Op):
    """d rot90(x, k, dims) = rot90(grad, -k, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("k", "dims")

    @staticmethod
    def forward(ctx, self, k, dims):
        return np.rot90(self, k, dims).copy()

    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.dims)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    dims = tuple(dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return Rot90.apply(input, k % 4, (d0, d1))


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
    from .indexing import Slice

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


def _tri(name: str, np_fn) -> type:
    def forward(ctx, self, diagonal):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        if ctx is not None:
            ctx.diagonal = diagonal
        return np_fn(self, diagonal)

    def backward(ctx, grad):
        return cls.apply(grad, ctx.diagonal)

    cls = type(name.capitalize(), (Op,), {"__slots__": ("diagonal",), "nattrs": 1, "forward": staticmethod(forward),
                                          "backward": backward, "__doc__": f"d {name}(x, k) = {name}(grad, k)"})
    return cls


Tril, Triu = _tri("tril", np.tril), _tri("triu", np.triu)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    return Tril.apply(input, int(diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return Triu.apply(input, int(diagonal))


def _diag_geometry(shape: tuple, offset: int, d1: int, d2: int):
    """(shape, strides in elements, start) of the diagonal view of a C-contiguous array of ``shape``."""
    n = len(shape)
    strides = [int(np.prod(shape[i + 1:])) for i in range(n)]
    if offset >= 0:
        length = max(0, min(shape[d1], shape[d2] - offset))
        start = offset * strides[d2]
    else:
        length = max(0, min(shape[d1] + offset, shape[d2]))
        start = -offset * strides[d1]
    if length == 0:
        start = 0
    rest = [i for i in range(n) if i not in (d1, d2)]
    return tuple(shape[i] for i in rest) + (length,), tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],), \
        start


def _diagonal_view(arr: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable view of the diagonal (NumPy's own diagonal view is read-only)."""
    shape, _, _ = _diag_geometry(arr.shape, offset, d1, d2)
    st = arr.strides  # any layout (a batched tensor's physical value under vmap is often permuted)
    strides = tuple(st[i] for i in range(arr.ndim) if i not in (d1, d2)) + (st[d1] + st[d2],)
    start = arr
    if shape[-1]:  # a view starting at the diagonal's first element
        key = [slice(None)] * arr.ndim
        key[d2 if offset >= 0 else d1] = slice(abs(offset), None)
        start = arr[tuple(key)]
    return _B.as_strided(start, shape, strides)


def _dims2(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


class Diagonal(Op):
    """d diagonal(x, offset, d1, d2) = grad written on that diagonal of zeros of x's shape"""

    __slots__ = ("shape", "offset", "dim1", "dim2")
    jvp = linear
    nattrs = 3
    is_view = True

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        if ctx is not None:
            ctx.shape, ctx.offset, ctx.dim1, ctx.dim2 = self.shape, offset, dim1, dim2
        return _diagonal_view(self, offset, dim1, dim2)

    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.shape, ctx.offset, ctx.dim1, ctx.dim2)


class DiagCopy(Diagonal):
    """d diag(matrix, k) = grad on the k-th diagonal of zeros (a copy, not a view)"""

    __slots__ = ()
    _name = "DiagonalBackward0_copy"
    is_view = False

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        return Diagonal.forward(ctx, self, offset, dim1, dim2).copy()


class DiagonalScatter(Op):
    """d (zeros of shape with x on a diagonal) = diagonal(grad)"""

    __slots__ = ("offset", "dim1", "dim2")
    _name = "DiagonalBackwardBackward0"
    nattrs = 4

    @staticmethod
    def forward(ctx, self, shape, offset, dim1, dim2):
        if ctx is not None:
            ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        out = np.zeros(shape, self.dtype)
        _diagonal_view(out, offset, dim1, dim2)[...] = self
        return out

    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.offset, ctx.dim1, ctx.dim2)


class DiagEmbed(DiagonalScatter):
    """d diag_embed(x, offset, d1, d2) = diagonal(grad, offset, d1, d2)"""

    __slots__ = ()
    _name = "DiagEmbedBackward0"
    nattrs = 3

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        n = self.ndim + 1
        d1, d2 = _dims2(n, dim1, dim2)
        size = (self.shape[-1] if self.ndim else 1) + abs(offset)
        rest = list(self.shape[:-1])
        shape = []
        for i in range(n):
            shape.append(size if i in (d1, d2) else rest.pop(0))
        return DiagonalScatter.forward(ctx, self.reshape(self.shape or (1,)), tuple(shape), offset, d1, d2)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal of (dim1, dim2), placed as the last dimension."""
    d1, d2 = _dims2(input._data.ndim, dim1, dim2)
    return Diagonal.apply(input, int(offset), d1, d2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with the last dimension of ``input`` on their ``offset`` diagonal."""
    return DiagEmbed.apply(input, int(offset), dim1, dim2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-d: a matrix with ``input`` on a diagonal; 2-d: that diagonal as a 1-d copy."""
    n = input._data.ndim
    if n == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1)
    if n == 2:
        return DiagCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    return DiagEmbed.apply(reshape(input, (-1,)), int(offset), 0, 1)


class Trace(Op):
    """d trace(x) = grad times the identity of x's shape"""

    __slots__ = ("shape",)
    jvp = linear

    @staticmethod
    def forward(ctx, self):
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        if self.dtype == np.bool_:
            raise NotImplementedError("\"trace\" not implemented for 'Bool'")
        if ctx is not None:
            ctx.shape = self.shape
        out = np.trace(self)
        return _B.asarray(out, np.int64 if self.dtype.kind in "biu" else self.dtype)

    def backward(ctx, grad):
        n = min(ctx.shape)
        return DiagonalScatter.apply(grad.expand(n), ctx.shape, 0, 0, 1)


def trace(input: Tensor) -> Tensor:
    return Trace.apply(input)


def meshgrid(*tensors, indexing: str | None = None):
    """Coordinate grids: each 1-d input expanded over the others' lengths ('ij' or 'xy' order)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if len({t._dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._data.size for t in ts)
    n = len(ts)
    out = [Expand.apply(View.apply(t, tuple(-1 if j == i else 1 for j in range(n))), shape) for i, t in enumerate(ts)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# NOTE [foreign errors] (ember/_malloc.py): functions that compute on arrays before (or instead of) an op
_translate_errors_of(globals(), ("repeat_interleave", "broadcast_shapes", "roll", "rot90", "tile", "meshgrid",
                                 "tensor_split", "chunk", "hsplit", "vsplit", "dsplit", "unflatten"))
_args.install(globals(), (
    "reshape transpose swapaxes swapdims permute t squeeze unsqueeze flatten clone cat concat concatenate stack narrow "
    "select unbind unflatten movedim moveaxis broadcast_to repeat_interleave tile flip fliplr flipud roll rot90 hstack "
    "vstack row_stack dstack column_stack chunk tensor_split hsplit vsplit dsplit tril triu diagonal diag_embed diag "
    "diagflat trace").split(), out=("hstack", "vstack", "row_stack", "dstack", "column_stack", "diag", "tril", "triu"))


# ---------------------------------------------------------------- other spellings of flatten, split, chunk, narrow
__all__ += ["ravel", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "narrow_copy",
            "is_same_size"]


def ravel(input: Tensor) -> Tensor:
    """A 1-d view when the memory allows, else a contiguous copy."""
    _tensor_arg("ravel", input)
    return input.contiguous().view(-1)


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


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    return input.narrow(dim, start, length).clone(memory_format=None)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


_args.install(globals(), ("ravel", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
                          "narrow_copy", "is_same_size"), out=("narrow_copy",))
