"""Process groups over MPI communicators: the default (world) group, sub-groups, ranks.

The world group is a duplicate of ``MPI.COMM_WORLD``, so ember's traffic never mixes with a program's own
mpi4py messages; ``new_group`` splits it (every process calls it, as in torch).
"""
from __future__ import annotations

import atexit
import sys
import time
import warnings
from datetime import timedelta

from ._mpi import mpi, available
from . import _guard

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "init_process_group", "destroy_process_group",
           "is_initialized", "is_mpi_available", "is_gloo_available", "is_nccl_available", "get_rank",
           "get_world_size", "get_backend", "new_group", "get_global_rank", "get_group_rank",
           "get_process_group_ranks"]

_FORWARD_OUTPUT_S = 0.5
_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


class Backend(str):
    """A backend name; ember runs every process group on MPI (``"gloo"`` is accepted as a CPU alias)."""

    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str) -> "Backend":
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """A set of processes that run collectives together: an MPI communicator and the global ranks in it."""

    def __init__(self, comm, ranks, timeout: float = _guard.DEFAULT_TIMEOUT_S) -> None:
        self._comm = comm
        self._ranks = tuple(ranks)  # global rank of each group rank
        self._timeout = timeout  # seconds a wait may take (NOTE [watched waits] in _guard.py)
        self._seq = 0  # collectives run so far (NOTE [collective fingerprints])

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return Backend.MPI

    def __repr__(self) -> str:
        return f"ProcessGroup(backend=mpi, ranks={list(self._ranks)})"


