"""Collectives and point-to-point messages on ember tensors, in place, as torch.distributed's.

Every operation starts MPI's non-blocking call on the tensor's array (a contiguous staging copy when the tensor
is a strided view) and returns a ``Work``; without ``async_op`` it is waited for at once. ``Work.wait()`` runs
the step that finishes the result: AVG's division, copying staged results back into the tensors. Before a
collective starts, the ranks check that they agree on it (NOTE [collective fingerprints] in _guard.py), and every
wait is bounded by the group's timeout and ends when a rank it waits for has left (NOTE [watched waits]).
"""
from __future__ import annotations

import enum
import pickle

import numpy as np

from .._device import _check_device
from .._tensor import Tensor
from ._guard import fingerprint, wait as _wait
from ._mpi import mpi
from .process_group import ProcessGroup, _group_rank, _resolve, _seconds, get_global_rank

__all__ = ["ReduceOp", "Work", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather",
           "scatter", "reduce", "reduce_scatter", "send", "recv", "isend", "irecv", "barrier",
           "all_gather_object", "broadcast_object_list"]


class _RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """Reduction operations: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``."""

    RedOpType = _RedOpType
    SUM = _RedOpType.SUM
    AVG = _RedOpType.AVG
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX
    BAND = _RedOpType.BAND
    BOR = _RedOpType.BOR
    BXOR = _RedOpType.BXOR
    PREMUL_SUM = _RedOpType.PREMUL_SUM


_BITWISE = (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR)


def _mpi_op(op, arr: np.ndarray, name: str):
    """The MPI reduction for ``op`` on ``arr``'s dtype (bool reduces logically; AVG is SUM, divided later)."""
    MPI = mpi()
    op = _RedOpType(op)
    kind = arr.dtype.kind
    if op is _RedOpType.PREMUL_SUM:
        raise RuntimeError(f"{name}: ReduceOp.PREMUL_SUM is not supported by the MPI backend")
    if kind == "b":
        if op is _RedOpType.AVG:
            raise ValueError("Cannot use ReduceOp.AVG with boolean inputs")
        return {_RedOpType.SUM: MPI.LOR, _RedOpType.MAX: MPI.LOR, _RedOpType.BOR: MPI.LOR,
                _RedOpType.PRODUCT: MPI.LAND, _RedOpType.MIN: MPI.LAND, _RedOpType.BAND: MPI.LAND,
                _RedOpType.BXOR: MPI.LXOR}[op]
    if kind == "f" and op in _BITWISE:
        raise RuntimeError(f"{name}: Cannot use ReduceOp.{op.name} with floating point tensors")
    return {_RedOpType.SUM: MPI.SUM, _RedOpType.AVG: MPI.SUM, _RedOpType.PRODUCT: MPI.PROD,
            _RedOpType.MIN: MPI.MIN, _RedOpType.MAX: MPI.MAX, _RedOpType.BAND: MPI.BAND,
            _RedOpType.BOR: MPI.BOR, _RedOpType.BXOR: MPI.BXOR}[op]


def _average(arr: np.ndarray, n: int) -> None:
    """In-place AVG finish: true division for floats, division truncated toward zero for integers."""
    if arr.dtype.kind == "f":
        arr /= n
    else:
        np.copyto(arr, np.trunc(arr / n).astype(arr.dtype))


class Work:
    """A started operation: ``wait()`` blocks until it is done (and returns True), ``is_completed()`` polls."""

    def __init__(self, request, pg: ProcessGroup, what: str, finish=None) -> None:
        self._request = request
        self._pg = pg
        self._what = what
        self._finish = finish
        self._status = None
        self._source = -1
        self._timeout = None  # seconds, when the call set its own (barrier); else the group's

    def _complete(self) -> None:
        self._request = None
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish(self)

    def wait(self, timeout=None) -> bool:
        """Block until done, at most ``timeout`` (a timedelta; the group's timeout when None)."""
        if self._request is not None:
            limit = self._timeout if timeout is None else _seconds(timeout)
            (self._status,) = _wait([self._request], self._pg, self._what, limit)
            self._complete()
        return True

    def is_completed(self) -> bool:
        if self._request is not None:
            status = mpi().Status()
            if self._request.Test(status):
                self._status = status
                self._complete()
        return self._request is None

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def source_rank(self) -> int:
        """The sender's rank of a finished ``irecv``."""
        self.wait()
        return self._source


