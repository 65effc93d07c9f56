"""What keeps a distributed job from corrupting values or hanging: every rank agreeing on a collective before it
runs, waits bounded by the group's timeout, and ranks that leave the job noticed by the ones still waiting.

# NOTE [collective fingerprints]
MPI moves bytes: an all-reduce of a (3,) float32 tensor on one rank and a (4,) or float64 one on another
reinterprets the bytes and returns wrong values without an error. Before each collective every rank of the group
all-gathers a small header (its sequence number in the group, the collective, the dtype, shape, root and reduce
op: 16 int64s) and compares every rank's with its own. Since each rank sees all headers, a mismatch raises torch's
"Detected mismatch between collectives on ranks" (TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check) on every rank,
before any data moves, so the group stays usable. A rank calling a different collective, or calling it out of
order, is caught the same way. Point-to-point send/recv carry no header.

# NOTE [watched waits]
Every wait (collectives, the fingerprint exchange, DDP's buckets) polls its MPI requests instead of blocking in
MPI_Wait: it ends with torch's timeout error once the group's ``timeout`` (``init_process_group(timeout=)``,
``new_group(timeout=)``, 30 minutes by default as torch's) has passed, and with gloo's "Connection closed by peer"
when a rank it waits for has left the job. A rank leaves by exiting (or destroying the default group): it sends a
one-int notice on a private control communicator to every other rank, which the waits probe. A rank that left
after taking part in the collective lets it finish within the grace period, so only waits that can never end
fail. MPI cannot cancel a started collective: after such an error the group must not be used again (as torch's
aborted communicators); the uncaught error ends the job (NOTE in process_group.py's ``_abort_on_exception``).
"""
from __future__ import annotations

import time
import zlib

import numpy as np

from ._mpi import mpi

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "fingerprint", "wait"]

DEFAULT_TIMEOUT_S = 1800.0  # torch's default_pg_timeout
_GRACE_S = 1.0  # how long a wait goes on after the rank it waits for has left
_LEAVE_TAG = 7
_H = 16  # header length (int64s)
_MAX_DIMS = 8
_OPS = ("BARRIER", "ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "GATHER", "SCATTER",
        "REDUCE_SCATTER", "ALLGATHER_OBJECT", "BROADCAST_OBJECT")
_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
           "complex64", "complex128", "uint16", "uint32", "uint64")
_TYPE_NAMES = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool", "ComplexFloat",
               "ComplexDouble", "UInt16", "UInt32", "UInt64")
_REDOPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")


class DistError(RuntimeError):
    """torch.distributed.DistError: an error of the distributed package."""


class DistBackendError(DistError):
    """torch.distributed.DistBackendError: the backend failed (a timeout, a peer that left)."""


class DistNetworkError(DistError):
    """torch.distributed.DistNetworkError."""


class DistStoreError(DistError):
    """torch.distributed.DistStoreError."""


for _cls in (DistError, DistBackendError, DistNetworkError, DistStoreError):
    _cls.__module__ = "ember.distributed"  # printed as torch prints torch.distributed.DistBackendError


# ----------------------------------------------------------------------------- fingerprints
def _header(seq: int, op: str, tensor, root: int, redop: int) -> np.ndarray:
    h = np.full(_H, -1, np.int64)
    h[0], h[1], h[4], h[5] = seq, _OPS.index(op), root, redop
    if tensor is not None:
        name = tensor._dtype.name
        shape = tensor._data.shape
        h[2] = _DTYPES.index(name) if name in _DTYPES else 100 + zlib.crc32(name.encode()) % 1000
        h[3] = len(shape)
        h[6] = zlib.crc32(repr(tuple(shape)).encode())
        h[8:8 + min(len(shape), _MAX_DIMS)] = shape[:_MAX_DIMS]
    return h


def _describe(h: np.ndarray) -> str:
    parts = [f"SequenceNumber={h[0]}", f"OpType={_OPS[h[1]]}"]
    if h[3] >= 0:
        dims = [int(d) for d in h[8:8 + min(int(h[3]), _MAX_DIMS)]] + (["..."] if h[3] > _MAX_DIMS else [])
        dt = _TYPE_NAMES[h[2]] if 0 <= h[2] < len(_TYPE_NAMES) else f"dtype#{h[2]}"
        parts += [f"TensorShape=[{', '.join(map(str, dims))}]", f"TensorDtypes={dt}", "TensorDeviceTypes=cpu"]
    if h[4] >= 0:
        parts.append(f"Root={h[4]}")
    if h[5] >= 0:
        parts.append(f"ReduceOp={_REDOPS[h[5]]}")
    return "CollectiveFingerPrint(" + ", ".join(parts) + ")"


