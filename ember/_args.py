"""torch's argument conventions for ember's torch-shaped functions: NumPy's parameter names, ``out=``, and the
deprecated overloads torch still accepts.

# NOTE [torch's argument parser]
torch's builtins (``torch.sum``, ``Tensor.max``, ``torch.linalg.*`` ...) take their arguments through one C++
parser, which adds the same things to every function it parses. ember's functions are plain Python functions with
torch's parameter names; ``builtin`` adds these in one wrapper per function (``install`` at the end of each op
module names the functions; torch's Python functions, ``torch.functional.split`` or most of ``nn.functional``,
get none, as in torch):
- NumPy's names for four parameters (``NUMPY_NAMES``): ``torch.sum(x, axis=0, keepdims=True)``,
  ``torch.add(x=a, x2=b)``;
- ``out=``: the result is written into the given tensor by ``write_out`` (resized with torch's warning, dtypes by
  NOTE [out= dtypes], torch's error when autograd would need the op) and that tensor is returned; factories handle
  their ``out`` themselves (``own_out``: the result takes out's dtype);
- the deprecated overloads of torch's ``add``/``sub``/``addcmul``/``addmm`` ... families (``add(t, 2, u)`` for
  ``add(t, u, alpha=2)``), with torch's warning, issued once per process unless ``torch.set_warn_always(True)``;
- the tensor options every ember tensor already satisfies: ``pin_memory=True`` is torch's error without an
  accelerator, ``layout`` must be strided, ``memory_format`` a memory format.
The wrapper costs one call frame and a test for keywords; the unary elementwise functions (exp, tanh ..., the hot
path of op chains) take these arguments themselves and are not wrapped (``__torch_args__``). Tensor methods get
the same through their functions (NOTE [Tensor methods from functions] in _methods.py).
tests/core/test_signatures.py compares every name with torch's overloads, test_out.py every ``out=``.
"""
from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from . import _backend as _B
from . import _layout, _state
from ._device import _check_device
from ._tensor import Tensor, _CPP_NAMES
from .autograd.grad_mode import _mode

__all__ = ["NUMPY_NAMES", "builtin", "install", "write_out", "deprecated_overload"]

# python_arg_parser.cpp's numpy_compatibility_arg_names, alias -> torch's name
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


class _Absent:
    def __repr__(self) -> str:
        return "<required>"


ABSENT = _Absent()  # the default of a required ``input`` that may also come by a NumPy name


class _AliasOf:
    """The default shown for an alias parameter in a wrapper's signature."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<same as {self.name}>"


INPUT = _AliasOf("input")


def input_alias(fname: str, *given):
    """``input`` from the one of input and its NumPy names (x, a, x1) given, for functions taking torch's
    arguments themselves (``fn.__torch_args__``)."""
    found = [g for g in given if g is not INPUT and g is not ABSENT]
    if len(found) != 1:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "input"' if not found
                        else f"{fname}() got multiple values for argument 'input'")
    return found[0]


def _renamed(fname: str, kwargs: dict, aliases: dict) -> dict:
    out = {}
    for k, v in kwargs.items():
        canon = aliases.get(k, k)
        if canon in out:
            raise TypeError(f"{fname}() got multiple values for argument '{canon}'")
        out[canon] = v
    return out


def builtin(fn, *, name: str | None = None, out: bool = False, own_out: bool = False):
    """``fn`` taking its arguments as torch's argument parser does (NOTE [torch's argument parser]): NumPy's names
    for its parameters; ``out=`` (when ``out`` or ``fn`` has an ``out`` parameter) written by ``write_out`` with
    torch's rules (NOTE [out= dtypes]), unless ``own_out`` (``fn`` computes in out's dtype itself);
    torch's deprecated overloads of ``name``. Returns ``fn`` itself when none of these applies."""
    fname = name or fn.__name__
    if getattr(fn, "__torch_args__", False):  # takes torch's arguments itself (elementwise._unary_function)
        return fn
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
                    if fname in _GRAD_FROM_INPUTS:
                        _check_grad(_GRAD_FROM_INPUTS[fname], args, ())
                    return write_out(target, fn(*args, **kwargs), fname)
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


