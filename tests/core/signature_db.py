"""torch 2.13's Python-visible signatures, and ember's, as comparable records.

torch's functions come in two kinds:
- Python functions (``torch.functional.split``, most of ``nn.functional``, ``Tensor`` methods written in
  ``torch/_tensor.py``): ``inspect.signature`` reads them.
- Builtins parsed by torch's C++ argument parser (``torch.sum``, ``Tensor.new_zeros``, ``torch.linalg.*`` ...):
  several overloads each. Their signatures come from the stubs torch generates from the same declarations
  (``torch/_C/_VariableFunctions.pyi``, ``TensorBase`` in ``torch/_C/__init__.pyi``, ``torch/_C/_nn.pyi``),
  and for ``torch.linalg`` / ``torch.special`` / ``torch.fft``, which have no stub, from the ATen schemas by the
  parser's rules (``self`` is ``input``, an out variant adds a keyword-only ``out``). The parser also takes NumPy's
  names for four parameters (``NUMPY_ALIASES``).

A signature is a tuple of ``Param(name, kind, default)``; kind is ``POS`` (positional or keyword), ``KW``
(keyword only) or ``VAR`` (``*size``: any number of positional values, or the whole as a keyword).
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import types
from typing import NamedTuple

import torch

POS, KW, VAR = "pos", "kw", "var"


class _Required:
    def __repr__(self) -> str:
        return "<required>"


REQUIRED = _Required()
# torch/csrc/utils/python_arg_parser.cpp: numpy_compatibility_arg_names (checked by test_numpy_alias_table)
NUMPY_ALIASES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}


class Param(NamedTuple):
    name: str
    kind: str
    default: object = REQUIRED
    type: str = ""  # as torch's parser or stub writes it ("Tensor", "int", "tuple of ints", "_int" ...)


class TorchSig(NamedTuple):
    """All overloads of one torch callable; ``builtin``: parsed by the C++ argument parser (NumPy aliases)."""

    overloads: tuple
    builtin: bool


_TORCH_DIR = os.path.dirname(torch.__file__)


def _literal(node):
    if node is None:
        return REQUIRED
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def _from_ast(fn: ast.FunctionDef, method: bool) -> tuple:
    a = fn.args
    pos = a.posonlyargs + a.args
    if method:
        pos = pos[1:]
    defaults = [None] * (len(a.posonlyargs + a.args) - len(a.defaults)) + list(a.defaults)
    if method:
        defaults = defaults[1:]
    def ann(p):
        return ast.unparse(p.annotation) if p.annotation is not None else ""

    params = [Param(p.arg, POS, _literal(d), ann(p)) for p, d in zip(pos, defaults)]
    if a.vararg is not None:
        params.append(Param(a.vararg.arg, VAR, REQUIRED, ann(a.vararg)))
    params += [Param(p.arg, KW, _literal(d), ann(p)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return tuple(params)


def _parse_stub(path: str, cls: str | None = None) -> dict:
    tree = ast.parse(open(os.path.join(_TORCH_DIR, path)).read())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out: dict = {}
    for n in body:
        if isinstance(n, ast.FunctionDef):
            out.setdefault(n.name, []).append(_from_ast(n, cls is not None))
    return out


_STUBS: dict = {}


def _stub(key: str) -> dict:
    if key not in _STUBS:
        _STUBS[key] = {"functions": lambda: _parse_stub("_C/_VariableFunctions.pyi"),
                       "methods": lambda: _parse_stub("_C/__init__.pyi", "TensorBase"),
                       "nn": lambda: _parse_stub("_C/_nn.pyi"),
                       "C": lambda: _parse_stub("_C/__init__.pyi")}[key]()
    return _STUBS[key]


def _from_schemas(aten: str) -> list:
    """Overloads of ``aten::<aten>`` as the argument parser exposes them (functions, not methods)."""
    sigs, has_out = [], False
    for s in torch._C._jit_get_schemas_for_operator("aten::" + aten):
        if any(a.is_out for a in s.arguments):
            has_out = True
            continue
        params = []
        for a in s.arguments:
            default = a.default_value if a.has_default_value() else REQUIRED
            if isinstance(default, list):
                default = tuple(default)
            params.append(Param("input" if a.name == "self" else a.name, KW if a.kwarg_only else POS, default,
                                str(a.type)))
        sigs.append(params)
    if has_out:
        for p in sigs:
            p.append(Param("out", KW, None, "Tensor"))
    return [tuple(p) for p in sigs]


def _from_inspect(fn) -> tuple | None:
    try:
        sig = inspect.signature(fn)
    except (ValueError, TypeError):
        return None
    kinds = {inspect.Parameter.POSITIONAL_ONLY: POS, inspect.Parameter.POSITIONAL_OR_KEYWORD: POS,
             inspect.Parameter.KEYWORD_ONLY: KW, inspect.Parameter.VAR_POSITIONAL: VAR}
    params = []
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            params.append(Param(p.name, "varkw"))
            continue
        default = REQUIRED if p.default is inspect.Parameter.empty else p.default
        params.append(Param(p.name, kinds[p.kind], default))
    return tuple(params)


def _stub_overloads(key: str, name: str) -> list:
    """A stub's overloads of ``name``, less those naming a parameter ``self`` (the deprecated overloads and the
    number-first ones, e.g. ``pow(self: Number, exponent)``, which the parser's own list gives where it matters)."""
    ovs = _stub(key).get(name, ())
    kept = [ov for ov in ovs if not any(p.name == "self" for p in ov)]
    if kept or not ovs:
        return kept
    # only hand-written hints name it self (torch.numel(self: Tensor)); the parser calls it input
    return [tuple(p._replace(name="input") if p.name == "self" else p for p in ov) for ov in ovs]


