"""The Tensor methods that are torch functions with the tensor first: ``t.sum(1)`` is ``torch.sum(t, 1)``,
``t.add_(u)`` is ``torch.add(t, u)`` computed into ``t``.

# NOTE [Tensor methods from functions]
Most of torch's Tensor methods are a function of the same name called with the tensor as its first argument, or
that function's in-place form. They are listed here once, by the op module defining the function (or declared by
the function's row in an op table: NOTE [one row per op] in ops/_table.py, read by ``_row_entries``), and made by
``bind`` after the op modules are loaded (bottom of _tensor.py). Each method calls its function directly, refuses
``out=`` as torch's methods do, takes the deprecated overloads torch's method takes (NOTE [torch's argument
parser] in _args.py), and carries the function's signature with ``self`` first, which inspect.signature and the
signature-parity test read. An entry ``"name"`` binds the module's function ``name``; ``"alias=name"`` binds the
method ``alias`` to the function ``name``. Methods with logic of their own are functions of ``self`` written in
the module of their domain (conversions in _conversions.py, fills in ops/fill.py, samplers in ops/random.py, new_* in
_factories.py ...) and listed in ``_WRITTEN``; only the tensor's own state and metadata stay in _tensor.py.
"""
from __future__ import annotations

import importlib
import inspect
import itertools

from . import _args
from ._dtype import NotAScalar

__all__ = ["bind"]

