"""Where a compiled program's inputs come from on each call, and the checks that it still applies (guards).

NOTE [compile guards]
A program replays one traced call; it is valid for a later call only when everything the trace depended on is the
same. The guard function of a program (generated Python, one line per check, shown in ``compiled.code``) checks:
- the arguments' structure (tuples, lists, dicts, their lengths and keys) and every non-tensor argument: Python
  numbers, strings, None are specialised (a different value is a different program), other objects and modules by
  identity;
- every input tensor: its device (the type of its array, NOTE [compiled on devices]), shape, strides, dtype,
  requires_grad (and, for tensors the program writes, whether it is a
  view and whether it is a leaf). Input tensors are found each call where the trace found them: an argument, a
  module's parameter or buffer (looked up by name, so a replaced parameter is read), a plain tensor attribute of a
  module, a closure cell or a global of the compiled function (one or two container levels down), ``.grad`` or
  ``._base`` of one of those; any other tensor the call read is held by the program itself (its current values are
  read on every call);
- every module the call can reach: the identity of each submodule under its parent's name, ``training``, no hooks,
  and its plain attributes (numbers, strings, tuples of them; and those of plain objects it holds, such as config
  objects), so ``model.eval()``, ``dropout.p = 0.2`` or a swapped submodule make a new program;
- plain values in the compiled function's closure cells and in the globals its code names;
- before any of these, the thread's grad mode, inference mode, autocast state and the default dtype.
Python state the call changes (a module attribute, a list in a closure) cannot be replayed: the tracer compares the
reachable objects before and after the call and treats a change as a graph break (``snapshot``/``changed``).
"""
from __future__ import annotations

import types

from .. import _backend as _B
from .. import _dtype as D
from .._state import _tls as _autocast
from .._tensor import Tensor
from ..autograd.grad_mode import _mode
from ..nn.modules.module import Module
from .program import Source, literal

__all__ = ["state_key", "Roots", "snapshot", "changed", "guard_source"]

_PLAIN = (bool, int, float, str, type(None))


def state_key() -> tuple:
    """The thread state a program depends on: grad and inference mode, CPU autocast, the default float dtype."""
    return (_mode.grad_enabled, _mode.inference, _autocast.cpu, _autocast.cpu_dtype if _autocast.cpu else None,
            D._defaults.float_dtype)


def _plain(v) -> bool:
    t = type(v)
    if t in _PLAIN:
        return not (t is float and v != v)
    if t is tuple and len(v) <= 16:
        return all(_plain(x) for x in v)
    return False


def _is_object(v) -> bool:
    """A plain object whose attributes the call may read (a config object): not a module, tensor, function ..."""
    return (hasattr(v, "__dict__") and not isinstance(v, (Module, Tensor, types.ModuleType, type, types.FunctionType,
                                                          types.MethodType, types.BuiltinFunctionType))
            and type(v).__module__ not in ("builtins",) and not callable(v))


