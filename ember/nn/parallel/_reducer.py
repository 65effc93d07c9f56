"""The gradient reducer of DistributedDataParallel: buckets, readiness, overlapped all-reduce, final copy-back.

# NOTE [DDP reducer]
Parameters are grouped into buckets (one dtype each) in reverse registration order, which is roughly the order
backward produces their gradients; with the default ``bucket_cap_mb`` (25) the first bucket is capped at 1 MiB
so communication starts early (torch's rule), the others at ``bucket_cap_mb``. A post-accumulate-grad hook on every parameter copies its gradient, divided by the
world size, into its slot of the bucket's flat array; when a bucket's last gradient has arrived, its
non-blocking in-place all-reduce (MPI Iallreduce, SUM) starts while backward goes on. Buckets start strictly in
index order so every rank issues the same collectives in the same order. Each hook also polls the requests in
flight (MPI progresses non-blocking collectives only inside MPI calls). A final callback queued on the engine
waits for all of them once backward has finished and copies the averaged values back into ``.grad``.
With ``find_unused_parameters`` the parameters the forward's output cannot reach are marked ready (zeros) right
after forward, and a per-parameter "used" map is reduced with the gradients: a parameter no rank used keeps
``grad`` untouched (torch's rule).
"""
from __future__ import annotations

import time

import numpy as np

from ...autograd.engine import queue_callback
from ...autograd.graph import _reachable_leaves
from ..._tensor import Tensor, _wrap
from ...distributed._mpi import mpi
from ...distributed import _guard

FIRST_BUCKET_BYTES = 1024 * 1024  # the first bucket's cap with the default bucket_cap_mb


class _Bucket:
    __slots__ = ("index", "params", "offsets", "flat", "pending", "request")

    def __init__(self, index: int, params: list) -> None:
        self.index = index
        self.params = params  # parameter indices
        self.offsets = []
        self.flat = None
        self.pending = 0
        self.request = None


def assign_buckets(params: list, cap_bytes: int, first_cap_bytes: int) -> list[list[int]]:
    """Parameter indices per bucket: reverse order, one dtype per bucket, a bucket closes once it reaches its cap."""
    buckets, open_ = [], {}  # dtype -> (indices, bytes)
    for i in reversed(range(len(params))):
        p = params[i]
        key = p._dtype
        idx, size = open_.get(key, ([], 0))
        idx.append(i)
        size += p._data.nbytes
        cap = min(first_cap_bytes, cap_bytes) if not buckets else cap_bytes
        if size >= cap:
            buckets.append(idx)
            open_.pop(key, None)
        else:
            open_[key] = (idx, size)
    buckets.extend(idx for idx, _ in open_.values())
    return buckets


