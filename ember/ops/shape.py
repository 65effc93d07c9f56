"""Views and copies of one tensor's shape: view/reshape/flatten/unflatten, transpose/permute/t/movedim, expand and
broadcasting, (un)squeeze, select/narrow, clone and dtype casts, meshgrid. Joining and splitting (cat, stack, split,
chunk ...) is ops/joining.py; repeat, flip and roll, ops/rearrange.py; triangles and diagonals, ops/triangular.py."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from .. import _args
from .. import _lazy
from .._args import tensor_arg as _tensor_arg
from .. import _layout
from .._data import astype as _astype
from ._op import Op, linear, silent

__all__ = ["reshape", "view", "transpose", "permute", "t", "expand", "squeeze", "unsqueeze", "flatten", "clone",
           "narrow", "select", "unflatten", "movedim", "moveaxis", "broadcast_to", "broadcast_tensors",
           "broadcast_shapes", "meshgrid", "ravel", "narrow_copy", "is_same_size"]


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


def ravel(input: Tensor) -> Tensor:
    """A 1-d view when the memory allows, else a contiguous copy."""
    _tensor_arg("ravel", input)
    return input.contiguous().view(-1)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    return input.narrow(dim, start, length).clone(memory_format=None)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


# NOTE [foreign errors] (ember/_malloc.py): functions that compute on arrays before (or instead of) an op
_translate_errors_of(globals(), ("broadcast_shapes", "meshgrid", "unflatten"))
_args.install(globals(), (
    "reshape transpose swapaxes swapdims permute t squeeze unsqueeze flatten clone narrow select unflatten movedim "
    "moveaxis broadcast_to ravel narrow_copy is_same_size").split(), out=("narrow_copy",))


# NOTE [names of a split module] (ops/indexing.py): the joining, rearranging and triangular ops were once written
# here and build on its views; ``ember.ops.shape.<name>`` still finds them.
__getattr__ = _lazy.moved(__name__, (".joining", ".rearrange", ".triangular"))