# Hand-written hints in torch's stubs that its parser contradicts (checked in test_signatures.py against torch):
# (method?, name) -> {stub parameter: (parser's name, parser's default)}
STUB_FIXES = {
    (True, "requires_grad_"): {"mode": ("requires_grad", True)},
}


def _fixed(method: bool, name: str, overloads: list) -> list:
    fix = STUB_FIXES.get((method, name))
    if not fix:
        return overloads
    return [tuple(p._replace(name=fix[p.name][0], default=fix[p.name][1]) if p.name in fix else p for p in ov)
            for ov in overloads]


def _checked(fn, overloads: list) -> TorchSig | None:
    """One overload from a stub or schema, corrected by what the parser itself says when it is given too many
    positional arguments ("takes 1 positional argument but 30 were given": the stubs' hand-written hints make
    ``torch.tensor``'s dtype positional) or none ("missing 1 required positional arguments: "input"": their names)."""
    if len(overloads) != 1:
        return TorchSig(tuple(overloads), True) if overloads else None
    ov = overloads[0]
    if any(p.kind == VAR for p in ov):
        return TorchSig((ov,), True)
    msg = _message(lambda: fn(*[_Probe()] * 30))
    if "takes no keyword arguments" in msg:
        return TorchSig((tuple(p._replace(kind="posonly") for p in ov),), True)
    m = re.search(r"takes (?:from \d+ to )?(\d+) positional argument", msg)
    if m:
        most = int(m.group(1))
        ov = tuple(p._replace(kind=POS if i < most else KW) if p.kind in (POS, KW) else p for i, p in enumerate(ov))
    if any(p.default is REQUIRED for p in ov):
        m = re.search(r'missing \d+ required positional arguments?: (.*)$', _message(fn), re.M)
        if m:
            names = re.findall(r'"([^"]+)"', m.group(1))
            req = [i for i, p in enumerate(ov) if p.default is REQUIRED and p.kind == POS]
            if len(names) == len(req):
                ov = list(ov)
                for i, n in zip(req, names):
                    ov[i] = ov[i]._replace(name=n)
                ov = tuple(ov)
    return TorchSig((ov,), True)


def _message(call) -> str:
    try:
        call()
    except TypeError as e:
        return str(e)
    except Exception:
        return ""
    return ""


