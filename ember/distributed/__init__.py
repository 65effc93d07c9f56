"""ember.distributed: torch.distributed's process groups and collectives, on MPI (mpi4py).

Start processes with ``python -m ember.distributed.run -n 2 train.py`` (or ``mpiexec -n 2 python train.py``),
call ``init_process_group("mpi")``, then use the collectives on ember tensors (in place, as torch's).
Importing this package does not load MPI; ``init_process_group`` does (``pip install 'ember[dist]'``).
"""
from ._mpi import available as _available
from ._guard import DistError, DistBackendError, DistNetworkError, DistStoreError
from .process_group import (Backend, ProcessGroup, GroupMember, group, init_process_group, destroy_process_group,
                            is_initialized, is_mpi_available, is_gloo_available, is_nccl_available, get_rank,
                            get_world_size, get_backend, new_group, get_global_rank, get_group_rank,
                            get_process_group_ranks)
from .collectives import (ReduceOp, Work, all_reduce, broadcast, all_gather, all_gather_into_tensor, gather,
                          scatter, reduce, reduce_scatter, send, recv, isend, irecv, barrier, all_gather_object,
                          broadcast_object_list)


def is_available() -> bool:
    """Whether ember.distributed can run here (mpi4py importable)."""
    return _available()


__all__ = ["is_available", "Backend", "ProcessGroup", "GroupMember", "group", "init_process_group",
           "destroy_process_group", "is_initialized", "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "get_rank", "get_world_size", "get_backend", "new_group", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "ReduceOp", "Work", "all_reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "gather", "scatter", "reduce", "reduce_scatter", "send", "recv", "isend",
           "irecv", "barrier", "all_gather_object", "broadcast_object_list", "DistError", "DistBackendError",
           "DistNetworkError", "DistStoreError"]