class Roots:
    """The modules, cells and globals a compiled function can reach, and where tensors among them live."""

    def __init__(self, fn, args: tuple, kwargs: dict, module=None) -> None:
        self.fn = fn
        self.modules: list = []         # (module, parent module or None, name under the parent)
        self.index: dict = {}           # id(tensor) -> Source
        self.cells: list = []           # closure cells of the compiled function
        self.globals: list = []         # (name, value) globals its code names
        seen: set = set()
        if module is not None:
            self._add_module(module, None, "", seen)
        target = getattr(fn, "__func__", fn)
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, Module):
            self._add_module(owner, None, "", seen)
        code = getattr(target, "__code__", None)
        closure = getattr(target, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, closure):
                try:
                    val = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                self.cells.append((name, cell))
                self._reach(val, seen)
            g = getattr(target, "__globals__", {})
            for name in code.co_names:
                if name in g:
                    val = g[name]
                    self.globals.append((name, g))
                    self._reach(val, seen)
        for a in list(args) + list(kwargs.values()):
            self._reach(a, seen)

    def _reach(self, val, seen: set, depth: int = 0) -> None:
        if isinstance(val, Module):
            self._add_module(val, None, "", seen)
        elif isinstance(val, (list, tuple)) and depth < 2:
            for x in val[:256]:
                self._reach(x, seen, depth + 1)
        elif isinstance(val, dict) and depth < 2:
            for x in list(val.values())[:256]:
                self._reach(x, seen, depth + 1)

    def _add_module(self, m: Module, parent, name: str, seen: set) -> None:
        if id(m) in seen:
            return
        seen.add(id(m))
        self.modules.append((m, parent, name))
        for child_name, child in m._modules.items():
            if child is not None:
                self._add_module(child, m, child_name, seen)

    # ------------------------------------------------------------------ sources
    def sources(self, args: tuple, kwargs: dict, bind) -> dict:
        """id(tensor) -> Source for every tensor reachable from the arguments, modules, cells and globals.
        ``bind(obj, stem)`` names an object in the guard's namespace."""
        index: dict = {}
        found: dict = {}
        for i, a in enumerate(args):
            _walk(a, f"args[{i}]", f"argument {i}", "arg", index, found, 0)
        for k, a in kwargs.items():
            _walk(a, f"kwargs[{k!r}]", f"argument {k}", "arg", index, found, 0)
        for m, _, _ in self.modules:
            for kind, attr in (("param", "_parameters"), ("buffer", "_buffers")):
                for n, t in getattr(m, attr).items():
                    if t is not None and id(t) not in index:
                        index[id(t)] = Source(kind, f"{bind(m, 'm')}.{attr}[{n!r}]", f"{_mod_label(self, m)}{n}", m)
                        found[id(t)] = t
            for n, v in vars(m).items():
                if isinstance(v, Tensor) and id(v) not in index:
                    index[id(v)] = Source("attr", f"{bind(m, 'm')}.__dict__[{n!r}]", f"{_mod_label(self, m)}{n}", m)
                    found[id(v)] = v
        for name, cell in self.cells:
            try:
                val = cell.cell_contents
            except ValueError:
                continue
            if isinstance(val, (Tensor, list, tuple, dict)):
                _walk(val, f"{bind(cell, 'cell_' + name)}.cell_contents", name, "closure", index, found, 0)
        for name, g in self.globals:
            val = g.get(name)
            if isinstance(val, (Tensor, list, tuple, dict)):
                _walk(val, f"{bind(g, 'globals')}[{name!r}]", name, "global", index, found, 0)
        for key, src in list(index.items()):  # .grad and ._base of what was found
            t = found[key]
            if t._grad is not None and id(t._grad) not in index:
                index[id(t._grad)] = Source("grad", f"({src.expr})._grad", f"{src.label}.grad")
            if t._base is not None and id(t._base) not in index:
                index[id(t._base)] = Source("base", f"({src.expr})._base", f"{src.label}._base")
        return index


def _mod_label(roots: Roots, m: Module) -> str:
    parts = []
    parent_of = {id(c): (p, n) for c, p, n in roots.modules}
    cur = m
    while True:
        p, n = parent_of.get(id(cur), (None, ""))
        if p is None:
            break
        parts.append(n)
        cur = p
    return ".".join(reversed(parts)) + "." if parts else ""


def _walk(val, expr: str, label: str, kind: str, index: dict, found: dict, depth: int) -> None:
    if isinstance(val, Tensor):
        if id(val) not in index:
            index[id(val)] = Source(kind, expr, label)
            found[id(val)] = val
        return
    if depth >= 2:
        return
    if isinstance(val, (list, tuple)):
        for i, x in enumerate(val[:1024]):
            _walk(x, f"{expr}[{i}]", f"{label}[{i}]", kind, index, found, depth + 1)
    elif isinstance(val, dict):
        for k, x in list(val.items())[:1024]:
            if type(k) in (str, int):
                _walk(x, f"{expr}[{k!r}]", f"{label}[{k!r}]", kind, index, found, depth + 1)


