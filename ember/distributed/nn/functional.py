"""Differentiable collectives (torch.distributed.nn.functional): each returns new tensors and has a backward that
is itself a collective, so a loss computed on every rank from shared statistics gets its exact gradient."""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops.shape import stack
from .. import collectives as _C
from ..process_group import get_rank, get_world_size

__all__ = ["all_reduce", "all_gather"]


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.clone().contiguous()
        _C.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        # d(sum over ranks)/d(own input) = the sum over ranks of the gradients of their outputs
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [tensor.new_empty(tensor.shape) for _ in range(get_world_size(group))]
        _C.all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        # this rank's input went to every rank's output list at position rank: sum those gradients
        summed = _AllReduce.apply(_C.ReduceOp.SUM, ctx.group, stack(list(grads)))
        return None, summed[get_rank(ctx.group)]


def all_reduce(tensor: Tensor, op=_C.ReduceOp.SUM, group=None) -> Tensor:
    """``tensor`` reduced with ``op`` across the group, as a new tensor; its gradient is all-reduced the same way."""
    return _AllReduce.apply(op, group, tensor)


def all_gather(tensor: Tensor, group=None) -> tuple:
    """Every rank's ``tensor``, in rank order; the gradient of this rank's input sums the gradients all ranks'
    outputs give its slot."""
    return _AllGather.apply(group, tensor)
