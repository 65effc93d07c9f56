"""The oracle: run the same expression in ember and in real torch and compare.

Every test imports it as ``from oracle import ...`` (tests/conftest.py puts tests/ on sys.path).

- ``check(fn, *arrays)`` calls ``fn(lib, *tensors)`` once with ``lib=ember`` and once with ``lib=torch`` on tensors
  made from the same NumPy arrays (float and complex arrays require grad), then compares outputs (values, dtype,
  shape), first gradients for a random upstream gradient, and, with ``gradgrad=True``, second gradients (the
  gradient of <grads, v> w.r.t. the inputs; its real part for complex gradients, since only a real scalar can seed
  a backward).
- ``compare(fn, *args)``: ``fn(lib, *args)`` in both libraries gives the same results (nested tuples, lists, dicts,
  tensors, numbers); ``run_both`` runs it without comparing, ``assert_same`` compares two results.
- ``same(fn)``: the same results, or the same error with torch's whole message.
- ``same_error(fn)``: both raise the same exception type, ember's message sharing torch's gist.
- ``same_outcome(fn)``: API surface: plain values equal, or the same exception and message; the same warnings.
- ``assert_close(e, t)``: one ember tensor against one torch tensor.
"""
from __future__ import annotations

import warnings
from collections import Counter

import ml_dtypes
import numpy as np
import torch

import ember

__all__ = ["check", "compare", "run_both", "assert_same", "same", "same_error", "same_outcome", "plain_outcome",
           "to_np", "assert_close", "torch", "ember", "BF16", "lib_tensor", "torch_graph_ops"]

BF16 = np.dtype(ml_dtypes.bfloat16)  # NumPy's bfloat16 (ember.bfloat16's storage)