# ----------------------------------------------------------------------------- side effects
def snapshot(roots: Roots, args: tuple, kwargs: dict) -> list:
    """(container, shallow copy) of every Python container the call can reach, to find what it changes."""
    out = []
    seen = set()

    def add(obj, depth: int) -> None:
        if id(obj) in seen or depth > 3:
            return
        if isinstance(obj, (Tensor, types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)) \
                or _B.is_array(obj):
            return
        if isinstance(obj, dict):
            seen.add(id(obj))
            out.append((obj, dict(obj)))
            for v in list(obj.values())[:1024]:
                add(v, depth + 1)
        elif isinstance(obj, list):
            seen.add(id(obj))
            out.append((obj, list(obj)))
            for v in obj[:1024]:
                add(v, depth + 1)
        elif isinstance(obj, tuple):
            for v in obj[:1024]:
                add(v, depth + 1)
        elif hasattr(obj, "__dict__") and not callable(obj) or isinstance(obj, Module):
            seen.add(id(obj))
            d = vars(obj)
            out.append((obj, dict(d)))
            for k, v in list(d.items()):
                if k in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                         "_state_dict_hooks", "_load_state_dict_pre_hooks"):
                    continue
                add(v, depth + 1 if not isinstance(obj, Module) else depth)

    for m, _, _ in roots.modules:
        add(m, 0)
    for _name, cell in roots.cells:
        try:
            add(cell.cell_contents, 1)
        except ValueError:
            pass
    for name, g in roots.globals:
        v = g.get(name)
        if isinstance(v, (list, dict)) or _is_object(v):
            add(v, 1)
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, dict)) or _is_object(a):
            add(a, 1)
    return out


def changed(snap: list) -> str | None:
    """What the call changed among the snapshot's containers (a description), or None."""
    for obj, before in snap:
        now = vars(obj) if not isinstance(obj, (dict, list)) else obj
        if isinstance(now, list):
            if len(now) != len(before) or any(a is not b for a, b in zip(now, before)):
                return f"a list ({len(before)} -> {len(now)} items) the function can reach was changed"
            continue
        if now.keys() != before.keys():
            added = [k for k in now if k not in before][:3]
            gone = [k for k in before if k not in now][:3]
            what = f"added {added}" if added else f"removed {gone}"
            return f"{_owner(obj)} was changed ({what})"
        for k, v in now.items():
            if before[k] is not v:
                return f"{_owner(obj)}.{k} was changed during the call" if not isinstance(obj, dict) \
                    else f"the entry {k!r} of a dict the function can reach was changed"
    return None


def _owner(obj) -> str:
    if isinstance(obj, dict):
        return "a dict"
    return f"an attribute of {type(obj).__name__}"


