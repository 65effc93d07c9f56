"""Stale-graph detection: a backward that reaches nodes recorded before the last ``optimizer.step()``.

# NOTE [stale graphs]
Opt-in (``set_detect_stale_graph(True)``); while off, the cost is one flag test per ``optimizer.step()`` and
per ``backward()``. Every node has a sequence number (``_seq``, ever increasing). At each optimizer step the
detector stamps a fresh sequence number, so "recorded before the last step" is ``node._seq < stamp``. Only old
nodes that lead to a parameter of that optimizer count: those saw parameter values the step has since
changed (a GAN's generator graph, reused after the discriminator's step, is fine). It also
notes which variables of the user's frames (locals, items of tuples/lists, tensor attributes of objects
such as ``self.hidden``) hold a graph across the step, so a later warning can name the tensor that carried
the old graph. Two checks:

- backward(): a walk from the roots that does not descend into old nodes; old nodes reached from new ones
  are the boundary, where an earlier step's graph is attached (an undetached RNN state, ``total += loss``
  followed by ``total.backward()``).
- optimizer.step(): a variable whose graph reaches nodes from before the *previous* step keeps the graphs of
  several steps alive (``total_loss += loss`` without ``.item()``: memory grows every step).
"""
from __future__ import annotations

import sys
import warnings
import weakref

from . import _provenance as P

__all__ = ["set_detect_stale_graph", "is_stale_graph_detection_enabled", "StaleGraphWarning"]

_enabled = False
# optimizer -> [sequence number stamped at its previous step, at its last step, ids of its parameters]
_steps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_carriers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node -> (name, file, line) at a step
_BUDGET = 20000  # nodes walked per check at most
_FRAMES = 4  # user frames scanned at a step


class StaleGraphWarning(UserWarning):
    """A backward or an optimizer step met a graph recorded before an earlier optimizer step."""


def is_stale_graph_detection_enabled() -> bool:
    return _enabled


class set_detect_stale_graph:
    """Turn stale-graph detection on or off (at once; restores the old state as a context manager)."""

    def __init__(self, mode: bool = True) -> None:
        global _enabled
        self.prev = _enabled
        _enabled = bool(mode)
        if not _enabled:
            _carriers.clear()
            _steps.clear()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        global _enabled
        _enabled = self.prev


def _user_frames():
    f = sys._getframe(1)
    n = 0
    while f is not None and n < _FRAMES:
        if not f.f_code.co_filename.startswith(P._PKG_DIR):
            n += 1
            yield f
        f = f.f_back


def _graph_tensors(frame):
    """(name, tensor) for each tensor with a graph that ``frame`` holds, one level into containers."""
    from .._tensor import Tensor  # noqa: PLC0415 - import cycle
    from ..nn.modules.module import Module  # noqa: PLC0415

    scope = frame.f_locals
    for k, v in list(scope.items()):
        if k.startswith("__"):
            continue
        if isinstance(v, Tensor):
            if v._grad_fn is not None:
                yield k, v
        elif isinstance(v, (tuple, list)) and len(v) <= 16:
            for i, item in enumerate(v):
                if isinstance(item, Tensor) and item._grad_fn is not None:
                    yield f"{k}[{i}]", item
        elif isinstance(v, Module) or k == "self":
            d = getattr(v, "__dict__", None)
            if isinstance(d, dict):
                for a, item in list(d.items())[:64]:
                    if isinstance(item, Tensor) and item._grad_fn is not None:
                        yield f"{k}.{a}", item


