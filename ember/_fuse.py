"""Elementwise formulas that run as one kernel on a GPU: ``cupy.fuse`` on CuPy arrays, the plain formula elsewhere.

# NOTE [fused formulas]
On a GPU at ember's sizes every array operation is a kernel launch of ~10-20 µs, so a formula of ten ufuncs
(an Adam step, a tanh backward) costs ten launches where torch's CUDA kernels spend one. ``formula(name)``
wraps a function ``fn(xp, *args)`` written with operators, augmented assignments (in-place updates of its
array arguments) and ``xp``'s ufuncs; its first argument after ``xp`` is an array, which picks the path:
- a NumPy array or the stand-in (NOTE [cuda stand-in] in ember/_backend.py): ``fn(np, *args)``, the plain
  NumPy formula, so CPU results and speed are unchanged and the stand-in runs (and tests) the same formula;
- a CuPy array: ``cupy.fuse`` of ``fn(cupy, ...)``, traced and compiled on first use: one kernel per call.
Branches and anything that is not elementwise stay outside the formula (a factory picks a variant: the
arguments are traced values inside a fused kernel, so Python cannot branch on them). Scalars are passed in the
arrays' dtype (``arr.dtype.type(x)``): NumPy then computes exactly as with Python floats (NEP 50's weak scalars), and
CuPy's kernel gets one parameter type. If CuPy refuses a formula (tracing or compiling fails), the plain
formula runs from then on and the name goes into ``fallbacks``, which tools/gpu_check.py reports: a user
never sees the error. ``runs`` counts calls on device arrays (stand-in or CuPy) by name, so tests can see that a
device took the fused path; ``_backend.counting()`` counts a formula on the stand-in as one kernel.
"""
from __future__ import annotations

import collections

import numpy as np

from . import _backend as _B

__all__ = ["fallbacks", "formula", "runs"]

_nd = np.ndarray
fallbacks: dict = {}  # formula name -> why cupy.fuse refused it (the plain formula runs instead)
runs: collections.Counter = collections.Counter()  # formula name -> calls on device arrays


class _Formula:
    """A formula callable on arrays of any device (NOTE [fused formulas])."""

    __slots__ = ("fn", "name", "kernel")

    def __init__(self, fn, name: str) -> None:
        self.fn, self.name, self.kernel = fn, name, None

    def __call__(self, *args):
        t = type(args[0])
        if t is _nd:
            return self.fn(np, *args)
        runs[self.name] += 1
        if t is _B.StandInArray:
            return _B.one_kernel("fused " + self.name, self.fn, np, *args)  # (counted as one: NOTE [stand-in counters])
        if not t.__module__.startswith("cupy"):
            return self.fn(np, *args)
        kernel = self.kernel
        if kernel is None:
            kernel = self.kernel = _fuse(self.fn, self.name)
        if kernel is not False:
            try:
                return kernel(*args)
            except Exception as e:  # noqa: BLE001 - CuPy refused the formula: the plain one runs (never a user error)
                fallbacks[self.name] = f"{type(e).__name__}: {e}"[:300]
                self.kernel = False
        return self.fn(_B.cupy(), *args)


def _fuse(fn, name: str):
    """``cupy.fuse`` of ``fn`` with CuPy as its ``xp`` (False, recorded in ``fallbacks``, when CuPy refuses it)."""
    cp = _B.cupy()
    try:
        def kernel(*args):
            return fn(cp, *args)

        kernel.__name__ = kernel.__qualname__ = name
        return cp.fuse(kernel_name=name)(kernel)  # (with keyword arguments cupy.fuse returns a decorator)
    except Exception as e:  # noqa: BLE001
        fallbacks[name] = f"{type(e).__name__}: {e}"[:300]
        return False


def formula(name: str):
    """Decorator: ``fn(xp, *args)`` as a formula run by one fused kernel on CuPy arrays (NOTE [fused formulas])."""
    def wrap(fn):
        return _Formula(fn, name)
    return wrap

