"""dtypes as torch spells them, mapped to NumPy dtypes, and torch's type-promotion rules."""
from __future__ import annotations

import builtins

import numpy as np

__all__ = ["dtype", "result_type", "promote_types", "get_default_dtype", "set_default_dtype", "finfo", "iinfo",
           "complex32", "complex64", "complex128"]


class dtype:
    """A tensor element type (``ember.float32`` ...), printed as torch prints it."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_kind", "_scalar_name",
                 "_reduced", "_differentiable", "__weakref__")

    def __init__(self, name: str, np_dtype, kind: int, scalar_name: str, itemsize: int = 0) -> None:
        self.name = name
        self._scalar_name = scalar_name  # as torch's messages spell it ("Long"); "LongTensor" is the legacy type
        if np_dtype is not None:  # None: filled on first use (bfloat16, NOTE [bfloat16 storage])
            self.np = np.dtype(np_dtype)
            itemsize = self.np.itemsize
        elif kind == 3:  # complex32: a name only (NOTE [complex dtypes])
            self.np = None
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self._differentiable = kind >= 2  # may require grad / carries gradients (floating and complex)
        self.is_signed = kind >= 2 or (kind == 1 and self.np.kind == "i")
        self.itemsize = itemsize
        # a 16-bit float: ops compute it in float32 and round back (NOTE [reduced precision] in ops/_op.py)
        self._reduced = kind == 2 and itemsize == 2

    def __getattr__(self, attr: str):
        # only reached for a slot never set: bfloat16's ``np`` before ml_dtypes is loaded
        if attr == "np" and self.name == "bfloat16":
            return _load_bfloat16()
        raise AttributeError(f"'torch.dtype' object has no attribute '{attr}'")

    def to_real(self) -> "dtype":
        """The real dtype of a complex dtype's parts (other dtypes: themselves)."""
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self) -> "dtype":
        """The complex dtype whose parts are this floating dtype (complex dtypes: themselves)."""
        c = _REAL_TO_COMPLEX.get(self)
        if c is None:
            if self.is_complex:
                return self
            raise RuntimeError(f"Unknown Complex ScalarType for {self._scalar_name}")
        return c

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


bool = dtype("bool", np.bool_, 0, "Bool")  # noqa: A001 - torch's name
uint8 = dtype("uint8", np.uint8, 1, "Byte")
int8 = dtype("int8", np.int8, 1, "Char")
int16 = dtype("int16", np.int16, 1, "Short")
int32 = dtype("int32", np.int32, 1, "Int")
int64 = dtype("int64", np.int64, 1, "Long")
float16 = dtype("float16", np.float16, 2, "Half")
float32 = dtype("float32", np.float32, 2, "Float")
float64 = dtype("float64", np.float64, 2, "Double")

# ---------------------------------------------------------------- bfloat16
# NOTE [bfloat16 storage]
# torch.bfloat16 tensors are stored as NumPy arrays of ml_dtypes' bfloat16 (the dtype maintained for JAX:
# round-to-nearest-even conversions, NumPy casts). ml_dtypes is an optional extra (``pip install ember[bf16]``),
# imported on first use, as ember's runtime dependency is NumPy alone and most programs never meet bfloat16.
# So the dtype object exists at import and everything about the *type* works without the package (repr,
# is_floating_point, itemsize, promotion, finfo, set_default_dtype); its NumPy dtype (``bfloat16.np``) is looked up
# the first time a bfloat16 array is made, and without ml_dtypes that raises ModuleNotFoundError with the hint.
# Kernels never see bfloat16 arrays: ops compute in float32 and round back (NOTE [reduced precision]).
bfloat16 = dtype("bfloat16", None, 2, "BFloat16", itemsize=2)
_BF16_HINT = ("torch.bfloat16 tensors need the ml_dtypes package (NumPy's bfloat16 dtype), an optional dependency "
              "of ember: pip install 'ember[bf16]' (or pip install ml_dtypes)")


