"""torch's compiler spellings: torch.compile (ember.compile's tracer, in ember/_compile), the control-flow operators
``cond`` and ``while_loop`` (run eagerly), and the symbolic-shape helpers ``sym_*`` on plain numbers."""
from __future__ import annotations

import math
from ._tensor import Tensor

__all__ = ["compile", "cond", "while_loop", "sym_int", "sym_float", "sym_max",
           "sym_min", "sym_not", "sym_sqrt", "sym_sum", "sym_ite"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable: bool = False, recompile_limit=None, isolate_recompiles: bool = False,
            shapes_spec=None):  # noqa: A001 - torch's name
    """Trace ``model`` (a function or module) once per guard set and replay it as a flat NumPy program with the
    same results (NOTE [compile] in ember/_compile); with no model, a decorator."""
    from ._compile.api import compile as _compile

    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                    name=name, disable=disable, recompile_limit=recompile_limit,
                    isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, run eagerly."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred)
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``body_fn`` on the carried values while ``cond_fn`` holds, eagerly."""
    vals = tuple(carried_inputs)
    while bool(cond_fn(*vals)):
        out = body_fn(*vals)
        vals = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return vals


# ---------------------------------------------------------------- symbolic-shape helpers on plain numbers
def sym_int(a) -> int:
    return math.trunc(a) if isinstance(a, float) else int(a)


def sym_float(a) -> float:
    return float(a)


def sym_max(a, b):
    return max(a, b)


def sym_min(a, b):
    return min(a, b)


def sym_not(a) -> bool:
    return not a


def sym_sqrt(a) -> float:
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of ``sym_sum(a, b, c)`` or ``sym_sum([a, b, c])``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)


def sym_ite(b, t, f):
    return t if b else f
