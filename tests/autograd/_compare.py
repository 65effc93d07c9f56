"""Run one scenario with ember and with torch and compare everything it returns or raises."""
from __future__ import annotations

import numpy as np

from oracle import assert_close, ember, torch

__all__ = ["same", "outcome"]


def outcome(fn):
    """``(ember result or exception, torch result or exception)`` of ``fn(lib)``."""
    res = []
    for lib in (ember, torch):
        try:
            res.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception is part of the outcome
            res.append(e)
    return tuple(res)


def _compare(e, t, where: str, rtol, atol) -> None:
    if isinstance(t, BaseException):
        assert isinstance(e, BaseException), f"{where}: torch raised {type(t).__name__}: {t}; ember returned {e!r}"
        assert type(e).__name__ == type(t).__name__, f"{where}: {type(e).__name__}: {e} vs torch {type(t).__name__}"
        # ember may append its own hint (the in-place site) after torch's message
        assert str(e).startswith(str(t)), f"{where}: message\n  ember: {e}\n  torch: {t}"
        return
    assert not isinstance(e, BaseException), f"{where}: ember raised {type(e).__name__}: {e}; torch gave {t!r}"
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{where}: ember gave {type(e).__name__}"
        assert_close(e, t, rtol, atol, what=where)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), f"{where}: {e!r} vs torch {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            _compare(a, b, f"{where}[{i}]", rtol, atol)
    elif isinstance(t, dict):
        assert e.keys() == t.keys(), f"{where}: keys {e.keys()} vs {t.keys()}"
        for k in t:
            _compare(e[k], t[k], f"{where}[{k!r}]", rtol, atol)
    elif isinstance(t, torch.dtype):
        assert str(e) == str(t), f"{where}: {e} vs torch {t}"
    elif isinstance(t, float):
        np.testing.assert_allclose(e, t, rtol=rtol or 1e-6, atol=atol or 1e-7, err_msg=where)
    else:
        assert e == t, f"{where}: ember {e!r} vs torch {t!r}"


def same(fn, rtol=None, atol=None):
    """``fn(lib)`` gives the same results (tensors compared by value and dtype) or raises the same
    error (type, and torch's whole message as the start of ember's) with ember and torch."""
    e, t = outcome(fn)
    _compare(e, t, "result", rtol, atol)
    return e, t