class _GroupMeta(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:  # noqa: N802 - torch's name
        return _state.world


class GroupMember(metaclass=_GroupMeta):
    """``GroupMember.WORLD`` is the default group (None before ``init_process_group``)."""

    NON_GROUP_MEMBER = -100  # what ``new_group`` returns on processes outside the group, as torch


group = GroupMember  # torch.distributed.group.WORLD


class _State:
    world: ProcessGroup | None = None
    groups: list = []
    excepthook = None
    announcing = False


def _seconds(timeout) -> float:
    """A ``timeout=`` argument (a timedelta, as torch requires) in seconds; torch's default when None."""
    if timeout is None:
        return _guard.DEFAULT_TIMEOUT_S
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of typedatetime.timedelta, got {type(timeout)}")
    return timeout.total_seconds()


_state = _State()


def is_mpi_available() -> bool:
    """Whether the MPI backend can run (mpi4py importable)."""
    return available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether the default process group has been initialised."""
    return _state.world is not None


def _check_backend(backend) -> None:
    name = Backend(backend if backend is not None else Backend.MPI)
    if name.split(":")[-1] in (Backend.NCCL, "cuda", "xccl"):
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in (Backend.MPI, Backend.GLOO, "cpu:mpi", "cpu:gloo"):
        raise ValueError(f"Invalid backend: '{backend}' (ember.distributed runs on MPI: backend='mpi')")


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None, _ranks=None) -> None:
    """Join the processes that ``mpiexec`` started into the default group (rank and size come from MPI).

    ``backend`` is ``"mpi"`` (or ``None``; ``"gloo"`` runs on MPI too). ``world_size``/``rank``, when given, must
    agree with MPI's. MPI is the rendezvous: ``init_method``/``store``/``group_name``/``pg_options`` are checked as
    torch checks them and otherwise change nothing (the processes mpiexec started are the group); ``device_id`` may
    only be a CPU device. An uncaught exception on any rank aborts the whole job (no rank hangs in a collective).
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None and not world_size > 0:
        raise AssertionError("world_size must be positive if using store")
    if store is not None and not rank >= 0:
        raise AssertionError("rank must be non-negative if using store")
    if isinstance(device_id, int):
        raise ValueError("device_id is an int, but no accelerator support is found from the current compilation. "
                         "Please use a different compiled version that supports your accelerator.")
    if device_id is not None and device_id.type != "cpu":
        raise ValueError(f"device_id {device_id} does not match the current compilation's accelerator support: None. "
                         "Please use a different compiled version that supports your accelerator.")
    seconds = _seconds(timeout)
    _check_backend(backend)
    MPI = mpi()
    world = MPI.COMM_WORLD
    if world_size not in (-1, None) and world_size != world.Get_size():
        raise ValueError(f"world_size={world_size} but MPI started {world.Get_size()} processes")
    if rank not in (-1, None) and rank != world.Get_rank():
        raise ValueError(f"rank={rank} but this process is MPI rank {world.Get_rank()}")
    comm = world.Dup()
    _state.world = ProcessGroup(comm, range(comm.Get_size()), seconds)
    _state.groups = []
    _guard.start(world)
    if not _state.announcing:
        atexit.register(_guard.announce_exit)  # NOTE [watched waits]: ranks still waiting for this one stop
        _state.announcing = True
    if comm.Get_size() > 1 and _state.excepthook is None:
        _state.excepthook = sys.excepthook
        sys.excepthook = _abort_on_exception


def _abort_on_exception(kind, value, tb) -> None:
    """Print the traceback, then end every rank: the others may be waiting for this one in a collective."""
    prev = _state.excepthook or sys.__excepthook__
    prev(kind, value, tb)
    abort_job(1)


def abort_job(code: int) -> None:
    """End every rank of the job with exit status ``code`` (after giving the launcher time to forward output)."""
    try:
        sys.stderr.flush()
        sys.stdout.flush()
        time.sleep(_FORWARD_OUTPUT_S)  # mpiexec forwards output asynchronously and stops at the abort
    finally:
        mpi().COMM_WORLD.Abort(code)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group``; without one, every group and the default group (MPI itself stays up until exit)."""
    if _state.world is None:
        raise ValueError(_NOT_INIT)
    if group is not None and group is not _state.world:
        if isinstance(group, ProcessGroup) and group in _state.groups:
            _state.groups.remove(group)
            group._comm.Free()
        return
    _guard.announce_exit()  # a rank that leaves the group leaves the job's collectives (NOTE [watched waits])
    for g in _state.groups:
        g._comm.Free()
    _state.world._comm.Free()
    _state.world = None
    _state.groups = []
    if _state.excepthook is not None:
        sys.excepthook = _state.excepthook
        _state.excepthook = None


def _world() -> ProcessGroup:
    if _state.world is None:
        raise ValueError(_NOT_INIT)
    return _state.world


def _resolve(group, op_name: str | None = None) -> ProcessGroup | None:
    """The ProcessGroup of a ``group=`` argument, or None (after a warning) on a process outside it."""
    world = _world()
    if group is None or group is GroupMember:
        return world
    if group == GroupMember.NON_GROUP_MEMBER:
        if op_name is not None:
            warnings.warn(f"Running {op_name} on global rank {world.rank()} which does not belong to the given "
                          "group.", stacklevel=3)
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group if None); -1 outside the group."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group``; -1 outside the group."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """Always ``"mpi"``."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(Backend.MPI)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(_resolve(group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group``."""
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of the process with global rank ``global_rank``."""
    pg = _resolve(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def _group_rank(pg: ProcessGroup, global_rank: int | None, group_rank: int | None) -> int:
    """torch's rule for ``src``/``group_src`` style pairs: one of them (global rank 0 when both are None)."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    return get_group_rank(pg, 0 if global_rank is None else global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization: bool = False,
              group_desc=None, device_id=None, sort_ranks: bool = True):
    """A group of the given global ranks (all if None). Every process of the default group must call it;
    processes outside the group get ``GroupMember.NON_GROUP_MEMBER``. ``backend`` is checked as
    init_process_group's; ``pg_options``/``use_local_synchronization``/``group_desc``/``device_id`` change nothing
    with MPI (every process of the default group calls it, which local synchronization does not need)."""
    world = _world()
    if backend is not None:
        _check_backend(backend)
    seconds = world._timeout if timeout is None else _seconds(timeout)
    size = world.size()
    members = list(range(size)) if ranks is None else list(ranks)
    if sort_ranks:
        members = sorted(members)
    for r in members:
        if not 0 <= r < size:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    if len(set(members)) != len(members):
        raise ValueError(f"ranks must be distinct, got {members}")
    me = world.rank()
    MPI = mpi()
    inside = me in members
    comm = world._comm.Split(0 if inside else MPI.UNDEFINED, members.index(me) if inside else 0)
    if not inside:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, members, seconds)
    _state.groups.append(pg)
    return pg