def _run(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


# ----------------------------------------------------------------------------- argument checks and staging
def _check_tensor(t, param: str = "tensor") -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_list(ts, param: str) -> None:
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead.")


def _staged(t: Tensor) -> np.ndarray:
    """A C-contiguous array holding ``t``'s values: its own array when possible, else a copy."""
    arr = t._data
    if arr.flags.c_contiguous and arr.flags.writeable:
        return arr
    return np.ascontiguousarray(arr)


def _write_back(t: Tensor, arr: np.ndarray) -> None:
    if arr is not t._data:
        np.copyto(t._data, arr.reshape(t._data.shape))


def _check_like(ts, ref: Tensor, name: str, what: str) -> None:
    for i, t in enumerate(ts):
        if t._dtype is not ref._dtype:
            raise RuntimeError(f"{name}: invalid tensor type at index {i} (expected {ref._dtype._scalar_name}, "
                               f"got {t._dtype._scalar_name})")
        if t._data.shape != ref._data.shape:
            raise RuntimeError(f"{name}: invalid tensor size at index {i} (expected {_shape(ref)}, "
                               f"got {_shape(t)})")


def _shape(t: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t._data.shape) + ")"


def _check_list_len(ts, pg: ProcessGroup, name: str, what: str) -> None:
    if len(ts) != pg.size():
        raise RuntimeError(f"{name}: Incorrect {what} list size {len(ts)}. {what.capitalize()} list size should "
                           f"be {pg.size()}, same as size of the process group.")


def _rooted(tensor: Tensor, ts, name: str, group, root, group_root):
    """Checks of a rooted list collective (gather's outputs, scatter's inputs, the list given on the root only):
    ``(group, root's group rank, whether this is the root, the list)``, or None off the group."""
    _check_tensor(tensor)
    param, role, what = (("gather_list", "destination", "output") if name == "gather" else
                         ("scatter_list", "source", "input"))
    if ts:
        _check_list(ts, param)
    else:
        ts = []
    pg = _resolve(group, name)
    if pg is None:
        return None
    root = _group_rank(pg, root, group_root)
    mine = pg.rank() == root
    if mine:
        if not ts:
            raise ValueError(f"Argument ``{param}`` must be specified on {role} rank.")
        _check_list_len(ts, pg, name, what)
        _check_like(ts, tensor, name, what)
    elif ts:
        raise ValueError(f"Argument ``{param}`` must NOT be specified on non-{role} ranks.")
    return pg, root, mine, ts


# ----------------------------------------------------------------------------- collectives
def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None, async_op: bool = False):
    """Reduce ``tensor`` across the group with ``op``; every process gets the result in ``tensor``."""
    _check_tensor(tensor)
    pg = _resolve(group, "all_reduce")
    if pg is None:
        return None
    fingerprint(pg, "ALLREDUCE", tensor, redop=int(op))
    arr = _staged(tensor)
    mop = _mpi_op(op, arr, "all_reduce")
    req = pg._comm.Iallreduce(mpi().IN_PLACE, arr, op=mop)

    def finish(_):
        if op == ReduceOp.AVG:
            _average(arr, pg.size())
        _write_back(tensor, arr)

    return _run(Work(req, pg, "all_reduce", finish), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (other ranks keep their tensor)."""
    _check_tensor(tensor)
    pg = _resolve(group, "reduce")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst)
    fingerprint(pg, "REDUCE", tensor, root, int(op))
    arr = _staged(tensor)
    mop = _mpi_op(op, arr, "reduce")
    mine = pg.rank() == root
    req = pg._comm.Ireduce(mpi().IN_PLACE if mine else arr, arr if mine else None, op=mop, root=root)

    def finish(_):
        if mine:
            if op == ReduceOp.AVG:
                _average(arr, pg.size())
            _write_back(tensor, arr)

    return _run(Work(req, pg, "reduce", finish), async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None):
    """Copy ``tensor`` from rank ``src`` into ``tensor`` on every process of the group."""
    _check_tensor(tensor)
    pg = _resolve(group, "broadcast")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src)
    fingerprint(pg, "BROADCAST", tensor, root)
    arr = _staged(tensor)
    req = pg._comm.Ibcast(arr, root=root)
    return _run(Work(req, pg, "broadcast", lambda _: _write_back(tensor, arr)), async_op)


def all_gather(tensor_list, tensor: Tensor, group: ProcessGroup | None = None, async_op: bool = False):
    """Every process's ``tensor`` into ``tensor_list`` (one entry per rank), on every process."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _resolve(group, "all_gather")
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"all_gather: invalid output tensor list at index 0 (expected length {pg.size()}, "
                           f"got {len(tensor_list)})")
    _check_like(tensor_list, tensor, "all_gather", "output")
    fingerprint(pg, "ALLGATHER", tensor)
    send = np.ascontiguousarray(tensor._data)
    out = np.empty((pg.size(),) + send.shape, send.dtype)
    req = pg._comm.Iallgather(send, out)

    def finish(_):
        for t, a in zip(tensor_list, out):
            np.copyto(t._data, a)

    return _run(Work(req, pg, "all_gather", finish), async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False):
    """Every process's ``input_tensor`` concatenated (or stacked) along dim 0 into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor._data.size != input_tensor._data.size * pg.size() or output_tensor._dtype is not \
            input_tensor._dtype:
        raise ValueError("output tensor size must be equal to world_size times input tensor size, with the "
                         "input's dtype")
    fingerprint(pg, "_ALLGATHER_BASE", input_tensor)
    send = np.ascontiguousarray(input_tensor._data)
    out = _staged(output_tensor)
    req = pg._comm.Iallgather(send, out)
    return _run(Work(req, pg, "all_gather_into_tensor", lambda _: _write_back(output_tensor, out)), async_op)


def gather(tensor: Tensor, gather_list=None, dst: int | None = None, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None):
    """Every process's ``tensor`` into ``gather_list`` on rank ``dst`` (other ranks pass no list)."""
    rooted = _rooted(tensor, gather_list, "gather", group, dst, group_dst)
    if rooted is None:
        return None
    pg, root, mine, gather_list = rooted
    fingerprint(pg, "GATHER", tensor, root)
    send = np.ascontiguousarray(tensor._data)
    out = np.empty((pg.size(),) + send.shape, send.dtype) if mine else None
    req = pg._comm.Igather(send, out, root=root)

    def finish(_):
        if mine:
            for t, a in zip(gather_list, out):
                np.copyto(t._data, a)

    return _run(Work(req, pg, "gather", finish), async_op)


