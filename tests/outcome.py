"""Outcome oracle for API surface: run one call on ember and on torch; both return the same plain value (or
both raise the same exception type with the same message), with the same warnings."""
from __future__ import annotations

import warnings

import torch

import ember

__all__ = ["outcome", "same_outcome"]

_PLAIN = (type(None), bool, int, float, str, bytes, tuple, list, dict)


def outcome(fn, lib) -> tuple:
    """("ok", value, warnings) or ("raise", exception type name, message, warnings) of ``fn(lib)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(lib)
        except Exception as e:  # noqa: BLE001 - the outcome under comparison
            result = ("raise", type(e).__name__, str(e).replace("ember", "torch"))
        else:
            result = ("ok", value if isinstance(value, _PLAIN) else type(value).__name__)
    # torch's C++ warnings end with where they were raised; the text before is the message
    return (*result, [(w.category.__name__, str(w.message).split(" (Triggered internally at")[0]) for w in caught])


def same_outcome(fn, message: bool = True) -> tuple:
    """Assert ember and torch agree on ``fn(lib)``: plain values equal (others: same type name), or the same
    exception type and (with ``message``) message; the same warnings either way."""
    e, t = outcome(fn, ember), outcome(fn, torch)
    if not message and e[0] == t[0] == "raise":
        e, t = e[:2] + e[3:], t[:2] + t[3:]
    assert e == t, f"ember {e!r}\ntorch {t!r}"
    return e