def on_step(optimizer) -> None:
    """Called at the end of every optimizer step while detection is on."""
    ids = frozenset(id(p) for g in optimizer.param_groups for p in g["params"])
    st = _steps.get(optimizer)
    prev = st[1] if st is not None else -1
    _steps[optimizer] = [prev, P._next_seq(), ids]
    seen: set = set()
    below: dict = {}
    for frame in _user_frames():
        for name, t in _graph_tensors(frame):
            fn = t._grad_fn
            if fn not in _carriers:
                _carriers[fn] = (name, frame.f_code.co_filename, frame.f_lineno)
            if prev >= 0 and fn not in seen:
                old = [n for n in _boundary([fn], prev, seen) if _reaches(n, ids, below)]
                if old:
                    _warn(f"`{name}` holds the autograd graph of earlier optimizer steps (nodes recorded before the "
                          "previous optimizer.step()): every step's graph stays in memory. If it accumulates "
                          f"losses (`{name} += loss`), add numbers instead: `{name} += loss.item()` (or "
                          f"`loss.detach()`); if it is state carried between steps, detach it: "
                          f"`{name} = {name}.detach()`.", frame)


def _boundary(roots, stamp: int, seen: set) -> list:
    """Old nodes (``_seq < stamp``) reached from ``roots`` without passing another old node."""
    from .graph import AccumulateGrad  # noqa: PLC0415 - import cycle

    old, stack = [], []
    budget = _BUDGET
    nodes = roots
    while True:
        for node in nodes:
            if node is None or node in seen:
                continue
            seen.add(node)
            if type(node) is not AccumulateGrad and node._seq < stamp:
                old.append(node)
            else:
                stack.append(node)
        if not stack or not budget:
            return old
        budget -= 1
        nodes = [nxt for nxt, _ in stack.pop()._next]


def _reaches(node, ids, below: dict) -> bool:
    """Whether ``node`` leads to a leaf whose id is in ``ids`` (memoized in ``below``; bounded walk)."""
    if node in below:
        return below[node]
    from .graph import AccumulateGrad  # noqa: PLC0415 - import cycle

    stack = [node]
    seen = {node}
    found = False
    while stack and len(seen) < _BUDGET and not found:
        fn = stack.pop()
        if type(fn) is AccumulateGrad and id(fn.variable) in ids:
            found = True
            break
        for nxt, _ in fn._next:
            if nxt is not None and nxt not in seen:
                if below.get(nxt):
                    found = True
                    break
                seen.add(nxt)
                stack.append(nxt)
    below[node] = found
    return found


def check_backward(tensors) -> None:
    """Called by backward()/grad() while detection is on: warn when the roots reach an earlier step's graph."""
    roots = [t._grad_fn for t in tensors if getattr(t, "_grad_fn", None) is not None]
    old = []
    for _, stamp, ids in list(_steps.values()):
        below: dict = {}
        old += [n for n in _boundary(roots, stamp, set()) if _reaches(n, ids, below)]
    if not old:
        return
    frame = next(_user_frames(), None)
    carrier = next((_carriers[n] for n in old if n in _carriers), None)
    root_name = P._name_in(frame, tensors[0]) if frame is not None else None
    if carrier is not None:
        name, filename, lineno = carrier
        who = f"`{name}` (held across optimizer.step() at {filename}:{lineno}) carried it"
    else:
        name = None
        who = f"a tensor made by {old[0].name()} before the step carried it"
    msg = ("backward() reaches nodes recorded before the last optimizer.step(): the graph of an earlier "
           f"step is attached to this one, and {who}. ")
    if name is not None and name == root_name:
        msg += (f"`{name}` accumulates losses across steps (`{name} += loss`): accumulate numbers instead, "
                f"`{name} += loss.item()`, and call backward() on each step's own loss.")
    else:
        what = f"`{name}`" if name else "state carried between steps (an RNN hidden state ...)"
        fix = f"`{name} = {name}.detach()`" if name else "`h = h.detach()`"
        msg += (f"Detach {what} after each step: {fix} (or `.item()` for a number); otherwise backward goes "
                "through old steps (with old parameter values) again.")
    _warn(msg, frame)


def _warn(msg: str, frame) -> None:
    if frame is None:
        warnings.warn(msg, StaleGraphWarning, stacklevel=3)
    else:
        warnings.warn_explicit(msg, StaleGraphWarning, frame.f_code.co_filename, frame.f_lineno,
                               module=frame.f_globals.get("__name__"), registry=frame.f_globals.setdefault(
                                   "__warningregistry__", {}))