def _load_bfloat16():
    """bfloat16's NumPy dtype, importing ml_dtypes (once) and registering it for the array -> dtype lookups."""
    try:
        import ml_dtypes
    except ImportError:
        raise ModuleNotFoundError(_BF16_HINT, name="ml_dtypes") from None
    npd = np.dtype(ml_dtypes.bfloat16)
    bfloat16.np = npd
    _BY_NP[npd] = bfloat16
    _BY_NUM[npd.num] = bfloat16
    _REDUCED_NP.add(npd)
    return npd
# ---------------------------------------------------------------- (end bfloat16)

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32, "long": int64}

# ---- complex dtypes ------------------------------------------------------------------------------------------
# NOTE [complex dtypes]: complex64/complex128 are NumPy's complex64/complex128 (pairs of float32/float64).
# complex32 (torch's experimental ComplexHalf) has no NumPy counterpart: it exists as a dtype (name, itemsize,
# to_real, promotion), but no tensor can hold it (``_no_complex32`` raises where one would be made).
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDouble")
complex32 = dtype("complex32", None, 3, "ComplexHalf", itemsize=4)
ALL = ALL + (complex64, complex128)
ALIASES.update(cfloat=complex64, cdouble=complex128, chalf=complex32, complex32=complex32)
_COMPLEX_TO_REAL = {complex32: float16, complex64: float32, complex128: float64}
_REAL_TO_COMPLEX = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}  # (torch: bf16 -> c64)


def _no_complex32() -> TypeError:
    return TypeError("ember cannot hold torch.complex32 (ComplexHalf) tensors: NumPy has no 32-bit complex type; "
                     "use torch.complex64")


def default_complex_dtype() -> "dtype":
    """The dtype of tensors made from Python complex numbers: the complex form of the default dtype."""
    return _REAL_TO_COMPLEX[_defaults.float_dtype]
# ---- end complex dtypes ----------------------------------------------------------------------------------------
_BY_NAME = {d.name: d for d in ALL} | ALIASES
_BY_NP = {d.np: d for d in ALL if d is not bfloat16}
_BY_NUM = {d.np.num: d for d in ALL if d is not bfloat16}
# np.intc/np.int_ style duplicates share a char but not always a num: fill by char as a fallback.
_BY_CHAR = {d.np.char: d for d in ALL if d is not bfloat16}
# NumPy dtypes of the 16-bit floats (bfloat16's once loaded): ops compute them in float32 (ops/_op.py)
_REDUCED_NP = {float16.np}


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The ember dtype of a NumPy dtype; TypeError for types torch has no equivalent for."""
    d = _BY_NUM.get(np_dtype.num) or _BY_CHAR.get(np_dtype.char)
    if d is None:
        d = _BY_NP.get(np.dtype(np_dtype))
    if d is None and np.dtype(np_dtype).name == "bfloat16" and np.dtype(np_dtype).type.__module__ == "ml_dtypes":
        _load_bfloat16()  # an array made by the caller with ml_dtypes
        return bfloat16
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, "
            "and bool."
        )
    return d


def to_dtype(d) -> dtype:
    """Accept an ember dtype, a NumPy dtype, a Python type or a torch dtype name."""
    if type(d) is dtype:
        if d is complex32:
            raise _no_complex32()
        return d
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        return to_dtype(_BY_NAME[d.replace("torch.", "")])
    name = getattr(d, "__module__", "") == "torch" and str(d).replace("torch.", "")
    if name and name in _BY_NAME:  # a real torch.dtype (interop helpers)
        return to_dtype(_BY_NAME[name])
    return from_numpy_dtype(np.dtype(d))


class _Defaults:
    float_dtype = float32


_defaults = _Defaults()


def get_default_dtype() -> dtype:
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return _defaults.float_dtype


def set_default_dtype(d) -> None:
    """Set the default floating point dtype (float16, float32 or float64)."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _defaults.float_dtype = d


