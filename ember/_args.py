"""torch's argument conventions for ember's torch-shaped functions: NumPy's parameter names, ``out=``, and the
deprecated overloads torch still accepts.

# NOTE [torch's argument parser]
torch's builtins (``torch.sum``, ``Tensor.max``, ``torch.linalg.*`` ...) take their arguments through one C++
parser, which adds three things to every function it parses; ember's functions are plain Python functions with
torch's parameter names, and ``builtin`` adds the same three in one wrapper per function:
- NumPy's names for four parameters (``NUMPY_NAMES``): ``torch.sum(x, axis=0, keepdims=True)``,
  ``torch.add(x=a, x2=b)``;
- ``out=``: the result is written into the given tensor (``write_out``: resized with torch's warning, cast with
  torch's rules, refused when autograd would need the op) and that tensor is returned. A function that already
  takes ``out`` writes through ``write_out`` itself; ``builtin(fn, out=True)`` adds it to one that does not;
- the deprecated overloads of torch's ``add``/``sub``/``addcmul``/``addmm`` ... families (``add(t, 2, u)`` for
  ``add(t, u, alpha=2)``), with torch's warning, issued once per process unless ``torch.set_warn_always(True)``.
Functions torch writes in Python (``torch.functional.split``, most of ``nn.functional``) get none of these, as in
torch. The wrapper costs one call frame; a call without keywords does nothing else. tests/core/test_signatures.py
compares every name with torch's overloads.
"""
from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from . import _layout, _state
from ._tensor import Tensor, _CPP_NAMES
from .autograd.grad_mode import _mode

__all__ = ["NUMPY_NAMES", "builtin", "install", "write_out", "deprecated_overload"]

# python_arg_parser.cpp's numpy_compatibility_arg_names, alias -> torch's name
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


class _AliasOf:
    """The default shown for an alias parameter in a wrapper's signature."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<same as {self.name}>"


def _renamed(fname: str, kwargs: dict, aliases: dict) -> dict:
    out = {}
    for k, v in kwargs.items():
        canon = aliases.get(k, k)
        if canon in out:
            raise TypeError(f"{fname}() got multiple values for argument '{canon}'")
        out[canon] = v
    return out


def builtin(fn, *, name: str | None = None, out: bool = False, own_out: bool = False, exact: bool = False):
    """``fn`` taking its arguments as torch's argument parser does (NOTE [torch's argument parser]): NumPy's names
    for its parameters; ``out=`` (when ``out`` or ``fn`` has an ``out`` parameter) written by ``write_out`` with
    torch's rules (``exact``: the dtype must match), unless ``own_out`` (``fn`` computes in out's dtype itself);
    torch's deprecated overloads of ``name``. Returns ``fn`` itself when none of these applies."""
    fname = name or fn.__name__
    sig = inspect.signature(fn)
    params = sig.parameters
    aliases = {a: c for a, c in NUMPY_NAMES.items() if c in params and a not in params}
    takes_out = (out or "out" in params) and not own_out
    # calls with at least this many positional arguments may be a deprecated overload (addmm(1, t, m1, m2))
    most = _DEPRECATED.get(fname, 1 << 30)
    dep = most < 1 << 30
    options = any(o in params for o in _OPTIONS)
    if not aliases and not takes_out and not dep and not options:
        return fn
    keys = aliases.keys()

    def wrapper(*args, **kwargs):
        if kwargs:
            if not keys.isdisjoint(kwargs):
                kwargs = _renamed(fname, kwargs, aliases)
            if options:
                _check_options(fname, kwargs)
            if takes_out and "out" in kwargs:
                target = kwargs.pop("out")
                if target is not None:
                    if dep and len(args) >= most:
                        args, kwargs = deprecated_overload(fname, args, kwargs, method=False)
                    return write_out(target, fn(*args, **kwargs), fname, exact_dtype=exact)
        if dep and len(args) >= most:
            args, kwargs = deprecated_overload(fname, args, kwargs, method=False)
        return fn(*args, **kwargs)

    functools.update_wrapper(wrapper, fn)
    extra = [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=_AliasOf(c)) for a, c in aliases.items()]
    if out and "out" not in params:
        extra.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    ps = list(params.values())
    at = next((i for i, p in enumerate(ps) if p.kind is p.VAR_KEYWORD), len(ps))
    wrapper.__signature__ = sig.replace(parameters=ps[:at] + extra + ps[at:])
    return wrapper


