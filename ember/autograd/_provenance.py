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
Names alone fail when ``explain`` is called from another function (a helper's ``param`` is the script's ``w``),
so a record also keeps, weakly, the tensors and modules that the names on its line (a cut) or in its body (a
block, resolved when the block exits) referred to then (``Record.used``): explain matches the tensor by identity,
or as a parameter of a recorded module, and reads the source with the name the recorded code used.
"""
from __future__ import annotations

import keyword
import linecache
import os
import re
import sys
import weakref
from collections import deque

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_GRAD_MODE_FILE = os.path.join(_PKG_DIR, "autograd", "grad_mode.py")
# argument plumbing between the user's call and the function it reaches (NOTE [torch's argument parser])
_PLUMBING = (os.path.join(_PKG_DIR, "_args.py"), os.path.join(_PKG_DIR, "_methods.py"),
             os.path.join(_PKG_DIR, "_malloc.py"))  # NOTE [foreign errors]: error-translating wrappers
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

    __slots__ = ("kind", "filename", "lineno", "firstlineno", "seq", "src", "result", "node", "name", "used")

    def __init__(self, kind: str, frame, seq: int) -> None:
        self.kind = kind
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.firstlineno = frame.f_code.co_firstlineno
        self.seq = seq
        self.src = self.result = self.node = None
        self.name = None
        self.used = None  # {name on the recorded line(s): weak reference to the tensor or module it meant}


_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_names_cache: dict = {}
_types: tuple = ()  # (Tensor, Module), bound on first use (import cycle)


def _line_names(filename: str, first: int, last: int) -> tuple:
    """The dotted names on lines [first, last] of a source file (cached: a training loop records the same lines)."""
    key = (filename, first, last)
    hit = _names_cache.get(key)
    if hit is None:
        found = {}
        for n in range(first, last + 1):
            for m in _DOTTED.findall(linecache.getline(filename, n)):
                if not keyword.iskeyword(m.split(".", 1)[0]):
                    found[m] = None
        if len(_names_cache) > 4096:
            _names_cache.clear()
        hit = _names_cache[key] = tuple(found)
    return hit


def _lookup(frame, dotted: str):
    """The object ``dotted`` names in ``frame`` (attributes through instance dicts and module registries only, so
    no property runs), or None."""
    global _types
    if not _types:
        from .._tensor import Tensor  # noqa: PLC0415 - import cycle
        from ..nn.modules.module import Module  # noqa: PLC0415

        _types = (Tensor, Module)
    parts = dotted.split(".")
    obj = frame.f_locals.get(parts[0], frame.f_globals.get(parts[0]))
    for part in parts[1:]:
        if obj is None or isinstance(obj, _types):
            break
        d = getattr(obj, "__dict__", None)
        obj = d.get(part) if isinstance(d, dict) else None
    return obj if isinstance(obj, _types) else None


def _used(frame, first: int, last: int) -> dict | None:
    """{name: weak reference} of the tensors the names on the lines refer to; a module's parameters count as
    used under ``<name>.<parameter name>`` (the module itself may be gone when explain asks)."""
    out = {}
    for dotted in _line_names(frame.f_code.co_filename, first, last):
        obj = _lookup(frame, dotted)
        if obj is None:
            continue
        if isinstance(obj, _types[0]):
            out[dotted] = _ref(obj)
        else:
            for pname, p in obj.named_parameters():
                out[f"{dotted}.{pname}"] = _ref(p)
    return out or None

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
    r.used = _used(f, r.lineno, r.lineno)
    if result is not None:
        r.result = _ref(result)
    fn = t._grad_fn
    if fn is not None:
        r.node = _ref(fn)
    breaks.append(r)


def note_block(kind: str) -> Record | None:
    """A grad-disabling block was entered (called from its ``__enter__``); the record, for ``note_block_exit``."""
    f = sys._getframe(2)
    if f.f_code.co_filename == _GRAD_MODE_FILE:  # the decorator form: the call of the decorated function
        return _note_call(kind, f)
    if f.f_code.co_filename.startswith(_PKG_DIR):
        return None
    r = Record(kind, f, _next_seq())
    blocks.append(r)
    return r


def _note_call(kind: str, f) -> None:
    f = f.f_back
    while f is not None and f.f_code.co_filename == _GRAD_MODE_FILE:
        f = f.f_back
    if f is not None and not f.f_code.co_filename.startswith(_PKG_DIR):
        blocks.append(Record(kind, f, _next_seq()))


def note_block_exit(r: Record) -> None:
    """The ``with`` block recorded by ``r`` ends (called from ``__exit__``): note what its body's names meant."""
    f = sys._getframe(2)
    if f.f_code.co_filename == r.filename:
        last = _block_end(r.filename, r.lineno)
        if last > r.lineno:
            r.used = _used(f, r.lineno + 1, last)


_ends_cache: dict = {}


def _block_end(filename: str, lineno: int) -> int:
    """The last line of the indented block under the ``with`` statement at ``lineno`` (cached)."""
    key = (filename, lineno)
    end = _ends_cache.get(key)
    if end is None:
        first = linecache.getline(filename, lineno)
        indent = len(first) - len(first.lstrip())
        end = n = lineno
        while True:
            n += 1
            text = linecache.getline(filename, n)
            if not text or (text.strip() and len(text) - len(text.lstrip()) <= indent):
                break
            if text.strip():
                end = n
        if len(_ends_cache) > 4096:
            _ends_cache.clear()
        _ends_cache[key] = end
    return end


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
