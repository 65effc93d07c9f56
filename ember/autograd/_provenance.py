"""Where the user's code cut a tensor out of the graph: the records ``autograd.explain`` reads.

# NOTE [provenance]
Nothing here runs on the op hot path. The places that cut a graph are rare calls made from user code:
``detach()``, ``.data``, ``.item()``, ``.tolist()``, ``.numpy(force=True)`` on a tensor that requires grad,
entering ``no_grad``/``inference_mode``/``set_grad_enabled(False)``, switching ``requires_grad`` on, and
registering a hook. Each notes the user's file:line (the frame that called into ember; calls made by
ember itself are not recorded) in a small ring per kind, holding tensors and nodes only weakly. Recording
walks no graph (``loss.item()`` every step must stay cheap): when the detached tensor's node is still alive
``explain`` walks it then; when it is gone (a temporary, ``(w * 3).detach()``), ``explain`` reads the
recorded source line for the tensor's name.
Ops under ``no_grad`` are not watched (that is the inference hot path); ``explain`` reads the block's
source lines instead to tell whether a tensor was used inside it.
"""
from __future__ import annotations

import os
import sys
import weakref
from collections import deque

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_GRAD_MODE_FILE = os.path.join(_PKG_DIR, "autograd", "grad_mode.py")
# argument plumbing between the user's call and the function it reaches (NOTE [torch's argument parser])
_PLUMBING = (os.path.join(_PKG_DIR, "_args.py"), os.path.join(_PKG_DIR, "_methods.py"))
_ref = weakref.ref

# Bound by ember.autograd.graph at import (its sequence counter: stamps order records against nodes).
_next_seq = None

# The most recent records of each kind (newest last).
breaks: deque = deque(maxlen=128)     # detach / .data / .item() / .tolist() / .numpy() of a grad-requiring tensor
blocks: deque = deque(maxlen=32)      # no_grad / inference_mode / set_grad_enabled(False) blocks entered
flags: deque = deque(maxlen=64)       # requires_grad switched on
hooks: deque = deque(maxlen=64)       # register_hook / register_prehook on tensors and nodes
last_roots: list = []  # weak references to the root tensors of the last backward() (a graph dies with its root)


class Record:
    """One recorded event: what happened, where (file, line, first line of that code), to what."""

    __slots__ = ("kind", "filename", "lineno", "firstlineno", "seq", "src", "result", "node", "name")

    def __init__(self, kind: str, frame, seq: int) -> None:
        self.kind = kind
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.firstlineno = frame.f_code.co_firstlineno
        self.seq = seq
        self.src = self.result = self.node = None
        self.name = None

    @property
    def site(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def __repr__(self) -> str:
        return f"<{self.kind} at {self.site}>"


def _user_frame(depth: int):
    """The frame ``depth`` levels up when it is user code (not ember's own calls), else None."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename in _PLUMBING:
        f = f.f_back
    if f is None or f.f_code.co_filename.startswith(_PKG_DIR):
        return None
    return f


def _name_in(frame, obj) -> str | None:
    """A local (or global) variable name that ``frame`` binds to ``obj``."""
    for scope in (frame.f_locals, frame.f_globals):
        for k, v in scope.items():
            if v is obj and not k.startswith("_"):
                return k
    return None


def note_break(t, kind: str, result=None) -> None:
    """``t`` (requiring grad) left the graph by ``kind`` (".detach()", ".item()" ...) in user code."""
    f = _user_frame(2)
    if f is None:
        return
    r = Record(kind, f, _next_seq())
    r.src = _ref(t)
    if result is not None:
        r.result = _ref(result)
    fn = t._grad_fn
    if fn is not None:
        r.node = _ref(fn)
    breaks.append(r)


def note_block(kind: str) -> None:
    """A grad-disabling block was entered (called from its ``__enter__``)."""
    f = sys._getframe(2)
    if f.f_code.co_filename == _GRAD_MODE_FILE:  # the decorator form: the call of the decorated function
        f = f.f_back
        while f is not None and f.f_code.co_filename == _GRAD_MODE_FILE:
            f = f.f_back
    if f is None or f.f_code.co_filename.startswith(_PKG_DIR):
        return
    blocks.append(Record(kind, f, _next_seq()))


def note_requires_grad(t) -> None:
    """``t.requires_grad`` was switched on by user code."""
    f = _user_frame(3)
    if f is None:
        return
    r = Record("requires_grad", f, _next_seq())
    r.src = weakref.ref(t)
    r.name = _name_in(f, t)
    flags.append(r)


def note_hook(owner, hook, kind: str) -> None:
    """A gradient hook was registered on ``owner`` (a tensor or a node) by user code."""
    f = _user_frame(2)
    if f is None:
        return
    r = Record(kind, f, _next_seq())
    r.src = weakref.ref(owner)
    try:
        r.result = weakref.ref(hook)
    except TypeError:  # a builtin or another object without weak references
        r.result = None
    hooks.append(r)


def note_backward(tensors) -> None:
    """Remember the roots of the latest ``backward()`` (weakly)."""
    global last_roots
    last_roots = [_ref(t) for t in tensors]