def install(namespace: dict, names, *, python=(), out=(), own_out=(), exact=()) -> None:
    """Make each function ``names`` names in ``namespace`` (a module's globals) ``builtin``: all but those torch
    writes in Python (``python``); ``out``: torch has ``out=`` where ``fn`` has none; ``own_out``: ``fn`` handles
    its ``out`` itself; ``exact``: ``out`` must have the result's dtype."""
    sets = {"out": set(out), "own_out": set(own_out), "exact": set(exact)}
    python = set(python)
    done = set()
    for n in names:
        fn = namespace[n]
        if n in python or not inspect.isfunction(fn):
            continue
        namespace[n] = builtin(fn, name=n, out=n in sets["out"], own_out=n in sets["own_out"],
                               exact=n in sets["exact"])
        done.add(n)
    for what, s in sets.items():
        if s - done:
            raise ValueError(f"{what} names functions not installed: {sorted(s - done)}")


# ----------------------------------------------------------------------------- tensor options
# Options every ember tensor already satisfies, checked where a function takes them: only the strided layout
# exists, memory is never pinned (torch's error without an accelerator), a memory format is a memory_format
# (honoured by the functions that take one: empty, *_like, clone, contiguous, to).
_OPTIONS = ("pin_memory", "layout", "memory_format")
_NO_PINNING = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available "
               "on this system.")


def _check_options(fname: str, kwargs: dict) -> None:
    if kwargs.get("pin_memory"):
        raise RuntimeError(_NO_PINNING)
    layout = kwargs.get("layout")
    if layout is not None and layout is not _layout.strided:
        raise TypeError(f"{fname}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
    fmt = kwargs.get("memory_format")
    if fmt is not None and not isinstance(fmt, _layout.memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")


# ----------------------------------------------------------------------------- out=
_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0).")


def write_out(out, result, fname: str | None, *, exact_dtype: bool = False):
    """Write ``result`` (a tensor, or a tuple of them) into ``out`` (one tensor, or a tuple/list of as many) as
    torch's ``out=`` does, and return ``out`` (a tuple of the same kind as ``result``). ``exact_dtype``: ``out``
    must have the result's dtype (torch's matmul, argmax ... indices) instead of one it can be cast to."""
    if type(result) is not tuple and not isinstance(result, tuple):
        _check_grad(fname, (result,), (out,))
        return _write_one(out, result, fname, exact_dtype)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{fname or 'out='}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    _check_grad(fname, result, out)
    written = [_write_one(o, r, fname, exact_dtype or i > 0) for i, (o, r) in enumerate(zip(out, result))]
    return type(result)(*written) if hasattr(type(result), "_fields") else tuple(written)


def _check_grad(fname: str | None, results, outs) -> None:
    if _mode.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad for t in (*results, *outs)):
        raise RuntimeError(("" if fname is None else f"{fname}(): ") + "functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments requires grad.")


def _write_one(out, result: Tensor, fname: str | None, exact_dtype: bool) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname or 'out='}(): argument 'out' must be Tensor, not {type(out).__name__}")
    from .ops._inplace import _cast_check, check_inplace

    if out._dtype is not result._dtype:
        if exact_dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES[result._dtype.name][0]}, but got "
                               f"{_CPP_NAMES[out._dtype.name][0]} instead")
        _cast_check(result._dtype, out)
    check_inplace(out)
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size:
            warnings.warn(_RESIZED.format(list(out._data.shape), list(shape)), UserWarning, stacklevel=3)
        out._data = np.empty(shape, out._data.dtype)
    elif not out._data.flags.writeable:
        out._data = out._data.copy()
    if out._data is not result._data:
        np.copyto(out._data, result._data, casting="unsafe")
    out._bump()
    return out


