"""torch.nn.modules.utils: the argument-normalising helpers layers and third-party modules import from here."""
from __future__ import annotations

import collections.abc

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _expand(x, n: int) -> tuple:
    """``x`` as a tuple: an iterable's items, or ``x`` repeated ``n`` times (the layers' argument expansion)."""
    return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n


def _ntuple(n: int, name: str = "parse"):
    """A function that turns a scalar into an ``n``-tuple of it and any iterable into a tuple of its items."""
    def parse(x):
        return _expand(x, n)

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with every item repeated ``n`` times: a layer's per-dimension padding in F.pad's order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """``out_size`` with its ``None`` entries taken from the matching trailing ``defaults`` (an int passes through)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix: str) -> None:
    """Strips ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) that start with it, in place."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.replace(".", "")
    for key in [k for k in metadata if k and (k == bare or k.startswith(prefix))]:
        metadata[key[len(prefix):]] = metadata.pop(key)