def torch_signature(fn, name: str, method: bool = False) -> TorchSig | None:
    """torch's overloads of ``fn`` (called ``name``; ``method``: a ``Tensor`` attribute), or None when nothing
    describes them. Builtins: the overloads the argument parser lists, or (one overload) its stub / schema."""
    if method:
        if isinstance(fn, types.FunctionType):
            sig = _from_inspect(fn)
            return TorchSig((sig[1:],), False) if sig is not None else None
        bound = getattr(torch.empty(0), name)
        listed = parser_overloads(bound)
        if listed:
            return TorchSig(tuple(listed), True)
        # the stub's hand-written hints give add/sub/mul/div an ``out``, which torch's methods refuse
        ovs = [tuple(p for p in ov if p.name != "out") for ov in _stub("methods").get(name, ())]
        return _checked(bound, _fixed(True, name, ovs))
    if isinstance(fn, types.BuiltinFunctionType):
        listed = parser_overloads(fn)
        if listed:
            return TorchSig(tuple(_with_requires_grad(ov) for ov in listed), True)
        mod = getattr(fn.__self__, "__name__", "") if fn.__self__ is not None else ""
        real = fn.__name__
        if mod == "torch._C._nn":
            ovs = _stub_overloads("nn", real)
        elif mod in ("torch._C._linalg", "torch._C._special", "torch._C._fft"):
            ovs = _from_schemas(real)
        else:
            ovs = _stub_overloads("functions", real) or _stub_overloads("C", real)
        found = _checked(fn, _fixed(False, name, ovs))
        return found and found._replace(overloads=tuple(_with_requires_grad(ov) for ov in found.overloads))
    if isinstance(fn, types.FunctionType):
        dispatched = [d for d in _boolean_dispatched(fn) if d is not None]
        return TorchSig(tuple(dict.fromkeys(dispatched)), False) if dispatched else None
    sig = _from_inspect(fn)
    return TorchSig((sig,), False) if sig is not None else None


def _with_requires_grad(overload: tuple) -> tuple:
    """A factory's overload (it takes tensor options: pin_memory) also takes requires_grad, which the parser's
    listing of some (torch.fft.fftfreq) leaves out."""
    names = {p.name for p in overload}
    if "pin_memory" in names and "requires_grad" not in names:
        return overload + (Param("requires_grad", KW, False, "bool"),)
    return overload


def _boolean_dispatched(fn) -> list:
    """torch's ``boolean_dispatch`` functions (F.max_pool2d, torch.unique, torch.lu ...) are ``(*args, **kwargs)``
    over two Python functions chosen by a flag: their signatures are the overloads."""
    from torch._jit_internal import boolean_dispatched as table

    entry = table.get(fn) if isinstance(fn, types.FunctionType) else None
    if entry is None:
        return [_from_inspect(fn)]
    return _boolean_dispatched(entry["if_false"]) + _boolean_dispatched(entry["if_true"])


# ----------------------------------------------------------------------------- comparison
class _Arg:
    """A stand-in value for binding checks."""

    def __repr__(self) -> str:
        return "_"


_V = _Arg()


def _signature(params: tuple) -> inspect.Signature:
    kinds = {POS: inspect.Parameter.POSITIONAL_OR_KEYWORD, KW: inspect.Parameter.KEYWORD_ONLY,
             VAR: inspect.Parameter.VAR_POSITIONAL, "varkw": inspect.Parameter.VAR_KEYWORD}
    return inspect.Signature([inspect.Parameter(p.name, kinds[p.kind],
                                                default=inspect.Parameter.empty if p.default is REQUIRED else p.default)
                              for p in params])


