"""DistributedDataParallel: one model replica per process; gradients averaged across processes during backward."""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any


from ..._tensor import Tensor
from ...autograd.grad_mode import _mode
from ..modules.module import Module
from ._reducer import FIRST_BUCKET_BYTES, Reducer

__all__ = ["DistributedDataParallel"]

_BROADCAST_BUFFERS = ("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                      "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If you rely "
                      "on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                      "`broadcast_buffers=False` until `init_sync_buffers` is available.")
_BOTH_BUFFER_FLAGS = ("Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` is "
                      "deprecated and its value is ignored when `forward_sync_buffers` is provided.")


class DistributedDataParallel(Module):
    """Wraps ``module`` (as ``self.module``) for data-parallel training over ``ember.distributed``.

    At construction it checks that every rank has the same parameter shapes and broadcasts parameters and buffers
    from rank 0. In backward, gradients are averaged across ranks in buckets whose all-reduce overlaps the rest of
    backward (NOTE [DDP reducer] in ``_reducer.py``). Buffers (e.g. BatchNorm running statistics) are broadcast
    from rank 0 before each forward that follows a synced training forward, as torch does by default.
    ``no_sync()`` accumulates gradients locally; ``find_unused_parameters`` allows parameters that take no part in
    the loss.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool | None = None, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params: bool = False,
                 bucket_cap_mb_list: list | None = None, batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        """torch's arguments. Those that only schedule the same averaging differently (``bucket_cap_mb_list``,
        ``batched_grad_copy``, ``delay_all_reduce_named_params``/``param_to_hook_all_reduce``: every gradient is
        averaged here, when its bucket is ready) change no result; ``mixed_precision``, ``device_mesh`` and
        ``skip_all_reduce_unused_params=True`` are not implemented and raise."""
        for name, value in (("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("skip_all_reduce_unused_params", skip_all_reduce_unused_params or None)):
            if value is not None:
                raise NotImplementedError(f"ember: DistributedDataParallel({name}=...) is not supported")
        if broadcast_buffers is not None:
            warnings.warn(_BOTH_BUFFER_FLAGS if forward_sync_buffers is not None else _BROADCAST_BUFFERS,
                          FutureWarning, stacklevel=2)
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please "
                          "avoid using it.", FutureWarning, stacklevel=2)
        super().__init__()
        from ... import distributed as dist  # noqa: PLC0415 - nn must not need the distributed package to import
        from ...distributed.process_group import _resolve  # noqa: PLC0415

        params = [p for p in dict.fromkeys(module.parameters()) if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with single-device/"
                "multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters {{device(type='cpu')}}.")
        self.module = module
        self.process_group = _resolve(process_group)
        self.device_ids = None
        self.dim = dim
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_sync_buffers = bool(forward_sync_buffers), True
        else:
            self.forward_sync_buffers = init_sync_buffers = True if broadcast_buffers is None else bool(
                broadcast_buffers)
        self.broadcast_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._dist = dist
        names = {id(p): n for n, p in module.named_parameters()}
        self._verify_same_model([(names.get(id(p), "?"), tuple(p.shape), p.dtype.name) for p in params])
        self._module_buffers = [b for _, b in module.named_buffers()]
        if init_sync:
            self._broadcast([p for p in module.parameters()]
                            + (self._module_buffers if init_sync_buffers else []))
        self.reducer = Reducer(params, self.process_group, self.bucket_bytes_cap, find_unused_parameters,
                               FIRST_BUCKET_BYTES if bucket_cap_mb is None else None)

    def _verify_same_model(self, meta: list) -> None:
        everyone: list = []
        self._dist.all_gather_object(everyone, meta, group=self.process_group)
        ref = everyone[0]
        for rank, mine in enumerate(everyone):
            if len(mine) != len(ref):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {rank} has {len(mine)} params, "
                                   f"while rank 0 has inconsistent {len(ref)} params.")
            for i, ((name, shape, dtype), (_, shape0, dtype0)) in enumerate(zip(mine, ref)):
                if shape != shape0 or dtype != dtype0:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but Rank {rank}'s parameter {i} ({name}) of size "
                        f"{list(shape)} and dtype {dtype} appears not to match sizes of the same param in process 0 "
                        f"({list(shape0)}, {dtype0}).")

    def _broadcast(self, tensors: list) -> None:
        """Rank 0's values into ``tensors`` on every rank (in place, outside autograd)."""
        works = [self._dist.broadcast(t.detach(), src=self._dist.get_global_rank(self.process_group, 0),
                                      group=self.process_group, async_op=True) for t in tensors]
        for w in works:
            w.wait()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.require_forward_param_sync and self.forward_sync_buffers and self._module_buffers:
            self._broadcast(self._module_buffers)
        output = self.module(*inputs, **kwargs)
        if _mode.grad_enabled and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(_tensors_in(output) if self.find_unused_parameters else ())
        else:
            self.require_forward_param_sync = False
        return output

    @contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally; the first synced backward after it
        averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _tensors_in(obj) -> list:
    """The tensors in a (nested) forward output: tensors, lists/tuples, dicts."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_in(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_in(o)]
    return []