def install(namespace: dict, names, *, python=(), out=(), own_out=()) -> None:
    """Make each function ``names`` names in ``namespace`` (a module's globals) ``builtin``: all but those torch
    writes in Python (``python``); ``out``: torch has ``out=`` where ``fn`` has none; ``own_out``: ``fn`` handles
    its ``out`` itself (factories: the result takes out's dtype)."""
    sets = {"out": set(out), "own_out": set(own_out)}
    python = set(python)
    done = set()
    for n in names:
        fn = namespace[n]
        if n in python or not inspect.isfunction(fn):
            continue
        namespace[n] = builtin(fn, name=n.lstrip("_"), out=n in sets["out"], own_out=n in sets["own_out"])
        done.add(n)
    for what, s in sets.items():
        if s - done:
            raise ValueError(f"{what} names functions not installed: {sorted(s - done)}")


# ----------------------------------------------------------------------------- tensor options
# Options every ember tensor already satisfies, checked where a function takes them: only the strided layout
# exists, memory is never pinned (torch's error without an accelerator), the device is the CPU (torch's error for
# an accelerator), a memory format is a memory_format (honoured by the functions that take one: empty, *_like,
# clone, contiguous, to).
_OPTIONS = ("pin_memory", "layout", "memory_format", "device")
_NO_PINNING = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available "
               "on this system.")


