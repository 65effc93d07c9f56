"""Anomaly detection: remember where each node was created, and fail on NaN gradients."""
from __future__ import annotations

import os
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

# NOTE [anomaly mode]
# Process-wide, as in torch. While enabled, every recorded node keeps the user-side stack of the
# forward call that made it; a failing backward node (an exception, or NaN in its gradients when
# check_nan is on) warns with that stack before the error propagates.

_enabled = False
_check_nan = True


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def _set(mode: bool, check_nan: bool) -> tuple:
    global _enabled, _check_nan
    prev = (_enabled, _check_nan)
    _enabled, _check_nan = bool(mode), bool(check_nan)
    return prev


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _record_traceback(node) -> None:
    """Keep the user's part of the current stack (ember's own frames left out) on ``node``."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PKG_DIR)]
    node._ext().traceback = "".join(traceback.format_list(frames))


def _warn_error_in(node) -> None:
    """torch's warning when a backward node fails under anomaly mode: where it was created."""
    h = node._hooks
    tb = h.traceback if h is not None else None
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}",
                      UserWarning, stacklevel=3)


class detect_anomaly:
    """Context manager/decorator: backward errors print the forward traceback of the failing op,
    and a backward that produces NaN raises naming the node."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = _set(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set(*self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan):
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
