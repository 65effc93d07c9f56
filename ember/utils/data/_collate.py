"""default_collate / default_convert: samples → batches of tensors."""
from __future__ import annotations

import collections.abc
import re

import numpy as np

from ... import _factories as _F
from ..._tensor import Tensor
from ...ops.shape import stack

__all__ = ["default_collate", "default_convert"]

_np_str_obj = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_convert(data):
    """Turn NumPy arrays (also inside containers) into tensors, leaving the rest as it is."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _np_str_obj.search(data.dtype.str) is not None:
            return data
        return _F.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return _F.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples into a batch, recursing into dicts, tuples and lists."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) and type(elem).__module__ == "numpy":
        if _np_str_obj.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        return stack([_F.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        if _np_str_obj.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        return _F.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return _F.tensor(batch, dtype=np.float64)
    if isinstance(elem, int):
        return _F.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
