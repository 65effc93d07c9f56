"""glibc malloc tuning, applied once when ember is imported.

Training steps allocate and free the same large NumPy buffers (activations, im2col columns, gradients)
every iteration. With glibc's defaults each buffer above the mmap threshold is mmap'd, page-faulted in
and munmap'd again, and the heap top is trimmed back to the kernel: most of a small CNN step goes to page
faults. Raising the mmap and trim thresholds keeps those buffers in the heap, so the next step reuses them.

Opt out with ``EMBER_MALLOC_TUNING=0`` in the environment before ``import ember``. Nothing happens where
the C library is not glibc (musl, macOS, Windows). ``applied`` says whether the tuning took effect.
"""
from __future__ import annotations

import opcode
import os
import sys

__all__ = ["OutOfMemoryError", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "applied", "AllocationError", "allocation_error",
           "translating_allocation_errors", "translating_foreign_errors", "foreign_error", "translate_errors_of"]

_M_TRIM_THRESHOLD = -1   # mallopt parameter numbers (<malloc.h>)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20   # blocks below this come from the heap: glibc's ceiling on 64-bit (32 MiB)
TRIM_THRESHOLD = 128 << 20  # free memory kept at the heap top before it is given back to the kernel


def _tune() -> bool:
    """Set the thresholds through ``mallopt``; True when glibc accepted both."""
    if os.environ.get("EMBER_MALLOC_TUNING", "1").strip() == "0" or not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    # glibc only: musl's mallopt is a stub that ignores everything
    if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


applied: bool = _tune()


# NOTE [allocation failures]: NumPy raises MemoryError when an allocation fails; torch raises RuntimeError
# ("DefaultCPUAllocator: can't allocate memory ..."), and training code catches RuntimeError to skip a batch that
# does not fit. Ops (Op.apply), backward (autograd.backward/grad) and the factories turn NumPy's error into ``AllocationError``:
# a RuntimeError with torch's message that is still a MemoryError.
class AllocationError(RuntimeError, MemoryError):
    """An allocation that failed: torch's CPU allocator error (a RuntimeError), still a MemoryError."""


def allocation_error(e: MemoryError) -> AllocationError:
    """``e`` (NumPy's MemoryError) as torch reports a failed CPU allocation."""
    if isinstance(e, AllocationError):
        return e
    nbytes = getattr(e, "_total_size", None)
    size = f"you tried to allocate {nbytes} bytes" if nbytes is not None else "not enough memory"
    return AllocationError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           f"memory: {size}. Error code 12 (Cannot allocate memory)")


def translating_allocation_errors(fn):
    """``fn`` raising ``AllocationError`` where NumPy raised MemoryError."""
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as e:
            raise allocation_error(e) from None
    return run


def translating_foreign_errors(fn):
    """``fn`` raising torch's kind of error where NumPy raised one (NOTE [foreign errors]), ``AllocationError``
    for a failed allocation."""
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (MemoryError, TypeError, ValueError, IndexError) as e:
            err = foreign_error(fn.__name__, args + tuple(kwargs.values()), e)
            if err is e:
                raise
            raise err from None
    run._translating = True
    return run


# NOTE [foreign errors]: a NumPy (or Python builtin) error raised by a kernel that was handed arguments it cannot
# use must not reach the user as NumPy's: ops (Op.apply) and the factories turn an error that no ``raise``
# statement of ember's made into torch's kind, a TypeError naming the arguments for bad argument types, torch's
# broadcast RuntimeError for shapes that do not broadcast, a RuntimeError otherwise. ember's own errors (raised by
# a ``raise`` statement) pass unchanged. Which instruction raised is read from the frame's bytecode, not from the
# source file (a file edited while a program runs would shift its lines and turn ember's own errors into these).
def _from_numpy(e: BaseException) -> bool:
    """Whether ``e`` comes from NumPy: raised inside NumPy's Python code, or by a C kernel that ember called (the
    innermost frame is ember's, at an instruction that is not a ``raise``). Errors of user code (hooks, datasets,
    objects converted to tensors) and ember's own pass unchanged."""
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    if filename.startswith(_NUMPY_DIR):
        return True
    if not filename.startswith(_PACKAGE_DIR) or filename == __file__:  # (here: the call itself, a bad keyword)
        return False
    return tb.tb_frame.f_code.co_code[tb.tb_lasti] not in _RAISES


_RAISES = frozenset(opcode.opmap[n] for n in ("RAISE_VARARGS", "RERAISE") if n in opcode.opmap)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(__import__("numpy").__file__)) + os.sep


def _type_names(args) -> str:
    from ._tensor import Tensor

    return ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)


def foreign_error(name: str, args, e: Exception) -> Exception:
    """``e`` as torch's kind of error (NOTE [foreign errors]), or ``e`` itself when ember raised it on purpose."""
    if isinstance(e, MemoryError):
        return allocation_error(e)
    if not isinstance(e, (TypeError, ValueError, IndexError)) or not _from_numpy(e):
        return e
    if isinstance(e, ValueError) and "broadcast" in str(e):
        from ._tensor import Tensor
        import numpy as np

        shapes = [a._data.shape for a in args if isinstance(a, Tensor)]
        for i in range(len(shapes)):
            for j in range(i + 1, len(shapes)):
                try:
                    np.broadcast_shapes(shapes[i], shapes[j])
                except ValueError:
                    from .ops.arithmetic import _broadcast_error

                    return _broadcast_error(np.empty(shapes[i]), np.empty(shapes[j]))
    if isinstance(e, TypeError):
        return TypeError(f"{name}() received an invalid combination of arguments - got ({_type_names(args)}) "
                         f"(ember: {e})")
    return RuntimeError(f"{name}(): {e}")


def translate_errors_of(namespace: dict, names) -> None:
    """Wrap the functions ``names`` of a module (its ``globals()``) with ``translating_foreign_errors``: for
    public functions that compute on arrays outside an op (NOTE [foreign errors]); ops are covered by Op.apply."""
    for name in names:
        fn = namespace.get(name)
        if callable(fn) and not isinstance(fn, type) and not getattr(fn, "_translating", False):
            namespace[name] = translating_foreign_errors(fn)


class OutOfMemoryError(RuntimeError):
    """An allocation failed (torch.OutOfMemoryError)."""
