"""Anomaly detection: remember where each node was created, and fail on NaN gradients."""
from __future__ import annotations

import traceback

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

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


def _record_traceback(node) -> None:
    node._ext().traceback = "".join(traceback.format_stack()[:-3])


class detect_anomaly:
    """Context manager/decorator: backward errors print the forward traceback of the failing op,
    and a backward that produces NaN raises naming the node."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        import warnings

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