def _calls(overload: tuple, builtin: bool):
    """(description, number of positional arguments, keyword names, {alias: torch's name}) of the calls an overload
    accepts: each parameter passed positionally in order, by keyword, and by its NumPy name."""
    pos = [p for p in overload if p.kind in (POS, "posonly")]
    var = next((p for p in overload if p.kind == VAR), None)
    req_pos = [p for p in pos if p.default is REQUIRED]
    req_kw = [p.name for p in overload if p.kind == KW and p.default is REQUIRED]
    n = len(req_pos)
    yield "required positionally", n, req_kw, {}
    if any(p.kind == "posonly" for p in overload):
        yield "all positionally", len(overload), [], {}
        return  # the parser takes no keywords (torch.set_num_threads)
    if any(p.name == "self" for p in overload):
        return  # a number first (pow(2, t)): torch names it ``self``, which nobody passes by keyword
    if var is None:
        for i in range(n, len(pos)):
            yield f"positionally up to {pos[i].name!r}", i + 1, req_kw, {}
    else:
        yield f"*{var.name}", n + 2, req_kw, {}
    names = [p for p in overload if p.kind in (POS, KW)]
    yield "required by keyword", 0, [p.name for p in names if p.default is REQUIRED], {}
    for p in names:
        if p.default is REQUIRED:
            continue
        yield f"{p.name!r} by keyword", n, req_kw + [p.name], {}
        if builtin:
            for alias in NUMPY_ALIASES.get(p.name, ()):
                yield f"{p.name!r} as {alias!r}", n, req_kw + [alias], {alias: p.name}
    if builtin:
        for p in req_pos:
            for alias in NUMPY_ALIASES.get(p.name, ()):
                yield f"{p.name!r} as {alias!r}", 0, [q.name if q is not p else alias for q in names
                                                      if q.default is REQUIRED], {alias: p.name}


def _declared_alias(sig: inspect.Signature, alias: str, name: str) -> bool:
    """ember's signature declares ``alias`` as another name of ``name`` (ember/_args.py; its behaviour is checked
    against torch by test_numpy_names_behave_as_torch)."""
    p = sig.parameters.get(alias)
    return p is not None and p.kind is inspect.Parameter.KEYWORD_ONLY and repr(p.default) == f"<same as {name}>"


def problems(ember: tuple, torch_sig: TorchSig) -> list:
    """How ``ember``'s parameters differ from torch's overloads: calls torch accepts that ember does not bind,
    parameters ember takes that torch has nowhere, positions torch makes keyword-only, defaults."""
    sig = _signature(ember)
    out = []
    if any(p.kind == "varkw" for p in ember) and not any(p.kind == "varkw" for ov in torch_sig.overloads for p in ov):
        out.append("ember takes **kwargs")
    for ov in torch_sig.overloads:
        for what, nargs, kws, aliases in _calls(ov, torch_sig.builtin):
            if aliases:
                alias, name = next(iter(aliases.items()))
                if not _declared_alias(sig, alias, name) and alias not in sig.parameters:
                    out.append(f"{_render(ov)}: {what}: ember has no {alias!r}")
                    continue
                if _declared_alias(sig, alias, name):
                    kws = [name if k == alias else k for k in kws]
            try:
                sig.bind(*[_V] * nargs, **{k: _V for k in kws})
            except TypeError as e:
                out.append(f"{_render(ov)}: {what}: {e}")
    torch_names = {p.name for ov in torch_sig.overloads for p in ov if p.kind in (POS, KW, VAR, "posonly")}
    if torch_sig.builtin:
        torch_names |= {a for n in torch_names for a in NUMPY_ALIASES.get(n, ())}
    for p in ember:
        if p.kind in (POS, KW) and p.name not in torch_names:
            out.append(f"ember has {p.name!r}")
    if not any(p.kind == VAR for ov in torch_sig.overloads for p in ov):
        most = max(sum(p.kind in (POS, "posonly") for p in ov) for ov in torch_sig.overloads)
        if any(p.kind == VAR for p in ember):
            out.append(f"ember takes *{next(p.name for p in ember if p.kind == VAR)}; torch at most {most} positional")
        else:
            pos = [p.name for p in ember if p.kind == POS]
            if len(pos) > most:
                out.append(f"ember takes {pos[most:]} positionally; torch at most {most} positional")
    for p in ember:
        if p.kind not in (POS, KW) or p.default is REQUIRED or repr(p.default).startswith("<same as ") \
                or p.name.startswith("_"):  # (a private parameter's default is no API)
            continue
        theirs = [q.default for ov in torch_sig.overloads for q in ov if q.name == p.name and q.default is not REQUIRED
                  and q.default is not Ellipsis]
        if theirs and not any(_same_default(p.default, d) for d in theirs):
            out.append(f"default {p.name}={p.default!r}, torch {theirs[0]!r}")
    return out