def _check_dtype_arg(fn: str, name: str, pos: int, value) -> None:
    if type(value) is not dtype:
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be torch.dtype, not {type(value).__name__}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both can be cast to."""
    if a is b:
        return a
    if type(a) is not dtype or type(b) is not dtype:
        i, x = (1, a) if type(a) is not dtype else (2, b)
        raise TypeError(f"promote_types(): argument 'type{i}' (position {i}) must be torch.dtype, "
                        f"not {type(x).__name__}")
    ka, kb = a._kind, b._kind
    if ka == 3 or kb == 3:
        return _promote_complex(a, b)
    if ka != kb:
        return a if ka > kb else b
    if ka == 0:
        return a
    if a is bfloat16 or b is bfloat16:  # torch's lattice: bfloat16 and float16 meet at float32
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return _BY_NP[np.promote_types(a.np, b.np)]


def _promote_complex(a: dtype, b: dtype) -> dtype:
    """A complex dtype and any other: complex with the floating parts promoted (integers and bools add nothing)."""
    ra = a.to_real() if a._kind >= 2 else float16
    rb = b.to_real() if b._kind >= 2 else float16
    return promote_types(ra, rb).to_complex()


class NotAScalar(TypeError):
    """An operand that is neither a tensor nor a number; Python operators answer NotImplemented to it."""


def _scalar_dtype(x) -> dtype:
    t = type(x)
    if t is builtins.float:
        return _defaults.float_dtype
    if t is builtins.int:
        if not -0x8000_0000_0000_0000 <= x <= 0xFFFF_FFFF_FFFF_FFFF:
            raise OverflowError("int too big to convert")
        return int64
    if t is builtins.bool:
        return bool
    if t is builtins.complex:
        return default_complex_dtype()
    if isinstance(x, np.generic):
        # torch reads NumPy scalars as Python numbers: integers as int, floats (and np.bool_) as float
        if x.dtype.kind == "c":
            return default_complex_dtype()
        return int64 if x.dtype.kind in "iu" else _defaults.float_dtype
    raise NotAScalar(f"unsupported operand type {t.__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # torch's combine_categories: a lower-priority operand only matters when it is of a
    # higher category (bool < integer < floating).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind == 3:
        return higher
    if lower._kind == 3:  # a complex operand of lower priority keeps a floating operand's precision
        return higher.to_complex() if higher._kind == 2 else lower
    if higher._kind == 2:
        return higher
    if higher._kind == 0 or lower._kind == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python scalars (dimensioned > 0-d > scalars)."""
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, np.ndarray):
            d, nd = from_numpy_dtype(x.dtype), x.ndim
        else:
            d = getattr(x, "_dtype", None)
            nd = x._data.ndim if d is not None else None
        if d is None:
            s = _scalar_dtype(x)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif nd == 0:
            zero = d if zero is None else promote_types(zero, d)
        else:
            dim = d if dim is None else promote_types(dim, d)
    return _combine(dim, _combine(zero, wrapped))


class finfo:
    """Machine limits of a floating point dtype (the default dtype when none is given)."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - torch's argument name
        d = get_default_dtype() if type is None else to_dtype(type).to_real()  # complex: its parts' limits
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        self.bits = d.itemsize * 8
        if d is bfloat16:  # 8 exponent bits as float32, 7 stored mantissa bits (no ml_dtypes needed)
            self.eps, self.max, self.tiny, self.resolution = 2.0 ** -7, (2.0 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 0.01
            self.min, self.smallest_normal = -self.max, self.tiny
        else:
            info = np.finfo(d.np)
            self.eps = float(info.eps)
            self.max = float(info.max)
            self.min = float(info.min)
            self.tiny = self.smallest_normal = float(info.smallest_normal)
            self.resolution = 10.0 ** -info.precision
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, type: dtype) -> None:  # noqa: A002 - torch's argument name
        d = to_dtype(type)
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d._kind != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits = d.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# C++ element type names in torch's "value cannot be converted to type ... without overflow"
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def scalar_into(value, dtype: "dtype"):
    """A number as torch converts a Scalar into ``dtype``: a complex number into a real dtype only when its imaginary
    part is 0 (bool: its truth), torch's overflow error otherwise."""
    if isinstance(value, (complex, np.complexfloating)) and not dtype.is_complex:
        if dtype._kind == 0:  # bool
            return value != 0
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} without overflow")
        return value.real
    return value