def _check_options(fname: str, kwargs: dict) -> None:
    if kwargs.get("pin_memory"):
        raise RuntimeError(_NO_PINNING)
    layout = kwargs.get("layout")
    if layout is not None and layout is not _layout.strided:
        raise TypeError(f"{fname}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
    if kwargs.get("device") is not None:
        _check_device(kwargs["device"])
    fmt = kwargs.get("memory_format")
    if fmt is not None and not isinstance(fmt, _layout.memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")


# ----------------------------------------------------------------------------- out=
_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0).")
# NOTE [out= dtypes]: what torch does with an ``out`` of another dtype than the result depends on the kernel.
# Elementwise (TensorIterator) kernels cast when torch's rules allow it ("result type Float can't be cast to the
# desired output type Long" otherwise): the default here. The others need the result's dtype, with one of the
# messages below (tests/core/test_out.py checks each against torch).
_EXACT = set("""addmm alias_copy argmax argmin argsort baddbmm bmm cross detach_copy diag diagonal_copy expand_copy
frobenius_norm gather index_add index_copy inverse isin linalg_det det eigvalsh inv matmul matrix_power solve svdvals
vector_norm log_softmax mm msort permute_copy renorm scatter scatter_add select_copy slice_copy slice_scatter softmax
sort topk squeeze_copy t_copy take_along_dim transpose_copy tril triu unbind_copy unfold_copy unsqueeze_copy view_copy
cholesky eigh qr svd linalg_svd linalg_slogdet slogdet lu_solve triangular_solve
index_reduce scatter_reduce index_fill masked_scatter mv cholesky_ex""".split())
# name -> (message, which output torch checks first); {res}/{out}: "Float", {res_c}/{out_c}: "float", {out_t}:
# "torch.FloatTensor", {name}: the function
_OUT_DTYPE = {
    # (clamp/clip with number bounds; with tensor bounds torch casts, as clamp_min/clamp_max here)
    **dict.fromkeys("abs absolute ceil conj_physical fix floor frac hardshrink lerp neg negative round sgn sign trunc "
                    "clamp clip bitwise_not".split(), ("Found dtype {out} but expected {res}", 0)),
    **dict.fromkeys(("all", "any"), ("{name} only supports bool tensor for result, got: {out}", 0)),
    **dict.fromkeys(("amax", "amin"), ("Expected the dtype for input and out to match, but got {res} for input's "
                                       "dtype and {out} for out's dtype.", 0)),
    **dict.fromkeys(("bucketize", "searchsorted"), (
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending on "
        "whether out_int32 flag is True, but we got output tensor's dtype {out} and out_int32 flag is False", 0)),
    **dict.fromkeys(("cummax", "cummin", "logcumsumexp"), ("expected scalar_type {res} but found {out}", 0)),
    **dict.fromkeys(("dot", "vdot"), ("result dtype {out} does not match input dtype {res}", 0)),
    "addbmm": ("self and mat2 must have the same dtype, but got {out} and {res}", 0),
    "solve_triangular": ("expected scalar type {res} but found {out}", 0),
    "float_power": ("the output given to float_power has dtype {out} but the operation's result requires dtype {res}",
                    0),
    "frexp": ("torch.frexp() expects mantissa to have dtype {res_c} but got {out_c}", 0),
    "heaviside": ("heaviside is not yet implemented for tensors with different dtypes.", 0),
    **dict.fromkeys(("histc", "histogram"), ("torch.histogram: input tensor and hist tensor should have the same "
                                             "dtype, but got input {res_c} and hist {out_c}", 0)),
    **dict.fromkeys(("index_select", "masked_select"), ("{name}(): self and result must have the same scalar type", 0)),
    "inner": ("tensordot: Expected the output tensor to have dtype {res}, but got an output tensor with dtype {out}", 0),
    **dict.fromkeys(("isneginf", "isposinf", "signbit"), ("{name} does not support non-boolean outputs.", 0)),
    "kthvalue": ("output values must be of same type as input", 0),
    **dict.fromkeys(("matrix_norm", "nuclear_norm"), ("linalg.matrix_norm expected out tensor dtype {res} but got: "
                                                      "{out}", 0)),
    "multi_dot": ("multi_dot(): expected out tensor to have dtype {res_c} but got {out_c}", 0),
    "norm": ("linalg.norm expected out tensor dtype {res} but got: {out}", 0),
    "vecdot": ("linalg.vecdot: Expected out of dtype{res} but found {out}", 0),
    **dict.fromkeys(("median", "nanmedian"), ("Expected tensor for argument #1 'indices' to have scalar type Long; but "
                                              "got {out_t} instead (while checking arguments for median)", 1)),
    "mode": ("expected scalar type '{res}' but got '{out}' for values output", 0),
    "multinomial": ("multinomial expects Long tensor out, got: {out}", 0),
    "nan_to_num": ("nan_to_num: dtype of out: {out} should be same as input: {res}", 0),
    **dict.fromkeys(("quantile", "nanquantile"), ("quantile() out tensor must be same dtype as the input tensor", 0)),
    "narrow_copy": ("Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error message be "
                    "improved?  If so, please report an enhancement request to PyTorch.)", 0),
    **dict.fromkeys(("nonzero", "nonzero_static"), ("{name}: Expected out tensor to have scalar type Long but got "
                                                    "scalar type{out}", 0)),
    "take": ("take(): self and out expected to have the same dtype, but got self.dtype = {res} and out.dtype = {out}",
             0),
    "where": ("Expected out type to be {res} but got {out}", 0),
    **dict.fromkeys(("complex", "polar"), ("Expected object of scalar type {res} but got scalar type {out} for argument "
                                           "'out'", 0)),
}
# linalg kernels that cast each output where torch's canCast allows it, with their own message otherwise:
# name -> (torch's name in the message, the outputs' names)
_SAFE_CAST = {"geqrf": ("torch.geqrf", ("a", "tau")),
              "eig": ("torch.linalg.eig", ("eigenvalues", "eigenvectors")),
              "eigvals": ("torch.linalg.eigvals", ("eigenvalues",)),
              **dict.fromkeys(("householder_product", "orgqr"), ("torch.linalg.householder_product", ("result",)))}
# the Fourier transforms: ``out`` must be complex (or, for the complex-to-real ones, floating point), of any
# precision; name -> (the name torch's message gives, the kind)
_FFT_OUT = {**{n: (n.rstrip("2") + ("n" if n.endswith("2") else ""), "complex") for n in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn")},
            **{n: (n.rstrip("2") + ("n" if n.endswith("2") else ""), "floating point") for n in (
                "irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn")}}
# functions that resize a wrong-shaped ``out`` without torch's warning (factories and samplers make a new tensor)
_QUIET_RESIZE = {"bernoulli", "multinomial", "narrow_copy", "poisson", "addbmm"}
# functions returning pieces (unbind_copy ...): torch writes them into ``out`` (resized when the dtype is the same,
# else copied) and returns None; split_copy always copies (``out`` must have the pieces' shapes)
_PIECES = {"split_copy", "unbind_copy", "split_with_sizes_copy"}
# torch's composites whose out= form copies the result into ``out`` (CopyBackwards): an input requiring grad is
# no error there, ``out`` joins the graph (eigvals: torch's ``out`` requires grad but its backward is not
# implemented; ember's differentiates)
_OUT_JOINS_GRAPH = set("""alias_copy conj_physical diag diagonal_copy expand_copy floor_divide heaviside inner
matrix_norm norm log_softmax nanquantile quantile nuclear_norm permute_copy select_copy slice_copy slice_scatter
softmax ndtr squeeze_copy t_copy transpose_copy unbind_copy unfold_copy unsqueeze_copy view_copy ifft ihfft
view_as_real_copy view_as_complex_copy eigvals""".split())
# functions whose out= form runs another op that refuses inputs requiring grad (its name in torch's error)
_GRAD_FROM_INPUTS = {"argsort": "sort"}


def write_out(out, result, fname: str | None, *, exact_dtype: bool = False):
    """Write ``result`` (a tensor, or a tuple of them) into ``out`` (one tensor, or a tuple/list of as many) as
    torch's ``out=`` does for function ``fname``, and return ``out`` (a tuple of the same kind as ``result``; None
    for pieces, as torch's split_copy ...). Dtypes: NOTE [out= dtypes]; ``exact_dtype``: ``out`` must have the result's dtype."""
    if not isinstance(result, (tuple, list)):
        _check_grad(fname, (result,), (out,))
        _check_dtypes(fname, (result,), (out,), exact_dtype)
        return _write_one(out, result, fname)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{fname or 'out='}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    _check_grad(fname, result, out)
    if fname in _PIECES:
        for o, r in zip(out, result):
            if o._dtype is r._dtype and fname != "split_copy":
                _write_one(o, r, fname)
            elif fname in _EXACT:
                _check_dtypes(fname, (r,), (o,), True)
            else:
                o.copy_(r)
        return None
    _check_dtypes(fname, result, out, exact_dtype)
    written = [_write_one(o, r, fname) for o, r in zip(out, result)]
    return type(result)(*written) if hasattr(type(result), "_fields") else tuple(written)


def _check_grad(fname: str | None, results, outs) -> None:
    if fname in _OUT_JOINS_GRAPH:
        return
    if _mode.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad for t in (*results, *outs)):
        raise RuntimeError(("" if fname is None else f"{fname}(): ") + "functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments requires grad.")


def _check_dtypes(fname: str | None, results, outs, exact: bool) -> None:
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{fname or 'out='}(): argument 'out' must be Tensor, not {type(o).__name__}")
    if all(o._dtype is r._dtype for o, r in zip(outs, results)):
        return
    from .ops._inplace import _can_cast, _cast_check

    if fname in _FFT_OUT:
        where, kind = _FFT_OUT[fname]
        for o in outs:
            if not (o._dtype.is_complex if kind == "complex" else o._dtype.is_floating_point):
                raise RuntimeError(f"{where} expects a {kind} output tensor, but got {_title(o._dtype)}")
    if fname in _SAFE_CAST:
        where, names = _SAFE_CAST[fname]
        for r, o, name in zip(results, outs, names):
            if not _can_cast(r._dtype, o._dtype):
                raise RuntimeError(f"{where}: Expected {name} to be safely castable from {_title(r._dtype)} dtype, "
                                   f"but got {name} with dtype {_title(o._dtype)}")
        return
    special = _OUT_DTYPE.get(fname)
    if special is not None:
        message, which = special
        r, o = results[which]._dtype, outs[which]._dtype
        if r is not o:
            raise RuntimeError(message.format(name=fname, res=_title(r), out=_title(o), res_c=_CPP_NAMES[r.name][0],
                                              out_c=_CPP_NAMES[o.name][0], out_t=f"torch.{_title(o)}Tensor"))

    for i, (r, o) in enumerate(zip(results, outs)):
        if r._dtype is o._dtype:
            continue
        if exact or i > 0 or fname in _EXACT or special is not None:  # indices are exact everywhere
            raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES[r._dtype.name][0]}, but got "
                               f"{_CPP_NAMES[o._dtype.name][0]} instead")
        _cast_check(r._dtype, o)


def _title(d) -> str:
    return _CPP_NAMES[d.name][1]


def _write_one(out: Tensor, result: Tensor, fname: str | None) -> Tensor:
    from .ops._inplace import check_inplace

    check_inplace(out)
    if _mode.tracer is not None and not (_mode.grad_enabled and (result._requires_grad or out._requires_grad)):
        _mode.tracer.write(out, result)  # ember.compile records the write (a resize is a graph break, NOTE [compile])
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size and fname is not None and fname not in _QUIET_RESIZE:
            warnings.warn(_RESIZED.format(list(out._data.shape), list(shape)), UserWarning, stacklevel=4)
        out._data = np.empty(shape, out._data.dtype)
    elif not _B.writeable(out._data):
        out._data = out._data.copy()
    if _mode.grad_enabled and (result._requires_grad or out._requires_grad):  # _OUT_JOINS_GRAPH: out.copy_(result)
        return out.copy_(result)
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
_WITH_OUT_DTYPE = ("addmm", "baddbmm")


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
            if base in _WITH_OUT_DTYPE and not method:
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


def tensor_arg(fname: str, x, arg: str = "input", pos: int = 1) -> None:
    """torch's TypeError when argument ``arg`` (position ``pos``) of ``fname`` is not a tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")
