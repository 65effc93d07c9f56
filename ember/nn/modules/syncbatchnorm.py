"""SyncBatchNorm: batch normalization over the global batch of a data-parallel job (statistics all-reduced across
the ranks of a process group). torch runs it on GPUs only; ember runs it on CPU ranks over MPI."""
from __future__ import annotations

from ..._tensor import Tensor
from ...ops.shape import cat
from .. import functional as F
from .module import Module
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, ...) inputs whose training statistics are those of every rank's batch together; in
    eval mode, or outside an initialized process group of more than one rank, it is a plain BatchNorm."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        if not (self.training and self._world_size() > 1):
            return super().forward(input)
        from ...distributed.nn.functional import all_reduce  # noqa: PLC0415 - MPI only for synced training

        factor = self._factor()
        dims = (0,) + tuple(range(2, input.dim()))
        shape = (1, input.shape[1]) + (1,) * (input.dim() - 2)
        local = input.sum(dims)
        n_local = local.new_full((1,), input.numel() // input.shape[1])  # one all-reduce carries sums and count
        stats = all_reduce(cat([local, n_local]), group=self.process_group)
        count = float(stats[-1].item())
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got {int(count)} in total")
        mean = stats[:-1] / count
        centred = input - mean.reshape(shape)
        var = all_reduce((centred * centred).sum(dims), group=self.process_group) / count
        if self.track_running_stats:
            F._update_running(self.running_mean, mean.detach(), factor)
            F._update_running(self.running_var, var.detach() * (count / (count - 1)), factor)
        out = centred * (var + self.eps).rsqrt().reshape(shape)
        return F._affine(out, self.weight, self.bias, shape)

    def _world_size(self) -> int:
        from ... import distributed as dist  # noqa: PLC0415 - ember.distributed loads only when used

        return dist.get_world_size(self.process_group) if dist.is_initialized() else 1

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every BatchNorm*d inside replaced by a SyncBatchNorm sharing its parameters and
        buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out

