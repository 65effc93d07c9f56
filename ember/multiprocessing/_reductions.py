"""Tensors through process boundaries: shared memory and the pickling that maps it in the receiver.

# NOTE [shared tensors]
``share_memory_`` moves the memory that holds a tensor (its root array) into anonymous shared memory (a
``memfd``), copying the bytes and rebuilding the tensor's view over it; a view tensor moves its base tensor,
so the two keep sharing (other existing views of that memory keep the old copy). Pickling a tensor through
``multiprocessing`` (a Queue, a Pipe, a Process's arguments) shares it first and sends a duplicate of the file
descriptor (``reduction.DupFd``) with the view's geometry; the receiver maps the same memory, so writes on
either side are seen by both, as torch's file_descriptor strategy. The kernel frees the memory once every
process has dropped its mapping and descriptor. Gradients are not sent, as in torch.
"""
from __future__ import annotations

import mmap
import os
import weakref
from multiprocessing import reduction

import numpy as np

from .._tensor import Tensor
from ..storage import _bytes_of, _root

__all__ = ["init_reductions", "share_memory_", "is_shared_array"]

_SHARED: dict = {}  # data address of a shared root array -> (its memfd, its bytes)


def is_shared_array(arr: np.ndarray) -> bool:
    """Whether ``arr``'s memory is shared memory made here or received from another process."""
    root = _root(arr)
    return root.__array_interface__["data"][0] in _SHARED


def _adopt(fd: int, nbytes: int) -> np.ndarray:
    """A uint8 array over the shared memory behind ``fd``, remembered until the array is freed."""
    buf = mmap.mmap(fd, nbytes)
    arr = np.frombuffer(buf, dtype=np.uint8)
    addr = arr.__array_interface__["data"][0]
    _SHARED[addr] = (fd, nbytes)
    weakref.finalize(arr, _forget, addr, fd)
    return arr


def _forget(addr: int, fd: int) -> None:
    _SHARED.pop(addr, None)
    try:
        os.close(fd)
    except OSError:
        pass


def _view(raw: np.ndarray, dtype: np.dtype, shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """The tensor's view, its base chain leading to ``raw`` (the shared bytes)."""
    return np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=strides)


def share_memory_(t: Tensor) -> Tensor:
    """Move ``t``'s memory to shared memory (NOTE [shared tensors]); a no-op when it is already there."""
    if t._base is not None and t._base is not t:
        old_root = _root(t._data)
        offset = _offset(t._data, old_root)
        share_memory_(t._base)
        new_root = _root(t._base._data)
        if new_root is not old_root:  # rebuild the view over the base's new memory
            t._data = _view(new_root, t._data.dtype, t._data.shape, t._data.strides, offset)
        return t
    arr = t._data
    if type(arr) is not np.ndarray or arr.nbytes == 0 or is_shared_array(arr):
        return t
    root = _root(arr)
    old = _bytes_of(root)
    fd = os.memfd_create("ember_shared_tensor", getattr(os, "MFD_CLOEXEC", 0))
    os.ftruncate(fd, old.size)
    raw = _adopt(fd, old.size)
    raw[...] = old
    offset = _offset(arr, root)
    t._data = _view(raw, arr.dtype, arr.shape, arr.strides, offset)
    return t


def _offset(arr: np.ndarray, root: np.ndarray) -> int:
    """Bytes from the lowest address of ``root``'s memory to ``arr``'s first element."""
    return arr.__array_interface__["data"][0] - _bytes_of(root).__array_interface__["data"][0]


def _rebuild(dupfd, nbytes: int, offset: int, shape: tuple, strides: tuple, dtype, requires_grad: bool, cls):
    raw = _adopt(dupfd.detach(), nbytes)
    data = _view(raw, dtype.np, shape, strides, offset)
    from .._tensor import _wrap

    t = _wrap(data, dtype)
    if cls is not Tensor:
        t = cls(t, requires_grad=requires_grad) if _is_parameter(cls) else t
    if requires_grad and not t.requires_grad:
        t.requires_grad_(True)
    return t


def _is_parameter(cls) -> bool:
    from ..nn.parameter import Parameter

    return issubclass(cls, Parameter)


def _reduce_tensor(t: Tensor):
    if t._grad_fn is not None and t._requires_grad:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    share_memory_(t)
    arr = t._data
    if not is_shared_array(arr):  # nothing to share (no bytes): send the values
        return (_rebuild_plain, (arr.copy(), t._dtype, t._requires_grad, type(t)))
    root = _root(arr)
    fd, nbytes = _SHARED[root.__array_interface__["data"][0]]
    return (_rebuild, (reduction.DupFd(fd), nbytes, _offset(arr, root), arr.shape, arr.strides, t._dtype,
                       t._requires_grad, type(t)))


def _rebuild_plain(arr: np.ndarray, dtype, requires_grad: bool, cls):
    from .._tensor import _wrap

    t = _wrap(arr, dtype)
    if _is_parameter(cls):
        return cls(t, requires_grad=requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def init_reductions() -> None:
    """Register the tensor reductions with multiprocessing's pickler (tensors and Parameters)."""
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        reduction.ForkingPickler.register(cls, _reduce_tensor)