def scatter(tensor: Tensor, scatter_list=None, src: int | None = None, group: ProcessGroup | None = None,
            async_op: bool = False, group_src: int | None = None):
    """Entry ``i`` of ``scatter_list`` on rank ``src`` into ``tensor`` on group rank ``i``."""
    rooted = _rooted(tensor, scatter_list, "scatter", group, src, group_src)
    if rooted is None:
        return None
    pg, root, mine, scatter_list = rooted
    fingerprint(pg, "SCATTER", tensor, root)
    send = np.stack([t._data for t in scatter_list]) if mine else None
    arr = _staged(tensor)
    req = pg._comm.Iscatter(send, arr, root=root)
    return _run(Work(req, pg, "scatter", lambda _: _write_back(tensor, arr)), async_op)


def reduce_scatter(output: Tensor, input_list, op=ReduceOp.SUM, group: ProcessGroup | None = None,
                   async_op: bool = False):
    """Reduce entry ``i`` of every process's ``input_list`` with ``op`` into ``output`` on group rank ``i``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _check_list_len(input_list, pg, "reduce_scatter", "input")
    _check_like(input_list, output, "reduce_scatter", "input")
    fingerprint(pg, "REDUCE_SCATTER", output, redop=int(op))
    send = np.stack([t._data for t in input_list])
    arr = _staged(output)
    req = pg._comm.Ireduce_scatter_block(send, arr, op=_mpi_op(op, arr, "reduce_scatter"))

    def finish(_):
        if op == ReduceOp.AVG:
            _average(arr, pg.size())
        _write_back(output, arr)

    return _run(Work(req, pg, "reduce_scatter", finish), async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every process of the group has reached the barrier, at most ``timeout`` (a timedelta; the
    group's timeout when None). ``device_ids`` (a list) names accelerator devices, which MPI does not use."""
    pg = _resolve(group, "barrier")
    if pg is None:
        return None
    if device_ids is not None and not isinstance(device_ids, list):
        raise TypeError("Invalid function argument: device_ids type should be List[int]")
    seconds = None if timeout is None else _seconds(timeout)
    fingerprint(pg, "BARRIER", timeout=seconds)
    work = Work(pg._comm.Ibarrier(), pg, "BARRIER")
    work._timeout = seconds
    return _run(work, async_op)