# ----------------------------------------------------------------------------- guard source
def guard_source(roots: Roots, args: tuple, kwargs: dict, inputs: list, bind, value_guards: dict) -> list:
    """The body lines of ``guard(args, kwargs)``: structure and value checks, then each input fetched and checked
    (``inputs``: program input Values with their Sources and traced tensors), ending in ``return [...]``."""
    lines: list = []
    _struct("args", args, lines, bind, 0)
    _struct("kwargs", kwargs, lines, bind, 0)
    for m, parent, name in roots.modules:
        mn = bind(m, "m")
        conds = [f"{mn}.training is not {m.training!r}",
                 f"{mn}._forward_hooks", f"{mn}._forward_pre_hooks", f"{mn}._backward_hooks",
                 f"{mn}._backward_pre_hooks"]
        if parent is not None:
            conds.insert(0, f"{bind(parent, 'm')}._modules.get({name!r}) is not {mn}")
        lines.append(f"if {' or '.join(conds)}: return None")
        for k, v in vars(m).items():
            if k in ("training", "_version") or k.startswith("_"):
                continue
            if _plain(v):
                lines.append(f"if {mn}.__dict__.get({k!r}, _MISSING) != {literal(v) or bind(v, 'v')}: return None")
            elif _is_object(v):
                on = bind(v, "obj")
                lines.append(f"if {mn}.__dict__.get({k!r}, _MISSING) is not {on}: return None")
                for ak, av in list(vars(v).items())[:64]:
                    if _plain(av) and not ak.startswith("__"):
                        lines.append(f"if getattr({on}, {ak!r}, _MISSING) != {literal(av) or bind(av, 'v')}: "
                                     f"return None")
    for name, cell in roots.cells:
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if _plain(v):
            lines.append(f"if {bind(cell, 'cell_' + name)}.cell_contents != {literal(v) or bind(v, 'v')}: return None")
        elif isinstance(v, Module):
            lines.append(f"if {bind(cell, 'cell_' + name)}.cell_contents is not {bind(v, 'm')}: return None")
    for name, g in roots.globals:
        v = g.get(name)
        if _plain(v):
            lines.append(f"if {bind(g, 'globals')}.get({name!r}, _MISSING) != {literal(v) or bind(v, 'v')}: return None")
        elif isinstance(v, Module):
            lines.append(f"if {bind(g, 'globals')}.get({name!r}) is not {bind(v, 'm')}: return None")
    names = []
    for v in inputs:
        t = v.tensor
        x = v.name
        lines.append(f"{x} = {v.src.expr}")
        conds = [f"not isinstance({x}, Tensor)"] if v.src.kind != "held" else []
        d = t._data
        lines.append(f"if {' or '.join(conds + [_device_check(x, d, bind)])}: return None")
        checks = [f"{x}._data.shape != {d.shape!r}", f"{x}._data.strides != {d.strides!r}",
                  f"{x}._dtype is not {bind(t._dtype, t._dtype.name)}", f"{x}._requires_grad is not {t._requires_grad!r}"]
        if v.written:
            checks.append(f"({x}._base is None) is not {t._base is None!r}")
            checks.append(f"({x}._grad_fn is None) is not {t._grad_fn is None!r}")
        lines.append(f"if {' or '.join(checks)}: return None")
        vg = value_guards.get(v)
        if vg is not None:
            lines.append(f"if not _same({x}._data, {bind(vg, 'value')}): return None")
        names.append(x)
    lines.append(f"return [{', '.join(names)}]")
    return lines


def _device_check(x: str, arr, bind) -> str:
    """The condition that ``x``'s array is not on ``arr``'s device (NOTE [compiled on devices]): its array type
    (host, stand-in or CuPy), and its GPU when CuPy sees several."""
    t = type(arr)
    stem = t.__name__ if t.__module__.startswith(("numpy", "ember")) else t.__module__.split(".")[0] + "_ndarray"
    cond = f"type({x}._data) is not {bind(t, stem)}"  # (_ndarray, _StandInArray, _cupy_ndarray)
    if not _B.SINGLE_DEVICE[0] and _B.device_of(arr).type == "cuda" and t is not _B.StandInArray:
        cond += f" or {x}._data.device.id != {_B.device_of(arr).index}"
    return cond


def _struct(expr: str, val, lines: list, bind, depth: int) -> None:
    t = type(val)
    if isinstance(val, Tensor):
        return
    if t in (tuple, list):
        lines.append(f"if type({expr}) is not {t.__name__} or len({expr}) != {len(val)}: return None")
        for i, x in enumerate(val):
            _struct(f"{expr}[{i}]", x, lines, bind, depth + 1)
    elif t is dict:
        lines.append(f"if type({expr}) is not dict or {expr}.keys() != {bind(frozenset(val.keys()), 'keys')}: "
                     f"return None")
        for k, x in val.items():
            _struct(f"{expr}[{k!r}]", x, lines, bind, depth + 1)
    elif val is None:
        lines.append(f"if {expr} is not None: return None")
    elif _plain(val):
        lit = literal(val)
        lines.append(f"if type({expr}) is not {t.__name__} or {expr} != {lit if lit else bind(val, 'v')}: return None")
    else:
        lines.append(f"if {expr} is not {bind(val, 'obj')}: return None")