# t.name(...) is module.name(t, ...)
_PLAIN = {
    "ops.arithmetic": "add sub mul div pow neg true_divide subtract multiply=mul divide=div negative=neg positive",
    "ops.reduction": "sum mean prod max min amax amin argmax argmin var std norm logsumexp cumsum cumprod "
                     "cummax cummin median all any nansum nanmean",
    "ops.shape": "transpose t unsqueeze flatten clone narrow select unbind "
                 "unflatten movedim repeat_interleave fliplr flipud roll rot90 chunk tensor_split tril triu "
                 "diagonal diag_embed diag diagflat trace swapaxes "
                 "swapdims=transpose moveaxis=movedim ravel split_with_sizes unsafe_split unsafe_split_with_sizes "
                 "unsafe_chunk narrow_copy is_same_size",
    "ops.sorting": "sort argsort topk kthvalue unique msort unique_consecutive",
    "ops.linalg": "matmul mm bmm mv dot vdot inner outer addmm addmv addr baddbmm addbmm kron cross ger=outer dist renorm matrix_exp",
    "ops.decompositions": "inverse det logdet slogdet cholesky svd matrix_power pinverse",
    "ops.random": "bernoulli multinomial",
    "ops.indexing": "gather scatter scatter_add scatter_reduce index_select index_add index_copy index_fill index_put "
                    "masked_fill masked_select masked_scatter take take_along_dim nonzero argwhere nonzero_static",
    "ops.strided": "unfold as_strided as_strided_",
    "_aten": "softmax log_softmax prelu hardshrink",
    "ops.complex_numbers": "sgn conj conj_physical resolve_conj resolve_neg is_conj is_neg conj_physical_ "
                           "adjoint",
    "ops.stft": "stft istft",
    "ops.composites": "logcumsumexp diff select_scatter slice_scatter diagonal_scatter as_strided_scatter "
                      "index_reduce put index_reduce_",
    "ops.statistics": "aminmax mode nanmedian quantile nanquantile cov corrcoef bincount histc histogram",
    "ops.solve": "cholesky_solve cholesky_inverse triangular_solve qr lu lu_solve",
}
# Python's operators: name -> (module, function or an Op's apply, how it is called): "checked" is
# ``function(self, other)`` answering NotImplemented to an operand that is neither a tensor nor a number (Python then
# raises its usual TypeError, and ``t == 'a'`` is False, as torch does; the try costs nothing unless raised);
# "checked exponent" the same with __pow__'s parameter name in torch; "alpha" the same with Add's or Sub's alpha of
# 1; "reflected" ``function(other, self)``; "plain" ``function(self, other)``; "inplace" the function computed into
# self.
_OPERATORS = {
    "__add__": ("ops.arithmetic", "Add.apply", "alpha"), "__radd__": ("ops.arithmetic", "Add.apply", "alpha"),
    "__sub__": ("ops.arithmetic", "Sub.apply", "alpha"), "__rsub__": ("ops.arithmetic", "Rsub.apply", "alpha"),
    "__mul__": ("ops.arithmetic", "Mul.apply", "checked"), "__rmul__": ("ops.arithmetic", "Mul.apply", "checked"),
    "__truediv__": ("ops.arithmetic", "Div.apply", "checked"),
    "__rtruediv__": ("ops.arithmetic", "rdiv", "checked"),
    "__pow__": ("ops.arithmetic", "pow", "checked exponent"), "__rpow__": ("ops.arithmetic", "RPow.apply", "reflected checked"),
    "__iadd__": ("ops.arithmetic", "add", "inplace"), "__isub__": ("ops.arithmetic", "sub", "inplace"),
    "__imul__": ("ops.arithmetic", "mul", "inplace"), "__itruediv__": ("ops.arithmetic", "div", "inplace"),
    **{f"__{n}__": ("ops.comparison", n, "checked") for n in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{f"__{p}{n}__": ("ops.comparison", "bitwise_" + n, "checked") for n in ("and", "or", "xor") for p in ("", "r")},
    **{f"__{n}__": ("ops.elementwise", f, "plain") for n, f in (
        ("floordiv", "floor_divide"), ("mod", "remainder"), ("lshift", "bitwise_left_shift"),
        ("rshift", "bitwise_right_shift"))},
    **{f"__r{n}__": ("ops.elementwise", f, "reflected") for n, f in (
        ("floordiv", "floor_divide"), ("mod", "remainder"), ("lshift", "bitwise_left_shift"),
        ("rshift", "bitwise_right_shift"))},
    **{f"__i{n}__": ("ops.elementwise", f, "inplace") for n, f in (
        ("floordiv", "floor_divide"), ("mod", "remainder"), ("lshift", "bitwise_left_shift"),
        ("rshift", "bitwise_right_shift"))},
}
# Methods with logic of their own, written as functions of ``self`` in the module of their domain and bound as they
# are (``"name=function"`` when the function has another name: a builtin's, or one the module defines otherwise).
_WRITTEN = {
    "_conversions": "item tolist numpy __array__ __len__ __iter__ __contains__ __bool__ __float__ __int__ __index__ "
                    "__complex__ __format__ __repr__ __deepcopy__ to type=to_type type_as cpu cuda xpu ipu mtia "
                    "float=_to_float32 double=_to_float64 half=_to_float16 bfloat16=_to_bfloat16 long=_to_int64 "
                    "int=_to_int32 short=_to_int16 char=_to_int8 byte=_to_uint8 bool=_to_bool cfloat=_to_complex64 "
                    "cdouble=_to_complex128 chalf=_to_complex32 pin_memory share_memory_ is_shared untyped_storage "
                    "storage is_pinned get_device",
    "_factories": "new_tensor new_zeros new_ones new_empty new_full new new_empty_strided",
    "_layout": "dim_order=_dim_order_method const_data_ptr to_dense to_sparse to_sparse_coo indices values coalesce "
               "is_coalesced sparse_dim dense_dim is_set_to is_distributed",
    "ops.fill": "zero_ fill_ copy_ fill_diagonal_ apply_ map_ map2_ resize_ resize_as_ resize resize_as",
    "ops.random": "uniform_ normal_ log_normal_ cauchy_ exponential_ geometric_ random_ bernoulli_",
    "ops.elementwise": "polygamma=_polygamma_method polygamma_=_polygamma_inplace float_power_",
    "utils.dlpack": "__dlpack__ __dlpack_device__",
}
# t.name_(...) is module.name(t, ...) written into t (ops/_inplace.py)
_INPLACE = {
    "ops.arithmetic": "add sub mul div pow neg true_divide subtract multiply=mul divide=div negative=neg",
    "ops.complex_numbers": "sgn",
    "ops.reduction": "cumsum cumprod",
    "ops.shape": "tril triu",
    "ops.linalg": "addmm addbmm baddbmm addmv addr renorm",
    # (scatter_reduce_: the form torch differentiates for complex inputs too)
    "ops.indexing": "scatter scatter_add scatter_reduce=scatter_reduce_any index_add index_copy index_fill index_put "
                    "masked_fill masked_scatter",
    "ops.composites": "put",
}
# t.name(*values) or t.name(values) or t.name(param=values): module.name(t, values) (torch's argument parser
# takes a lone positional int list as separate arguments too); entries "name:param"
_VARARGS = {
    "ops.shape": "reshape:shape view:size permute:dims flip:dims expand:size repeat:repeats tile:dims squeeze:dim "
                 "broadcast_to:size hsplit:indices vsplit:indices dsplit:indices",
    "ops.reduction": "sum_to_size:size count_nonzero:dim",
}
# torch writes these methods in Python (torch/_tensor.py): no NumPy names, as there
_PYTHON_METHODS = {"unflatten"}
# the hand-written methods of Tensor that torch's argument parser reads: NumPy names for their parameters
_HANDWRITTEN = ("size stride equal allclose view_as reshape_as expand_as type_as where copy_ map_ new_tensor new_zeros "
                "new_ones new_empty new_full new_empty_strided is_contiguous contiguous cpu resize_ resize_as_").split()
# t.name_(...) changes t's view geometry in place: t becomes module.name(t, ...) (ops/strided.py: _restride)
_RESTRIDE = {"ops.shape": "t transpose squeeze unsqueeze swapdims=transpose swapaxes"}  # name=view method


def _entries(table: dict):
    for module, names in table.items():
        mod = importlib.import_module("." + module, __package__)
        for entry in names.split():
            alias, _, name = entry.partition("=")
            fn = getattr(mod, name or alias)
            if alias in _PYTHON_METHODS:
                fn = getattr(fn, "__wrapped__", fn)
            yield alias, name or alias, fn


def _row_entries(kind: str):
    """The methods (``kind`` "methods") or in-place methods ("inplace") that the rows of the op tables declare, bound
    as entries of _PLAIN / _INPLACE are (NOTE [one row per op] in ops/_table.py)."""
    from .ops._table import ROW_MODULES

    for module in ROW_MODULES:
        mod = importlib.import_module(module)
        for name in getattr(mod.EXPORTS, kind):
            yield name, name, getattr(mod, name)


def _method_signature(fn) -> inspect.Signature:
    """``fn``'s signature as a method's: its first parameter called ``self``, no ``out`` (nor ``out_dtype``, which
    only torch's functions take), no other names for it."""
    sig = inspect.signature(fn)
    first = next(iter(sig.parameters))
    ps = [p for p in sig.parameters.values() if p.name not in ("out", "out_dtype")
          and not (isinstance(p.default, _args._AliasOf) and p.default.name == first)]
    first = ps[0].replace(name="self", kind=inspect.Parameter.POSITIONAL_OR_KEYWORD, default=inspect.Parameter.empty)
    return sig.replace(parameters=[first] + ps[1:])


def _no_out(name: str) -> TypeError:
    return TypeError(f"{name}() got an unexpected keyword argument 'out'")


def _fewest(name: str) -> int:
    """The fewest positional arguments (after self) of the deprecated overloads of method ``name`` (0: none)."""
    forms = _args._DEPRECATED_FORMS.get((name, True))
    return min(len(order) for order, _, _ in forms) if forms else 0


def _plain(name: str, fn):
    fewest = _fewest(name)
    if fewest:
        def method(self, *args, **kwargs):
            if kwargs and "out" in kwargs:
                raise _no_out(name)
            if len(args) >= fewest:
                args, kwargs = _args.deprecated_overload(name, args, kwargs, True)
            return fn(self, *args, **kwargs)
    else:
        def method(self, *args, **kwargs):
            if kwargs and "out" in kwargs:
                raise _no_out(name)
            return fn(self, *args, **kwargs)
    return method


# in-place methods torch refuses for complex tensors (their result is real)
_COMPLEX_REFUSED = {"abs": "In-place abs is not supported for complex tensors."}


def _inplace(name: str, fn, inplace):
    fewest = _fewest(name)
    refusal = _COMPLEX_REFUSED.get(fn.__name__)
    if refusal is not None:
        def method(self, *args, **kwargs):
            if self._dtype.is_complex:
                raise RuntimeError(refusal)
            if kwargs and "out" in kwargs:
                raise _no_out(name)
            return inplace(self, fn, *args, **kwargs)
    elif fewest:
        def method(self, *args, **kwargs):
            if kwargs and "out" in kwargs:
                raise _no_out(name)
            if len(args) >= fewest:
                args, kwargs = _args.deprecated_overload(name, args, kwargs, True)
            return inplace(self, fn, *args, **kwargs)
    else:
        def method(self, *args, **kwargs):
            if kwargs and "out" in kwargs:
                raise _no_out(name)
            return inplace(self, fn, *args, **kwargs)
    return method


def _varargs(name: str, fn, param: str):
    def method(self, *values, **kwargs):
        if kwargs and param in kwargs:
            if values:
                raise TypeError(f"{name}() got multiple values for argument '{param}'")
            return fn(self, kwargs.pop(param), **kwargs)
        if not values:
            return fn(self, **kwargs)
        return fn(self, values[0] if len(values) == 1 else values, **kwargs)
    return method


def _varargs_signature(fn, param: str) -> inspect.Signature:
    sig = _method_signature(fn)
    ps = list(sig.parameters.values())
    rest = [p.replace(kind=p.KEYWORD_ONLY) if p.kind is p.POSITIONAL_OR_KEYWORD else p for p in ps[1:]
            if p.kind is not p.VAR_POSITIONAL and p.name != param]
    kw = [p for p in rest if p.kind is p.KEYWORD_ONLY] + [p for p in rest if p.kind is p.VAR_KEYWORD]
    return sig.replace(parameters=[ps[0], inspect.Parameter(param + "s", inspect.Parameter.VAR_POSITIONAL),
                                   inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=None)] + kw)


