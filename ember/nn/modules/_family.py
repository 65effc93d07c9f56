"""Families of layer classes made from one private base: each public class differs from its siblings only in
class attributes (the functional form its forward calls, its rank), so it is one row, not one class statement.

# NOTE [layer families]
A family member is a real subclass of its base (``isinstance(m, _MaxPoolNd)`` holds, as in torch) defined in the
base's module under its public name, so ``__name__``, ``__qualname__``, ``__module__``, printed module trees and
pickling of whole modules (which finds the class as ``module.qualname``) are those a class statement gives.
"""
from __future__ import annotations

from typing import TypeVar

_B = TypeVar("_B", bound=type)  # (so that editors see a member's constructor: its base's)
_DIMS = {1: "L", 2: "H, W", 3: "D, H, W"}  # the spatial dims of a rank's (N, C, ...) input, for docstrings


def _member(base: _B, name: str, doc: str, fn, **attrs) -> _B:
    """The public class ``name``: ``base`` with ``_fn = fn`` (the functional form its forward calls) and the other
    class attributes ``attrs``, in ``base``'s module."""
    return type(name, (base,), {"__doc__": doc, "__module__": base.__module__, "_fn": staticmethod(fn), **attrs})


def _per_rank(base: _B, name: str, doc: str, fns: tuple, ranks=(1, 2, 3)) -> tuple[_B, ...]:
    """One member of ``base``'s family per rank d in ``ranks``, calling the matching entry of ``fns`` and with
    ``_nd = d``: named ``name.format(d=d)`` and documented by ``doc.format(d=d, dims=...)``, ``dims`` being the
    rank's spatial dims (``L``; ``H, W``; ``D, H, W``)."""
    return tuple(_member(base, name.format(d=d), doc.format(d=d, dims=_DIMS[d]), fn, _nd=d)
                 for d, fn in zip(ranks, fns, strict=True))