def _same_default(mine, theirs) -> bool:
    if isinstance(theirs, str) and theirs.startswith("torch."):
        return repr(mine) == theirs or str(mine) == theirs
    if isinstance(theirs, types.FunctionType):  # F.relu, noop_context_fn: ember's function of that name
        return callable(mine) and getattr(mine, "__name__", None) == theirs.__name__
    try:
        if type(mine) is type(theirs) and mine == theirs or (mine == theirs and not isinstance(mine, bool)
                                                             and not isinstance(theirs, bool)):
            return True
    except Exception:
        return False
    # an object (default_generator ...): ember's object of that class
    return type(theirs).__module__.startswith("torch") and type(mine).__name__ == type(theirs).__name__ and \
        not isinstance(theirs, (torch.dtype, torch.device))


def _render(ov: tuple) -> str:
    parts, kw = [], False
    for p in ov:
        if p.kind == KW and not kw:
            parts.append("*")
            kw = True
        s = ("*" if p.kind == VAR else "") + p.name
        parts.append(s if p.default is REQUIRED else f"{s}={p.default!r}")
    return "(" + ", ".join(parts) + ")"


# ----------------------------------------------------------------------------- the parser's own overload list
class _Probe:
    """An argument no overload accepts: the parser then lists every overload it has (when it has several)."""