def _restride(name: str, view, restride):
    def method(self, *args, **kwargs):
        return restride(self, view(self, *args, **kwargs))
    return method


def _operator(fn, how: str, inplace, not_a_scalar):
    if how == "alpha":
        def method(self, other):
            try:
                return fn(self, other, 1)
            except not_a_scalar:
                return NotImplemented
    elif how == "checked":
        def method(self, other):
            try:
                return fn(self, other)
            except not_a_scalar:
                return NotImplemented
    elif how == "checked exponent":  # torch's parameter name for __pow__
        def method(self, exponent):
            try:
                return fn(self, exponent)
            except not_a_scalar:
                return NotImplemented
    elif how == "reflected checked":
        def method(self, other):
            try:
                return fn(other, self)
            except not_a_scalar:
                return NotImplemented
    elif how == "reflected":
        def method(self, other):
            return fn(other, self)
    elif how == "plain":
        def method(self, other):
            return fn(self, other)
    else:  # inplace
        def method(self, other):
            return inplace(self, fn, other)
    return method


def bind(cls) -> None:
    """Add the methods of the tables to ``cls`` (Tensor); a name it already defines is an error (write it in one
    place)."""
    from .ops._inplace import inplace
    from .ops.strided import _restride as restride

    made = {}
    for name, (module, fname, how) in _OPERATORS.items():
        fn = importlib.import_module("." + module, __package__)
        for part in fname.split("."):
            fn = getattr(fn, part)
        made[name] = (_operator(fn, how, inplace, NotAScalar), None, f"Python's operator: see torch.{fname}.")
    for name, _fname, fn in _entries(_WRITTEN):
        made[name] = (fn, inspect.signature(fn), fn.__doc__)
    for name, fname, fn in itertools.chain(_entries(_PLAIN), _row_entries("methods")):
        made[name] = (_plain(name, fn), _method_signature(fn), f"See torch.{fname}.")
    for name, _fname, fn in itertools.chain(_entries(_INPLACE), _row_entries("inplace")):
        made[name + "_"] = (_inplace(name + "_", fn, inplace), _method_signature(fn),
                            f"In-place version of Tensor.{name}.")
    for module, names in _VARARGS.items():
        mod = importlib.import_module("." + module, __package__)
        for entry in names.split():
            name, param = entry.split(":")
            fn = getattr(mod, name)
            made[name] = (_varargs(name, fn, param), _varargs_signature(fn, param), f"See torch.{name}.")
    for names in _RESTRIDE.values():  # through the view method of the same name (its arguments)
        for entry in names.split():
            name, _, view = entry.partition("=")
            method, sig, _ = made[view or name]
            made[name + "_"] = (_restride(name + "_", method, restride), sig,
                                f"In-place version of Tensor.{name}: changes this tensor's view in place.")
    for name, (method, sig, doc) in made.items():
        if name in cls.__dict__:
            raise RuntimeError(f"Tensor.{name} is both written in the class and listed in ember/_methods.py")
        method.__name__, method.__qualname__, method.__doc__ = name, f"{cls.__name__}.{name}", doc
        if sig is not None:
            method.__signature__ = sig
        setattr(cls, name, method)
    for name in _HANDWRITTEN:
        setattr(cls, name, _args.builtin(cls.__dict__[name], name=name))
    _function_forms(cls)


def _function_forms(cls) -> None:
    """torch.exp_(t) ... (_aten.INPLACE_FORMS) call t's method: they take its parameters, ``input`` first."""
    from . import _aten

    for name in _aten.INPLACE_FORMS:
        fn = getattr(_aten, name)
        sig = inspect.signature(getattr(cls, name))
        ps = list(sig.parameters.values())
        fn.__signature__ = sig.replace(parameters=[ps[0].replace(name="input")] + ps[1:])
    _args.install(vars(_aten), _aten.INPLACE_FORMS)
