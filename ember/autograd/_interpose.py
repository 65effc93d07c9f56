"""Levels that intercept every op application: forward-mode AD (dual levels) and vmap.

# NOTE [interposition]
``Op.apply`` (and ``Function.apply``) first look at ``_mode.interpose``: ``None`` in ordinary code (one
attribute read on the hot path). A transform pushes a ``Level`` whose ``process(cls, args)`` sees the op
class and its arguments before anything runs. A level usually rewrites the arguments (vmap: logical to
physical batched tensors) or adds to the result (forward AD: output tangents) and calls ``call_below``,
which runs the op with the next level down active (so levels nest: ``vmap(jvp(f))``), ending in the
ordinary dispatch that records the reverse-mode graph. Levels are thread-local, as grad modes are.
"""
from __future__ import annotations

import functools

from .grad_mode import _mode

__all__ = ["Level", "push", "pop", "call_below", "current", "replayable", "made", "data_shaped", "fused_ok"]


class Level:
    """One interposed transform level; subclasses override ``process``."""

    __slots__ = ("below", "__weakref__")
    decomposes = True  # it must see every op: fused nodes and array-level backward passes are off under it

    def process(self, cls, args: tuple):
        return call_below(self, cls, args)


# NOTE [fused nodes under levels]: a fused node (the norms, cross-entropy, the LSTM layer) and a raw backward pass
# on arrays are shortcuts that a forward-AD or vmap level cannot see through: under such a level the library takes
# the composition of ember ops instead. ember.compile's tracer is a level that only records: it meets the fused
# nodes as ops, and a raw backward pass that is not kernel for kernel its differentiable formula is a replayable
# step (NOTE [replayable steps]), so the traced call computes exactly what the eager call computes.
def fused_ok() -> bool:
    """Whether fused nodes and raw backward passes may run: no level is active, or only one that records."""
    level = _mode.interpose
    return level is None or (not level.decomposes and level.below is None)


def current() -> Level | None:
    """The innermost active level, or None."""
    return _mode.interpose


def push(level: Level) -> Level:
    """Make ``level`` the innermost level of this thread."""
    level.below = _mode.interpose
    _mode.interpose = level
    return level


def pop(level: Level) -> None:
    """Remove ``level``, which must be the innermost."""
    if _mode.interpose is not level:
        raise RuntimeError("transform levels must be exited in the reverse order they were entered")
    _mode.interpose = level.below


def call_below(level: Level, cls, args: tuple):
    """Apply ``cls`` to ``args`` with the levels under ``level`` active (ordinary dispatch at the bottom)."""
    saved = _mode.interpose
    _mode.interpose = level.below
    try:
        return cls.apply(*args)
    finally:
        _mode.interpose = saved


# NOTE [replayable steps]
# ember.compile (NOTE [compile] in ember/_compile/__init__.py) records an eager run at the op level and replays the
# ops' array kernels. A few library helpers compute on arrays outside any op: they draw random numbers (rand, the
# dropout masks) or read a tensor's values to build an op's arguments (class targets into gather indices, running
# statistics updated in place). Decorated with ``replayable``, such a helper is one step of the compiled program: the
# tracer runs it once (its own ops unrecorded) and the replay calls it again on the new tensors, so its draws and its
# reads of the data happen on every call, in the order of the eager run. Outside compilation the decorator costs one
# attribute read.
def replayable(fn):
    """Make ``fn`` (tensors and plain values in, tensors, arrays or plain values out) one replayed step of compiled
    programs (NOTE [replayable steps])."""
    @functools.wraps(fn)
    def step(*args, **kwargs):
        tracer = _mode.tracer
        if tracer is None:
            return fn(*args, **kwargs)
        return tracer.opaque(fn, args, kwargs)

    return step


def made(arr):
    """Tell ember.compile that ``arr`` was made from shapes and Python values only (a factory: zeros, arange ...);
    a tensor made outside the ops from anything else (the data) cannot be a constant of a compiled program
    (NOTE [compile])."""
    tracer = _mode.tracer
    if tracer is not None:
        tracer.made(arr)
    return arr


def data_shaped(name: str) -> None:
    """Tell ember.compile that the result being computed has a shape that depends on the data (``nonzero``): a
    compiled program built on one call's sizes cannot serve the next, so that call runs eagerly."""
    tracer = _mode.tracer
    if tracer is not None:
        tracer.unsupported(f"an op whose output shape depends on the data ({name})")
