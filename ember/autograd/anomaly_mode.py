"""Anomaly detection: remember where each node was created, and fail on NaN gradients."""
from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

# NOTE [anomaly mode]
# Process-wide, as in torch. While enabled, every recorded node keeps the user-side stack of the
# forward call that made it; a failing backward node (an exception, or NaN in its gradients when
# check_nan is on) warns with that stack before the error propagates.
# Beyond torch (first-NaN tracer): with check_nan, the first recorded op whose forward turns finite inputs
# into a non-finite value (nan or inf) is reported once per anomaly session, with its forward traceback;
# ``detect_anomaly(pdb=True)`` opens the debugger there (and at a failing backward node).

_enabled = False
_check_nan = True
_pdb = False
_reported = False  # the first non-finite forward value of this anomaly session has been reported


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def _set(mode: bool, check_nan: bool, pdb: bool = False) -> tuple:
    global _enabled, _check_nan, _pdb, _reported
    prev = (_enabled, _check_nan, _pdb)
    if mode and not _enabled:
        _reported = False
    _enabled, _check_nan, _pdb = bool(mode), bool(check_nan), bool(pdb)
    return prev


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _record_traceback(node) -> None:
    """Keep the user's part of the current stack (ember's own frames left out) on ``node``."""
    import traceback  # here: only anomaly mode needs it, and `import ember` stays smaller

    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PKG_DIR)]
    node._ext().traceback = "".join(traceback.format_list(frames))


def _warn_error_in(node) -> None:
    """torch's warning when a backward node fails under anomaly mode: where it was created."""
    h = node._hooks
    tb = h.traceback if h is not None else None
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}",
                      UserWarning, stacklevel=3)
    if _pdb:
        import pdb  # noqa: PLC0415 - debugging only

        pdb.post_mortem(sys.exc_info()[2])


def _finite(x) -> bool:
    """False for a floating array or Python float holding nan/inf (anything else counts as finite)."""
    arr = getattr(x, "_data", x)
    if isinstance(arr, np.ndarray):
        return arr.dtype.kind not in "fc" or bool(np.isfinite(arr).all())
    if isinstance(arr, float):
        return math.isfinite(arr)
    return True


def _on_record(node, args, result) -> None:
    """An op was recorded under anomaly mode: keep its traceback; report the first non-finite forward value."""
    _record_traceback(node)
    if not _check_nan or _reported:
        return
    outs = result if type(result) is tuple else (result,)
    if all(_finite(o) for o in outs) or not all(_finite(a) for a in args):
        return
    _report_first_nonfinite(node)


def _report_first_nonfinite(node) -> None:
    global _reported
    _reported = True
    tb = node._hooks.traceback
    msg = (f"ember anomaly: the first non-finite value came from the forward of {node.name()}, which turned finite "
           f"inputs into nan/inf. Traceback of the forward call:\n{tb}")
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:  # pragma: no cover - ember calling itself at top level
        warnings.warn(msg, UserWarning, stacklevel=4)
    else:
        warnings.warn_explicit(msg, UserWarning, f.f_code.co_filename, f.f_lineno, module=f.f_globals.get("__name__"),
                               registry=f.f_globals.setdefault("__warningregistry__", {}))
    if _pdb:
        import pdb  # noqa: PLC0415 - debugging only

        pdb.Pdb().set_trace(f)


class detect_anomaly:
    """Context manager/decorator: backward errors print the forward traceback of the failing op,
    and a backward that produces NaN raises naming the node."""

    def __init__(self, check_nan: bool = True, pdb: bool = False) -> None:
        self.check_nan = check_nan
        self.pdb = pdb

    def __enter__(self) -> None:
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = _set(True, self.check_nan, self.pdb)

    def __exit__(self, *exc) -> None:
        _set(*self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan, self.pdb):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off (at once; restores the old state as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _set(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        _set(*self.prev)