class Reducer:
    """Averages the gradients of ``params`` over the process group during backward (NOTE [DDP reducer])."""

    def __init__(self, params: list, pg, cap_bytes: int, find_unused: bool, first_cap_bytes: int | None = None) -> None:
        self.params = params
        self.pg = pg
        self.world = pg.size()
        self.find_unused = find_unused
        self.buckets = []
        self.where = [None] * len(params)  # param index -> (bucket, offset)
        for b, idx in enumerate(assign_buckets(params, cap_bytes, first_cap_bytes or cap_bytes)):
            bucket = _Bucket(b, idx)
            offset = 0
            for i in idx:
                bucket.offsets.append(offset)
                self.where[i] = (bucket, offset)
                offset += params[i]._data.size
            bucket.flat = np.zeros(offset, params[idx[0]]._dtype.np)
            self.buckets.append(bucket)
        self.armed = False  # a forward with gradient sync ran: its backward reduces
        self.marked = np.zeros(len(params), bool)
        self.used = np.zeros(len(params), np.uint8)
        self.next_bucket = 0
        self.in_flight = []
        self.callback_queued = False
        self.unfinished = None  # indices of params that got no gradient in the last synced backward
        self.overlap = True  # False: every all-reduce starts at the end of backward (the benchmark's baseline)
        self.last_wait_s = 0.0  # time the last finalize spent waiting for all-reduces (what overlap did not hide)
        self.handles = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]

    # ------------------------------------------------------------------ per iteration
    def prepare_for_backward(self, outputs) -> None:
        """Arm the reducer after a forward with gradient sync; with find_unused, mark unreachable params ready."""
        if self.armed:  # the previous synced forward's backward never ran (or reached no parameter)
            self.unfinished = np.flatnonzero(~self.marked).tolist()
            self.armed = False
        if self.unfinished is not None:
            bad, self.unfinished = self.unfinished, None
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss.\nParameter indices which did not receive grad for rank "
                f"{self.pg.rank()}: {' '.join(map(str, bad))}")
        self._reset()
        self.armed = True
        if self.find_unused:
            reached = _reachable_leaves([t for t in outputs if isinstance(t, Tensor)])
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self._mark(i, None)
            # the backward through an output finishes the reduction even when no parameter here gets a gradient
            # (they may all be unused on this rank while other ranks wait for its buckets)
            for t in outputs:
                if isinstance(t, Tensor) and t._requires_grad:
                    t.register_hook(self._output_hook)

    def _output_hook(self, grad):
        if self.armed:
            self._queue_finalize()

    def _queue_finalize(self) -> None:
        if not self.callback_queued:
            self.callback_queued = True
            queue_callback(self.finalize)

    def _reset(self) -> None:
        self.marked[:] = False
        self.used[:] = 0
        self.next_bucket = 0
        self.in_flight = []
        self.callback_queued = False
        for b in self.buckets:
            b.pending = len(b.params)
            b.request = None

    def _hook(self, i: int):
        def hook(p: Tensor) -> None:
            if not self.armed:
                return
            self._queue_finalize()
            if self.marked[i]:
                raise RuntimeError(
                    f"Expected to mark a variable ready only once. Parameter index {i} has been marked as ready "
                    "twice in this iteration: a parameter may be used in several backward passes between two "
                    "forwards, or shared by reentrant backward passes.")
            self.used[i] = 1
            self._mark(i, p._grad)
            if self.in_flight:
                mpi().Request.Testall(self.in_flight)  # let MPI progress the all-reduces already started

        return hook

    def _mark(self, i: int, grad: Tensor | None) -> None:
        bucket, off = self.where[i]
        n = self.params[i]._data.size
        if grad is None:
            bucket.flat[off:off + n] = 0
        else:
            np.divide(grad._data.reshape(-1), self.world, out=bucket.flat[off:off + n], casting="unsafe")
        self.marked[i] = True
        bucket.pending -= 1
        if bucket.pending == 0 and self.overlap:
            self._launch_ready()

    def _launch_ready(self) -> None:
        MPI = mpi()
        comm = self.pg._comm
        buckets = self.buckets
        while self.next_bucket < len(buckets) and buckets[self.next_bucket].pending == 0:
            b = buckets[self.next_bucket]
            b.request = comm.Iallreduce(MPI.IN_PLACE, b.flat, op=MPI.SUM)
            self.in_flight.append(b.request)
            self.next_bucket += 1

    def finalize(self) -> None:
        """End of backward: params without a gradient (find_unused), wait for every bucket, copy back."""
        self.armed = False
        MPI = mpi()
        if self.find_unused:
            for i in np.flatnonzero(~self.marked):
                self._mark(int(i), None)
            used = self.used.copy()
            _guard.wait([self.pg._comm.Iallreduce(MPI.IN_PLACE, used, op=MPI.MAX)], self.pg, "all_reduce")
        else:
            used = None
            missing = np.flatnonzero(~self.marked)
            if missing.size:
                self.unfinished = missing.tolist()
        self._launch_ready()  # buckets not started yet (overlap off)
        t0 = time.perf_counter()
        if self.in_flight:  # bounded by the group's timeout, ended by a rank that left (NOTE [watched waits])
            _guard.wait(self.in_flight, self.pg, "all_reduce")
        self.last_wait_s = time.perf_counter() - t0
        for b in self.buckets[:self.next_bucket]:
            for i, off in zip(b.params, b.offsets):
                if used is not None and not used[i]:
                    continue  # no rank used it: its grad stays as it was
                p = self.params[i]
                values = b.flat[off:off + p._data.size].reshape(p._data.shape)
                g = p._grad
                if g is None:
                    p._grad = _wrap(values.copy(), p._dtype)
                elif g._data.flags.writeable:
                    np.copyto(g._data, values)
                else:
                    g._data = values.copy()
        self.in_flight = []

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