# ----------------------------------------------------------------------------- point to point
def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, kind: str) -> int:
    if rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    peer = _group_rank(pg, rank, group_rank)
    if peer == pg.rank():
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the current "
                         "process.")
    return peer


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``."""
    _check_tensor(tensor)
    pg = _resolve(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination")
    send = np.ascontiguousarray(tensor._data)
    work = Work(pg._comm.Isend(send, dest=peer, tag=tag), pg, "send")
    work._keep = send  # the buffer must outlive the request
    return work


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None)."""
    _check_tensor(tensor)
    pg = _resolve(group, "irecv")
    if pg is None:
        return None
    MPI = mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "source")
    arr = _staged(tensor)

    def finish(work):
        work._source = get_global_rank(pg, work._status.Get_source())
        _write_back(tensor, arr)

    return Work(pg._comm.Irecv(arr, source=peer, tag=tag), pg, "recv", finish)


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has been sent."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


# ----------------------------------------------------------------------------- picklable objects
def _pickled(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def all_gather_object(object_list: list, obj, group: ProcessGroup | None = None) -> None:
    """Every process's ``obj`` (pickled) into ``object_list``."""
    pg = _resolve(group, "all_gather_object")
    if pg is None:
        return
    fingerprint(pg, "ALLGATHER_OBJECT")
    data = _pickled(obj)
    sizes = np.empty(pg.size(), np.int64)
    _wait([pg._comm.Iallgather(np.array([data.size], np.int64), sizes)], pg, "all_gather_object")
    buf = np.empty(int(sizes.sum()), np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    _wait([pg._comm.Iallgatherv(data, [buf, sizes, offsets, mpi().BYTE])], pg, "all_gather_object")
    object_list[:] = [pickle.loads(buf[o:o + n].tobytes()) for o, n in zip(offsets, sizes)]


def broadcast_object_list(object_list: list, src: int | None = None, group: ProcessGroup | None = None,
                          device=None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s items with rank ``src``'s (pickled; ``device``, where torch stages the bytes,
    must be the CPU here)."""
    pg = _resolve(group, "broadcast_object_list")
    if pg is None:
        return
    root = _group_rank(pg, src, group_src)
    _check_device(device)
    fingerprint(pg, "BROADCAST_OBJECT", root=root)
    mine = pg.rank() == root
    data = _pickled(list(object_list)) if mine else None
    size = np.array([data.size if mine else 0], np.int64)
    _wait([pg._comm.Ibcast(size, root=root)], pg, "broadcast_object_list")
    buf = data.copy() if mine else np.empty(int(size[0]), np.uint8)
    _wait([pg._comm.Ibcast(buf, root=root)], pg, "broadcast_object_list")
    object_list[:] = pickle.loads(buf.tobytes())
