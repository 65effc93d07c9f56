"""Printing tensors exactly as torch prints them (``tensor([[4.5000, 4.5000]])``)."""
from __future__ import annotations

import math

import numpy as np

from . import _backend as _B
from . import _dtype as D

__all__ = ["set_printoptions", "get_printoptions"]


class _Opts:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _Opts()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Set printing options (as torch.set_printoptions)."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return {k: getattr(PRINT_OPTS, k) for k in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


class _Formatter:
    """Chooses one layout for all elements: integer-valued floats ("2."), fixed or scientific notation,
    and the common width. The choice looks only at finite non-zero values; with none, floats print plainly
    (and a forced ``sci_mode`` is then ignored, as in torch)."""

    def __init__(self, arr: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not floating:
            self.max_width = max((len(str(v)) for v in flat.tolist()), default=1)
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if not vals.size:
            return
        a = np.abs(vals)
        mn, mx = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        forced = PRINT_OPTS.sci_mode
        self.sci_mode = (mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4) if forced is None else bool(forced)
        p = PRINT_OPTS.precision
        lst = vals.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in lst)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in lst)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in lst)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """torch's pair of formatters for complex elements: one for the real parts, one for the imaginary parts
    ("1.5000-0.2500j")."""

    def __init__(self, arr: np.ndarray) -> None:
        self.re = _Formatter(arr.real, True)
        self.im = _Formatter(arr.imag, True)

    def width(self) -> int:
        return self.re.width() + self.im.width() + 1  # + the "j"

    def format(self, value) -> str:
        real_str = self.re.format(value.real)
        imag_str = (self.im.format(value.imag) + "j").lstrip()
        return real_str + imag_str if imag_str[0] in "+-" else real_str + "+" + imag_str


def _vector_str(arr, indent, summarize, fmt) -> str:
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = [fmt.format(v) for v in arr[:e].tolist()] + [" ..."] + [fmt.format(v) for v in arr[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_fmt(arr, indent, summarize, fmt) -> str:
    dim = arr.ndim
    if dim == 0:
        return fmt.format(arr.item())
    if dim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * e:
        slices = ([_tensor_str_fmt(arr[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] +
                  [_tensor_str_fmt(arr[i], indent + 1, summarize, fmt) for i in range(len(arr) - e, len(arr))])
    else:
        slices = [_tensor_str_fmt(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(arr):
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate((arr[:e], arr[-e:])) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[(slice(0, 0),) * arr.ndim]
    rows = list(range(e)) + list(range(len(arr) - e, len(arr))) if arr.shape[0] > 2 * e else range(len(arr))
    return np.stack([_summarized(arr[i]) for i in rows])


def _tensor_str(arr: np.ndarray, floating: bool, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    if arr.dtype in D._REDUCED_NP:  # float16, bfloat16: formatted from their (exact) float32 values
        arr = arr.astype(np.float32)
    shown = _summarized(arr) if summarize else arr
    fmt = _ComplexFormatter(shown) if arr.dtype.kind == "c" else _Formatter(shown, floating)
    return _tensor_str_fmt(arr, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: list, indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _str(t, tensor_contents=None) -> str:
    prefix = "tensor("
    indent = len(prefix)
    arr = t._data
    dt = t._dtype
    suffixes = []
    if type(arr) is not np.ndarray and not _B.is_cpu_array(arr):  # values printed from a host copy, as torch's
        suffixes.append(f"device='{_B.device_of(arr)}'")
        arr = _B.to_host(arr)
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dt is not D.get_default_dtype():
            suffixes.append("dtype=" + repr(dt))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dt not in (D.get_default_dtype(), D.default_complex_dtype(), D.int64, D.bool):
            suffixes.append("dtype=" + repr(dt))
        body = _tensor_str(arr, dt.is_floating_point, indent)
    if tensor_contents is not None:
        body = tensor_contents
    fn = t._grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{_node_type_name(fn)}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    ext = t._ext
    if ext is not None and ext.get("fw"):  # a dual tensor of the current forward-AD level
        from .autograd.forward_ad import unpack_dual

        tangent = unpack_dual(t).tangent
        if tangent is not None:
            suffixes.append("tangent=" + _str(tangent))
    return _add_suffixes(prefix + body, suffixes, indent)


def _node_type_name(fn) -> str:
    return fn.name().rsplit("::", 1)[-1]
