"""Argument helpers of the layers, as torch.nn.modules.utils: ``_single``/``_pair``/``_triple``/``_quadruple``
(an iterable as a tuple, anything else repeated), and consume_prefix_in_state_dict_if_present."""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _expand(x, n: int) -> tuple:
    """``x`` as a tuple: an iterable's items, or ``x`` repeated ``n`` times."""
    return tuple(x) if isinstance(x, Iterable) else (x,) * n


def _ntuple(n: int, name: str = "parse"):
    """The parser behind ``_pair`` and friends: ``_ntuple(2)(3) == (3, 3)``."""

    def parse(x):
        return _expand(x, n)

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """Each item of ``t``, last first, ``n`` times: a layer's padding in F.pad's order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """Adaptive pooling's output size with ``None`` entries taken from the input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place: a DataParallel /
    DDP model's state dict (``"module."`` keys) made loadable into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # '' is the wrapper's own entry (kept); 'module' the wrapped model's; 'module.x' the rest
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)
