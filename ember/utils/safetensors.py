"""safetensors files through the optional ``safetensors`` package (its NumPy API).

Install with ``pip install 'ember[demo]'`` or ``pip install safetensors``.
"""
from __future__ import annotations

import json
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


def _bfloat16_entries(data: bytes) -> dict[str, Tensor] | None:
    """The tensors of a safetensors buffer holding bfloat16 ones (which the package's NumPy API cannot make),
    read from the format's JSON header; None when it holds none (the package reads it)."""
    from .. import _dtype as D
    from .._factories import from_numpy

    if len(data) < 8:
        return None
    n = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError:
        return None  # the package's own error
    if not isinstance(header, dict) or not any(isinstance(v, dict) and v.get("dtype") == "BF16"
                                               for v in header.values()):
        return None
    _numpy_api()  # the same requirement as every other file
    base = 8 + n
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        dt = D.bfloat16.np if v["dtype"] == "BF16" else _SAFETENSORS_NP[v["dtype"]]
        start, end = v["data_offsets"]
        arr = np.frombuffer(data, dt, count=(end - start) // dt.itemsize, offset=base + start)
        out[k] = from_numpy(arr.reshape(v["shape"]).copy())
    return out


_SAFETENSORS_NP = {"F64": np.dtype(np.float64), "F32": np.dtype(np.float32), "F16": np.dtype(np.float16),
                   "I64": np.dtype(np.int64), "I32": np.dtype(np.int32), "I16": np.dtype(np.int16),
                   "I8": np.dtype(np.int8), "U8": np.dtype(np.uint8), "BOOL": np.dtype(np.bool_)}


def load(data: bytes) -> dict[str, Tensor]:
    from .._factories import from_numpy

    bf16 = _bfloat16_entries(data)
    if bf16 is not None:
        return bf16
    return {k: from_numpy(np.array(v)) for k, v in _numpy_api().load(data).items()}


def load_file(filename: str | os.PathLike, device: str = "cpu") -> dict[str, Tensor]:
    """Read a safetensors file into a dict of tensors (no code is run); bfloat16 tensors stay bfloat16."""
    from .._device import _check_device
    from .._factories import from_numpy

    _check_device(device)
    with open(os.fspath(filename), "rb") as f:
        head = f.read(8)
        n = int.from_bytes(head, "little") if len(head) == 8 else 0
        if b'"BF16"' in f.read(min(n, 100_000_000)):
            f.seek(0)
            return load(f.read())
    return {k: from_numpy(np.array(v)) for k, v in _numpy_api().load_file(os.fspath(filename)).items()}
