"""No NumPy error reaches the user (NOTE [foreign errors] in ember/_malloc.py): every public function and Tensor
method is fed bad shapes, dtypes and argument types drawn from a pool, and any exception raised inside NumPy, or of
a NumPy exception type, fails the test with the call that caused it. Torch raises its own errors for these calls;
ember must raise its own too (or compute), never NumPy's. The issue's hand-picked cases are checked against torch's
exact errors in their packages' tests."""
import inspect
import os
import random
import re
import signal
import warnings

import numpy as np
import pytest

import ember

NP_DIR = os.path.dirname(np.__file__)
SKIP = {"load", "save", "set_default_dtype", "set_default_tensor_type", "manual_seed", "seed", "set_printoptions",
        "set_rng_state", "use_deterministic_algorithms", "set_num_threads", "set_num_interop_threads",
        "set_flush_denormal", "compile", "set_grad_enabled", "set_warn_always", "set_anomaly_enabled", "from_file",
        "set_float32_matmul_precision", "cond", "vmap", "autocast", "set_deterministic_debug_mode", "empty_cache"}
# process-wide switches (dtype, grad mode, autocast, seeds, threads ...): calling them would change later tests
_STATEFUL = re.compile(r"^(set_|use_|enable|disable|init|seed|manual_seed|autocast|clear_)|_nesting$")
NAMESPACES = {"torch": lambda: ember, "nn.functional": lambda: ember.nn.functional, "linalg": lambda: ember.linalg,
              "special": lambda: ember.special}


def _pool():
    E = ember
    return [E.randn(2, 3), E.randn(4), E.randn(()), E.zeros(0, 3), E.arange(6), E.tensor([True, False]),
            E.randn(2, 3, 4, 5), E.randn(3, 2), E.randn(1, 3, 5, 5), E.tensor([1, 2], dtype=E.int32), E.randn(2, 3, 5),
            1, -1, 2.5, 0, 3, None, (2, 3), [0, 1], "mean"]


def _functions(namespace: str):
    if namespace == "Tensor":
        for name in sorted(dir(ember.Tensor)):
            if not name.startswith("_") and not name.endswith("_") and callable(getattr(ember.Tensor, name, None)):
                yield name, (lambda n: lambda self, *a: getattr(self, n)(*a))(name), True
        return
    mod = NAMESPACES[namespace]()
    for name in sorted(dir(mod)):
        if name.startswith("_") or name in SKIP or _STATEFUL.search(name):
            continue
        f = getattr(mod, name, None)
        if callable(f) and not isinstance(f, type) and not inspect.ismodule(f):
            yield name, f, False


def _arity(f) -> tuple:
    try:
        ps = [p for p in inspect.signature(f).parameters.values() if p.kind in (p.POSITIONAL_ONLY,
                                                                                p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return 1, 3
    required = sum(p.default is inspect.Parameter.empty for p in ps)
    return max(required, 1), max(min(len(ps), 4), required, 1)


class _Hung(Exception):
    pass


def _alarm(*_):
    raise _Hung


def _foreign(fn, args) -> str | None:
    """A description of the NumPy error (or hang) ``fn(*args)`` surfaces, or None."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        fn(*args)
    except _Hung:
        return "hung for 5 s"
    except Exception as e:  # noqa: BLE001 - every error is inspected
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = tb.tb_frame.f_code.co_filename if tb is not None else ""
        if where.startswith(NP_DIR) or type(e).__module__.startswith("numpy"):
            return f"{type(e).__module__}.{type(e).__name__}: {e} (in {os.path.basename(where)})"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return None


def _describe(a) -> str:
    return f"tensor{tuple(a.shape)} {a.dtype}" if isinstance(a, ember.Tensor) else repr(a)


def _state() -> tuple:
    return (ember.get_default_dtype(), ember.is_grad_enabled(), ember.is_autocast_enabled("cpu"),
            ember.get_autocast_dtype("cpu"), ember.is_inference_mode_enabled(), ember.is_anomaly_enabled())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("namespace", [*NAMESPACES, "Tensor"])
def test_bad_arguments_raise_no_numpy_error(namespace):
    before = _state()
    ember.manual_seed(0)
    rng = random.Random(namespace)
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, f, method in _functions(namespace):
            lo, hi = _arity(f)
            pool = _pool()
            tensors = [a for a in pool if isinstance(a, ember.Tensor)]
            for _ in range(10):
                args = [rng.choice(pool) for _ in range(rng.randint(lo, hi))]
                if method:
                    args = [rng.choice(tensors)] + args[:-1]
                leak = _foreign(f, args)
                if leak:
                    found.append(f"{namespace}.{name}({', '.join(map(_describe, args))}): {leak}")
                    break
    assert _state() == before, "the sweep changed process-wide state"
    assert not found, "NumPy errors reached the caller:\n" + "\n".join(found)