def to_np(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        if t.dtype == torch.bfloat16:  # torch has no NumPy bfloat16: its bits, viewed as ml_dtypes'
            return t.detach().cpu().view(torch.int16).numpy(force=True).view(BF16)
        return t.detach().cpu().numpy(force=True)  # force: torch's lazy ZeroTensor grads
    if isinstance(t, ember.Tensor):
        return t.detach().resolve_conj().numpy()
    return np.asarray(t)


def lib_tensor(lib, arr: np.ndarray):
    """``lib.tensor(arr)`` for either library, bfloat16 arrays included (torch takes them as their bits)."""
    arr = np.asarray(arr)
    if lib is torch and arr.dtype == BF16:
        return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
    return lib.tensor(arr.copy())


def _tol(dtype) -> tuple[float, float]:
    name = str(dtype).replace("torch.", "")
    return {"float16": (1e-2, 1e-2), "bfloat16": (1.6e-2, 1e-5), "float32": (1e-4, 1e-5),
            "float64": (1e-7, 1e-9), "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}.get(name, (0, 0))


def _wide(a: np.ndarray) -> np.ndarray:
    """An array in the widest dtype of its kind (bool stays bool), for comparisons."""
    if a.dtype == bool:
        return a
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def assert_close(e, t, rtol=None, atol=None, check_dtype=True, what="value") -> None:
    """An ember tensor equals a torch tensor: shape, dtype name and values."""
    if t is None or e is None:
        assert e is None and t is None, f"{what}: ember {e!r} vs torch {t!r}"
        return
    if isinstance(e, ember.Tensor):  # NOTE [0-d results are arrays]: never a NumPy scalar
        assert isinstance(e._data, np.ndarray), f"{what}: ember holds a {type(e._data).__name__}, not an ndarray"
    if check_dtype:
        assert str(e.dtype) == str(t.dtype), f"{what}: dtype {e.dtype} vs torch {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} vs torch {tuple(t.shape)}"
    r, a = _tol(t.dtype)
    if t.dtype == torch.bfloat16:
        # bfloat16 (8 significant bits): ember's single ops round as torch's kernels do, but gradients are
        # compositions of ops rounded one by one, which differ from torch's fused backward kernels by a few units
        # in the last place: at least these tolerances, whatever an op asks for its float32 samples
        r, a = (1.6e-2, 4e-3) if what.startswith("output") else (4e-2, 1e-2)
        rtol, atol = max(rtol or 0, r), max(atol or 0, a)
    np.testing.assert_allclose(_wide(to_np(e)), _wide(to_np(t)),
                               rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
                               err_msg=what, equal_nan=True)


def _make(lib, arr, requires_grad):
    t = lib_tensor(lib, arr)
    if requires_grad and (arr.dtype.kind in "fc" or arr.dtype == BF16):
        t.requires_grad_(True)
    return t


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def check(fn, *arrays, grad=True, gradgrad=False, rtol=None, atol=None, seed=0, requires_grad=None, grad_tol=None):
    """Compare ``fn(lib, *tensors)`` between ember and torch (values, grads, second grads); ``grad_tol``:
    (rtol, atol) for the gradients when they need other tolerances than the values."""
    rg = requires_grad if requires_grad is not None else [True] * len(arrays)
    arrays = [np.asarray(a) for a in arrays]
    et = [_make(ember, a, g and grad) for a, g in zip(arrays, rg)]
    tt = [_make(torch, a, g and grad) for a, g in zip(arrays, rg)]
    eo, to = _outputs(fn(ember, *et)), _outputs(fn(torch, *tt))
    assert len(eo) == len(to)
    for i, (e, t) in enumerate(zip(eo, to)):
        assert_close(e, t, rtol, atol, what=f"output {i}")
    if not grad:
        return eo, to
    diff_e = [x for x in et if x.requires_grad]
    diff_t = [x for x in tt if x.requires_grad]
    outs = [(e, t) for e, t in zip(eo, to) if t.requires_grad]
    if not diff_t or not outs:
        return eo, to
    rng = np.random.default_rng(seed)
    ups = [_random_like(rng, to_np(t)) for _, t in outs]
    ge = ember.autograd.grad([e for e, _ in outs], diff_e, [lib_tensor(ember, u) for u in ups],
                             create_graph=gradgrad, allow_unused=True)
    gt = torch.autograd.grad([t for _, t in outs], diff_t, [lib_tensor(torch, u) for u in ups],
                             create_graph=gradgrad, allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or not np.any(to_np(a)), f"grad {i}: torch has none, ember {a}"
            continue
        assert a is not None, f"grad {i}: ember has none"
        assert_close(a, b, *(grad_tol or (rtol, atol)), what=f"grad {i}")
    if gradgrad:
        pairs = [(a, b) for a, b in zip(ge, gt) if b is not None and b.requires_grad]
        if not pairs:
            return eo, to
        vs = [_random_like(rng, to_np(b)) for _, b in pairs]
        se = sum((_real((a * lib_tensor(ember, v)).sum()) for (a, _), v in zip(pairs, vs)), ember.tensor(0.0))
        st = sum((_real((b * lib_tensor(torch, v)).sum()) for (_, b), v in zip(pairs, vs)), torch.tensor(0.0))
        gge = ember.autograd.grad(se, diff_e, allow_unused=True)
        ggt = torch.autograd.grad(st, diff_t, allow_unused=True)
        for i, (a, b) in enumerate(zip(gge, ggt)):
            if b is None:
                assert a is None or not np.any(to_np(a)), f"gradgrad {i}: torch none, ember {a}"
                continue
            assert a is not None, f"gradgrad {i}: ember has none"
            assert_close(a, b, *(grad_tol or (rtol, atol)), what=f"gradgrad {i}")
    return eo, to


def _random_like(rng, a: np.ndarray) -> np.ndarray:
    """Standard normal values of ``a``'s shape and dtype (complex: both parts)."""
    r = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        r = r + 1j * rng.standard_normal(a.shape)
    return r.astype(a.dtype)


def _real(t):
    return t.real if t.is_complex() else t


def same_error(fn, match_words=None):
    """Run ``fn(lib)`` for both libraries; both raise the same exception type and ember's message
    shares torch's gist (its first sentence, or ``match_words`` when given)."""
    errs = []
    for lib in (ember, torch):
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - comparing what is raised
            errs.append(e)
        else:
            errs.append(None)
    e, t = errs
    assert t is not None, "torch did not raise"
    assert e is not None, f"ember did not raise; torch raised {type(t).__name__}: {t}"
    assert isinstance(e, type(t)) or type(e).__name__ == type(t).__name__ or isinstance(t, type(e)), \
        f"ember raised {type(e).__name__}: {e}; torch {type(t).__name__}: {t}"
    if match_words is None:
        gist = str(t).split("\n")[0].split(". ")[0][:60]
        assert gist in str(e), f"message gist {gist!r} not in ember's {str(e)!r}"
    else:
        for w in match_words:
            assert w in str(e), f"{w!r} not in ember's message {str(e)!r}"
    return e, t


def torch_graph_ops(fn) -> Counter:
    """Names of the distinct nodes of torch's graph below node ``fn`` (leaves left out), with multiplicity."""
    seen, stack = set(), [fn]
    while stack:
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            stack.extend(n for n, _ in f.next_functions)
    return Counter(type(f).__name__ for f in seen if type(f).__name__ != "AccumulateGrad")


# ----------------------------------------------------------------------------- one call in both libraries
def run_both(fn, *args, catch: bool = False) -> tuple:
    """``(fn(ember, *args), fn(torch, *args))``, each NumPy array in ``args`` made a tensor of that library (no
    grad); nothing is compared. ``catch``: an exception raised by ``fn`` becomes that library's result."""
    out = []
    for lib in (ember, torch):
        largs = [lib_tensor(lib, a) if isinstance(a, np.ndarray) else a for a in args]
        try:
            out.append(fn(lib, *largs))
        except Exception as e:  # noqa: BLE001 - with catch, the exception is the result under comparison
            if not catch:
                raise
            out.append(e)
    return tuple(out)


def assert_same(e, t, rtol=None, atol=None, what: str = "result", requires_grad: bool = True) -> None:
    """ember's result ``e`` matches torch's ``t``, recursively: tensors by ``assert_close`` and ``requires_grad``
    (unless ``requires_grad=False``),
    tuples and lists item by item, dicts key by key, dtypes by name, floats within ``rtol``/``atol`` (default 1e-6
    and 1e-7), anything else by ``==``. An exception matches one of the same type whose message starts with
    torch's (ember may append a hint of its own)."""
    if isinstance(t, BaseException):
        assert isinstance(e, BaseException), f"{what}: torch raised {type(t).__name__}: {t}; ember returned {e!r}"
        assert type(e).__name__ == type(t).__name__, f"{what}: {type(e).__name__}: {e} vs torch {type(t).__name__}"
        assert str(e).startswith(str(t)), f"{what}: message\n  ember: {e}\n  torch: {t}"
        return
    assert not isinstance(e, BaseException), f"{what}: ember raised {type(e).__name__}: {e}; torch gave {t!r}"
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{what}: ember gave {type(e).__name__}"
        if requires_grad:
            assert e.requires_grad == t.requires_grad, f"{what}: requires_grad {e.requires_grad} vs {t.requires_grad}"
        assert_close(e, t, rtol, atol, what=what)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), f"{what}: {e!r} vs torch {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            assert_same(a, b, rtol, atol, f"{what}[{i}]", requires_grad)
    elif isinstance(t, dict):
        assert e.keys() == t.keys(), f"{what}: keys {e.keys()} vs {t.keys()}"
        for k in t:
            assert_same(e[k], t[k], rtol, atol, f"{what}[{k!r}]", requires_grad)
    elif isinstance(t, torch.dtype):
        assert str(e) == str(t), f"{what}: {e} vs torch {t}"
    elif isinstance(t, float):
        np.testing.assert_allclose(e, t, rtol=1e-6 if rtol is None else rtol, atol=1e-7 if atol is None else atol,
                                   err_msg=what)
    else:
        assert e == t, f"{what}: ember {e!r} vs torch {t!r}"


def compare(fn, *args, rtol=None, atol=None, requires_grad: bool = True) -> tuple:
    """``fn(lib, *args)`` (arrays made tensors) gives the same results in ember and torch (``assert_same``);
    returns the pair."""
    e, t = run_both(fn, *args)
    assert_same(e, t, rtol, atol, requires_grad=requires_grad)
    return e, t


def same(fn, rtol=None, atol=None, requires_grad: bool = True) -> tuple:
    """``fn(lib)`` gives the same results with ember and torch, or raises the same error (type, and torch's whole
    message as the start of ember's); returns the pair of results or exceptions."""
    e, t = run_both(fn, catch=True)
    assert_same(e, t, rtol, atol, requires_grad=requires_grad)
    return e, t


_PLAIN = (type(None), bool, int, float, str, bytes, tuple, list, dict)


def plain_outcome(fn, lib) -> tuple:
    """("ok", value, warnings) or ("raise", exception type name, message, warnings) of ``fn(lib)``; a value that is
    not a plain Python value is its type's name."""
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
    """API surface: ember and torch agree on ``fn(lib)``: plain values equal (others: the same type name), or the
    same exception type and (with ``message``) message; the same warnings either way."""
    e, t = plain_outcome(fn, ember), plain_outcome(fn, torch)
    if not message and e[0] == t[0] == "raise":
        e, t = e[:2] + e[3:], t[:2] + t[3:]
    assert e == t, f"ember {e!r}\ntorch {t!r}"
    return e