def _split_top(s: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


_DEFAULTS = {"None": None, "False": False, "True": True, "[]": ()}


def _parse_default(text: str):
    if text in _DEFAULTS:
        return _DEFAULTS[text]
    if text.startswith("{") and text.endswith("}"):  # an int list default, as the parser prints it: {-2, -1}
        text = "(" + text[1:-1] + ",)"
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text if text.startswith("torch.") else "torch." + text if text in ("contiguous_format", "strided") \
            else text
    return tuple(v) if isinstance(v, list) else v


def _parse_message_overload(line: str) -> list:
    """One line of the parser's list; a lone positional int list also takes its values as separate arguments
    (python_arg_parser.cpp), which is a second overload ``(*name)``."""
    body = line.strip()[3:-1]  # " * (...)"
    params, kw = [], False
    for part in _split_top(body):
        if part == "*":
            kw = True
            continue
        decl, _, default = part.partition(" = ")
        typ, _, name = decl.rpartition(" ")
        params.append(Param(name, KW if kw else POS, _parse_default(default) if default else REQUIRED, typ))
    pos = [p for p in params if p.kind == POS]
    if len(pos) == 1 and params[0].kind == POS and params[0].type in ("tuple of ints", "tuple of SymInts"):
        return [tuple(params), (Param(params[0].name, VAR, REQUIRED, "int"),) + tuple(params[1:])]
    return [tuple(params)]


def parser_overloads(call) -> list | None:
    """The overloads torch's argument parser lists when ``call(probe)`` matches none (None: it has only one)."""
    msg = _message(lambda: call(_Probe()))
    if "but expected one of:" not in msg:  # some parsers first complain about the argument's type
        msg = _message(lambda: call(_Probe(), __probe__=None))
    if "but expected one of:" not in msg:
        return None
    return [ov for line in msg.splitlines() if line.startswith(" * (") for ov in _parse_message_overload(line)]


# ----------------------------------------------------------------------------- what is compared
# torch's Python namespaces whose functions and class constructors are compared too (their signatures come from
# inspect; a class's is its constructor's)
PYTHON_NAMESPACES = ("torch.autograd", "torch.autograd.functional", "torch.autograd.forward_ad", "torch.autograd.graph",
                     "torch.nn", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.parametrize",
                     "torch.nn.utils.parametrizations", "torch.nn.utils.prune", "torch.nn.parallel", "torch.optim",
                     "torch.optim.lr_scheduler", "torch.func", "torch.random", "torch.testing", "torch.utils.data",
                     "torch.utils.checkpoint", "torch.amp", "torch.serialization", "torch.hub", "torch.jit",
                     "torch.distributed", "torch.distributions", "torch.utils.tensorboard")


def namespaces():
    """(label, ember namespace, torch namespace): torch's torch-shaped namespaces that ember has."""
    import importlib

    import ember
    import ember.linalg
    import ember.nn.functional
    import ember.special

    out = [("torch", ember, torch), ("torch.nn.functional", ember.nn.functional, torch.nn.functional),
           ("torch.linalg", ember.linalg, torch.linalg), ("torch.special", ember.special, torch.special)]
    fft = getattr(ember, "fft", None)
    if fft is not None:
        out.append(("torch.fft", fft, torch.fft))
    for name in PYTHON_NAMESPACES:
        out.append((name, importlib.import_module("ember" + name[5:]), importlib.import_module(name)))
    return out


def _public(ns) -> list:
    names = set(getattr(ns, "__all__", ())) | {n for n in dir(ns) if not n.startswith("_")}
    return sorted(n for n in names if not n.startswith("_"))


class Pair(NamedTuple):
    key: str  # "torch.sum", "Tensor.sum"
    ember: object
    torch: object
    method: bool


def pairs() -> list:
    """Every public function both have in a namespace of ``namespaces()``, and every public Tensor method."""
    import ember

    out, seen = [], set()
    for label, ens, tns in namespaces():
        for n in _public(ens):
            try:
                ef = getattr(ens, n)
            except AttributeError:
                continue
            tf = getattr(tns, n, None)
            if tf is None or (label, n) in seen:
                continue
            if isinstance(ef, type) and isinstance(tf, type) and label in PYTHON_NAMESPACES:
                if (ef.__module__ or "").startswith("ember") and _described_class(tf):
                    seen.add((label, n))
                    out.append(Pair(f"{label}.{n}", ef, tf, False))
                continue
            if not _is_function(ef) or not _is_function(tf):
                continue
            if label in PYTHON_NAMESPACES and not (getattr(tf, "__module__", None) or "").startswith("torch"):
                continue  # (a helper torch's module imports, bisect_right ...)
            seen.add((label, n))
            out.append(Pair(f"{label}.{n}", ef, tf, False))
    for n in sorted(dir(ember.Tensor)):
        if n.startswith("_") or not hasattr(torch.Tensor, n):
            continue
        em = inspect.getattr_static(ember.Tensor, n)
        tm = inspect.getattr_static(torch.Tensor, n)
        if isinstance(em, (property, staticmethod, classmethod)) or not callable(em):
            continue
        if isinstance(tm, property) or type(tm).__name__ in ("getset_descriptor", "member_descriptor") \
                or not callable(tm):
            continue
        out.append(Pair(f"Tensor.{n}", em, tm, True))
    return out


def _described_class(cls) -> bool:
    """Whether torch's class has a constructor signature to compare (not ``(*args, **kwargs)`` or C++'s)."""
    params = _from_inspect(cls)
    return params is not None and not all(p.kind in (VAR, "varkw") for p in params)


def _is_function(f) -> bool:
    return callable(f) and not isinstance(f, (type, types.ModuleType)) and not hasattr(f, "__enter__")


def ember_params(pair: Pair) -> tuple | None:
    params = _from_inspect(pair.ember)
    if params is not None and pair.method:
        params = params[1:]
    return params


def torch_sig(pair: Pair) -> TorchSig | None:
    if isinstance(pair.torch, type):
        params = _from_inspect(pair.torch)
        return TorchSig((params,), False) if params is not None else None
    return torch_signature(pair.torch, pair.key.rsplit(".", 1)[1], method=pair.method)
