"""safetensors files through the optional ``safetensors`` package (its NumPy API).

Install with ``pip install 'ember[demo]'`` or ``pip install safetensors``.
"""
from __future__ import annotations

import os
import tempfile
from typing import Mapping

import numpy as np

from .._tensor import Tensor

__all__ = ["save_file", "load_file", "save", "load"]


def _numpy_api():
    try:
        from safetensors import numpy as st_numpy  # noqa: PLC0415 - optional dependency, imported lazily
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the 'safetensors' package: pip install safetensors "
                          "(or pip install 'ember[demo]')") from None
    return st_numpy


def _arrays(tensors: Mapping[str, Tensor]) -> dict[str, np.ndarray]:
    out = {}
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
        arr = v.detach()._data
        out[k] = arr if arr.flags.c_contiguous else arr.copy(order="C")  # (ascontiguousarray turns 0-d into 1-d)
    return out


def save(tensors: Mapping[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors."""
    return _numpy_api().save(_arrays(tensors), metadata=metadata)


def save_file(tensors: Mapping[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write a dict of tensors to ``filename`` atomically (temp file + rename)."""
    data = save(tensors, metadata)
    filename = os.fspath(filename)
    folder = os.path.dirname(os.path.abspath(filename))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".safetensors")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(data: bytes) -> dict[str, Tensor]:
    from .._factories import from_numpy

    return {k: from_numpy(np.array(v)) for k, v in _numpy_api().load(data).items()}


def load_file(filename: str | os.PathLike, device: str = "cpu") -> dict[str, Tensor]:
    """Read a safetensors file into a dict of tensors (no code is run)."""
    from .._factories import from_numpy

    return {k: from_numpy(np.array(v)) for k, v in _numpy_api().load_file(os.fspath(filename)).items()}