# ----------------------------------------------------------------------------- deprecated overloads
# name -> (the modern form's positional parameters, its keyword-only numbers, the deprecated positional orders);
# every family also has the method forms name and name_ without ``input``, and torch.addmv_ as a function.
_FAMILIES = {
    "add": (("input", "other"), ("alpha",), (("input", "alpha", "other"),)),
    "sub": (("input", "other"), ("alpha",), (("input", "alpha", "other"),)),
    "addcmul": (("input", "tensor1", "tensor2"), ("value",), (("input", "value", "tensor1", "tensor2"),)),
    "addcdiv": (("input", "tensor1", "tensor2"), ("value",), (("input", "value", "tensor1", "tensor2"),)),
    **{n: (("input", a, b), ("beta", "alpha"), (("beta", "input", "alpha", a, b), ("beta", "input", a, b)))
       for n, a, b in (("addmm", "mat1", "mat2"), ("addmv", "mat", "vec"), ("addr", "vec1", "vec2"),
                       ("addbmm", "batch1", "batch2"), ("baddbmm", "batch1", "batch2"))},
}
_NUMBERS = ("alpha", "beta", "value")
# torch's functions with an extra ``out_dtype`` overload, which torch lists among the suggestions
_OUT_DTYPE = ("addmm", "baddbmm")


def _decl(p: str, default: bool = False) -> str:
    return ("Number " if p in _NUMBERS else "Tensor ") + p + (" = 1" if default else "")


def _text(name: str, positional, keyword, method: bool, out: bool) -> str:
    parts = [_decl(p) for p in positional if not (method and p == "input")]
    kw = [_decl(p, True) for p in keyword] + (["Tensor out = None"] if out else [])
    return f"{name}({', '.join(parts + (['*'] + kw if kw else []))})"


def _deprecated_table() -> dict:
    table = {}
    for base, (modern, numbers, orders) in _FAMILIES.items():
        for name, method in ((base, False), (base, True), (base + "_", True)):
            key = (name, method)
            suggest = [_text(name, modern, numbers, method, not method)]
            if base in _OUT_DTYPE and not method:
                suggest.append(_text(name, modern, numbers, method, True).replace(
                    f"{modern[-1]}, *", f"{modern[-1]}, torch.dtype out_dtype, *"))
            table[key] = [(tuple(p for p in order if not (method and p == "input")),
                           _text(name, order, (), method, not method), suggest) for order in orders]
    table[("addmv_", False)] = [(order, _text("addmv_", order, (), False, False),
                                 [_text("addmv_", _FAMILIES["addmv"][0], ("beta", "alpha"), False, False)])
                                for order in _FAMILIES["addmv"][2]]
    return table


_DEPRECATED_FORMS = _deprecated_table()
# function name -> the fewest positional arguments of its deprecated overloads
_DEPRECATED = {name: min(len(order) for order, _, _ in forms) for (name, method), forms in _DEPRECATED_FORMS.items()
               if not method}
_warned = [False]


def deprecated_overload(name: str, args: tuple, kwargs: dict, method: bool) -> tuple:
    """(args, kwargs) of the modern form for a call of a deprecated overload of ``name`` (numbers where the modern
    form has tensors); the call unchanged when it matches none (the function then raises its own error)."""
    forms = _DEPRECATED_FORMS.get((name, method))
    if forms is None:
        return args, kwargs
    for order, text, suggest in forms:
        if len(order) != len(args) or "out" in kwargs and method:
            continue
        if not all(isinstance(a, Tensor) != (p in _NUMBERS) for p, a in zip(order, args)):
            continue
        if not _warned[0] or _state.is_warn_always_enabled():
            _warned[0] = True
            warnings.warn(f"This overload of {name} is deprecated:\n\t{text}\nConsider using one of the following "
                          "signatures instead:\n\t" + "\n\t".join(suggest), UserWarning, stacklevel=3)
        named = dict(zip(order, args))
        positional = tuple(named.pop(p) for p in order if p not in _NUMBERS)
        return positional, {**named, **kwargs}
    return args, kwargs