def _differences(mine: np.ndarray, theirs: np.ndarray) -> str:
    aspects = []
    if mine[0] != theirs[0]:
        aspects.append(f"Sequence number: {mine[0]}vs {theirs[0]}")
    if mine[1] != theirs[1]:
        aspects.append(f"Op type: {_OPS[mine[1]]}vs {_OPS[theirs[1]]}")
    if mine[3] != theirs[3] or mine[6] != theirs[6]:
        aspects.append(f"Tensor Tensor shapes: {_shape_text(mine)}vs {_shape_text(theirs)}")
    if mine[2] != theirs[2]:
        aspects.append(f"Tensor Tensor dtypes: {_TYPE_NAMES[mine[2]]}vs {_TYPE_NAMES[theirs[2]]}")
    if mine[4] != theirs[4]:
        aspects.append(f"Root: {mine[4]}vs {theirs[4]}")
    if mine[5] != theirs[5]:
        aspects.append(f"Reduce op: {_REDOPS[mine[5]]}vs {_REDOPS[theirs[5]]}")
    return "Collectives differ in the following aspects: \t " + ", ".join(aspects)


def _shape_text(h: np.ndarray) -> str:
    return "x".join(str(int(d)) for d in h[8:8 + min(int(h[3]), _MAX_DIMS)]) or "scalar"


def fingerprint(pg, op: str, tensor=None, root: int = -1, redop: int = -1, timeout: float | None = None) -> None:
    """Check that every rank of ``pg`` runs this collective on the same dtype/shape/root/op (NOTE [collective
    fingerprints]); torch's mismatch error on every rank otherwise. ``timeout``: seconds (the group's if None)."""
    seq = pg._seq
    pg._seq = seq + 1
    if pg.size() == 1:
        return
    mine = _header(seq, op, tensor, root, redop)
    every = np.empty((pg.size(), _H), np.int64)
    wait([pg._comm.Iallgather(mine, every)], pg, op, timeout)
    me = pg.rank()
    for r in range(pg.size()):
        if r != me and not np.array_equal(every[r], mine):
            raise RuntimeError(f"Detected mismatch between collectives on ranks. Rank {pg._ranks[me]} is running "
                               f"collective: {_describe(mine)}, but Rank {pg._ranks[r]} is running collective: "
                               f"{_describe(every[r])}.{_differences(mine, every[r])}")


# ----------------------------------------------------------------------------- waits
def wait(requests: list, pg, what: str, timeout: float | None = None) -> list:
    """Wait for ``requests`` (NOTE [watched waits]); their statuses."""
    MPI = mpi()
    statuses = [MPI.Status() for _ in requests]
    if MPI.Request.Testall(requests, statuses):
        return statuses
    limit = pg._timeout if timeout is None else timeout
    start = time.monotonic()
    deadline = start + limit
    left_at = None
    pause = 0.0
    while True:
        if MPI.Request.Testall(requests, statuses):
            return statuses
        now = time.monotonic()
        gone = _departed(pg)
        if gone is not None:
            if left_at is None:
                left_at = now
            elif now - left_at > _GRACE_S:
                raise DistBackendError(f"Connection closed by peer [rank {gone}]. This is typically caused by a "
                                       "remote worker crashing. Check the logs of the remote worker before reporting "
                                       f"an error. (ember: rank {gone} left the job while rank {_me()} waited in "
                                       f"{what}.)")
        if now > deadline:
            source = "the group's timeout, init_process_group(timeout=)" if timeout is None else "the call's timeout="
            raise DistBackendError(f"Timed out waiting {int(limit * 1000)}ms for {what} operation to complete "
                                   f"(ember: rank {_me()}; {source}).")
        pause = min(pause * 2 or 2e-5, 5e-3)  # spin briefly, then back off to a few ms
        time.sleep(pause)


class _Control:
    """The control communicator (a duplicate of the world) and what arrived on it."""

    comm = None
    departed: set = set()
    sent = ()


_ctl = _Control()


def start(world_comm) -> None:
    """Set up the control channel for a new default group."""
    _ctl.comm = world_comm.Dup()
    _ctl.departed = set()
    _ctl.sent = ()


def _me() -> int:
    return mpi().COMM_WORLD.Get_rank()


def _departed(pg) -> int | None:
    """A global rank of ``pg`` that has left the job, if any (draining the notices that arrived)."""
    comm = _ctl.comm
    if comm is None:
        return None
    MPI = mpi()
    status = MPI.Status()
    while comm.Iprobe(source=MPI.ANY_SOURCE, tag=_LEAVE_TAG, status=status):
        buf = np.empty(1, np.int64)
        comm.Recv(buf, source=status.Get_source(), tag=_LEAVE_TAG)
        _ctl.departed.add(int(buf[0]))
    for r in pg._ranks:
        if r in _ctl.departed:
            return r
    return None


def announce_exit() -> None:
    """Tell every other rank that this one is leaving (the waits of those still in a collective with it end)."""
    comm = _ctl.comm
    if comm is None or _ctl.sent:
        return
    me = comm.Get_rank()
    note = np.array([me], np.int64)
    _ctl.sent = tuple(comm.Isend(note, dest=r, tag=_LEAVE_TAG) for r in range(comm.Get_size()) if r != me) + (note,)
    for _ in range(100):  # small messages go out eagerly; give MPI a moment to push them
        if mpi().Request.Testall(list(_ctl.sent[:-1])):
            break
        time.sleep(1e-3)
