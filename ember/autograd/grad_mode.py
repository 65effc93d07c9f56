"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (all thread-local)."""
from __future__ import annotations

import functools
import inspect
import threading
import warnings

from . import _provenance

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _Mode(threading.local):
    # Class attributes are the defaults every new thread starts from.
    grad_enabled = True
    inference = False
    # innermost forward-AD / vmap / profiler level (see ember/autograd/_interpose.py); None in ordinary code
    interpose = None
    # the active profilers, which record backward nodes (NOTE [profiler]); None in ordinary code
    profiler = None
    # the ember.compile tracer recording this thread's eager run (NOTE [compile]); None in ordinary code
    tracer = None
    # the engine is running backward formulas (NOTE [device check] in ember/ops/_op.py)
    in_backward = False


_mode = _Mode()


def is_grad_enabled() -> bool:
    """True when operations record a graph in this thread."""
    return _mode.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` in this thread."""
    return _mode.inference


def _construct(cls, *args, **kwargs):
    return cls(*args, **kwargs)


class _DecoratorContextManager:
    """A context manager that also works as a decorator (on functions and generators)."""

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            func = functools.partial(_construct, func)
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper


class no_grad(_DecoratorContextManager):
    """Disable graph recording in this thread (results have ``requires_grad=False``)."""

    def __new__(cls, orig_func=None):
        inst = super().__new__(cls)
        if orig_func is None:
            return inst
        return _DecoratorContextManager.__call__(inst, orig_func)  # bare @no_grad

    def __enter__(self) -> None:
        self.prev = _mode.grad_enabled
        _mode.grad_enabled = False
        self._record = _provenance.note_block("no_grad") if self.prev else None

    def __exit__(self, *exc) -> None:
        _mode.grad_enabled = self.prev
        if self._record is not None:
            _provenance.note_block_exit(self._record)


class enable_grad(_DecoratorContextManager):
    """Enable graph recording in this thread, e.g. inside a ``no_grad`` block."""

    def __new__(cls, orig_func=None):
        inst = super().__new__(cls)
        if orig_func is None:
            return inst
        return _DecoratorContextManager.__call__(inst, orig_func)

    def __enter__(self) -> None:
        self.prev = _mode.grad_enabled
        _mode.grad_enabled = True

    def __exit__(self, *exc) -> None:
        _mode.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to ``mode``; takes effect at once and as a context manager restores it."""

    def __init__(self, mode: bool) -> None:
        self.prev = _mode.grad_enabled
        self.mode = mode
        _mode.grad_enabled = mode
        if self.prev and not mode:
            _provenance.note_block("set_grad_enabled(False)")

    def __call__(self, func):
        _mode.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _mode.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        _mode.grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


# How many inference_mode blocks are open, over all threads. While none is, no thread's ``_mode.inference``
# can be True, so the tensor constructors (once per op) skip reading the thread-local state.
_inference_blocks = [0]
_blocks_lock = threading.Lock()


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors that can never join a graph."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            inst = super().__new__(cls)
            inst.__init__(True)
            return _DecoratorContextManager.__call__(inst, mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.prev = (_mode.grad_enabled, _mode.inference)
        self._record = None
        if self.mode:
            if _mode.grad_enabled:
                self._record = _provenance.note_block("inference_mode")
            _mode.grad_enabled = False
            _mode.inference = True
        else:
            _mode.inference = False
        with _blocks_lock:
            _inference_blocks[0] += 1

    def __exit__(self, *exc) -> None:
        _mode.grad_enabled, _mode.inference = self.prev
        with _blocks_lock:
            _inference_blocks[0] -= 1
        if self._record is not None:
            _provenance.note_block_exit(self._record)

    def clone(self):
        return self.__class__(self.mode)
