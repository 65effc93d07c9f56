"""Module full backward hooks: identity Functions around a module's inputs and outputs.

The outputs' identity node sees the gradients w.r.t. the outputs (grad_output; backward pre-hooks run
there); the inputs' identity node sees the gradients w.r.t. the inputs (grad_input), and the user's
hooks run there with both, as torch's BackwardHook does.
"""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function


class BackwardHookFunction(Function):
    """Identity on any number of tensors; its node is where a module's backward hooks run."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return ctx.hook(grads) if getattr(ctx, "hook", None) else grads


class BackwardHook:
    """Wires ``module``'s full backward (pre-)hooks into one forward call's graph."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions: list[int] = []

    def _wrap(self, args: tuple, on_grads):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        if not positions:
            return args, positions
        tensors = [args[i] for i in positions]
        out = BackwardHookFunction.apply(*tensors)
        out = out if isinstance(out, tuple) else (out,)
        node = out[0].grad_fn
        if node is not None:
            node.hook = on_grads
        new = list(args)
        for i, t in zip(positions, out):
            new[i] = t
        return tuple(new), positions

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        new, self.input_positions = self._wrap(args, self._input_grads)
        return new

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        new, self.output_positions = self._wrap(outs, self._output_grads)
        self.n_outputs = len(outs)
        if not self.input_positions and self.hooks:
            self._no_input_grads = True
        return new[0] if single else new

    def _output_grads(self, grads):
        full = [None] * self.n_outputs
        for i, g in zip(self.output_positions, grads):
            full[i] = g
        grad_outputs = tuple(full)
        for hook in self.pre_hooks:
            r = hook(self.module, grad_outputs)
            if r is not None:
                grad_outputs = tuple(r)
        self.grad_outputs = grad_outputs
        if not self.input_positions:
            # no input needs a gradient: torch calls the hooks with grad_input=(None,) now
            for hook in self.hooks:
                hook(self.module, (None,) * max(self.n_inputs, 1), self.grad_outputs)
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _input_grads(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        grad_inputs = tuple(full)
        for hook in self.hooks:
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                if len(r) != len(grad_inputs):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, but "
                                       f"expected {len(grad_inputs)}")
                grad_inputs = tuple(r)
        return tuple(grad_inputs[i] for i in self.input_positions)
