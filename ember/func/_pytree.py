"""Nested containers of values (tuples, lists, dicts, named tuples) flattened to leaves and rebuilt."""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "LEAF"]


class TreeSpec:
    """The shape of a container tree: node type, context (dict keys / named tuple type) and children."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context, children: list) -> None:
        self.kind, self.context, self.children = kind, context, children

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.kind is other.kind and self.context == other.context
                and self.children == other.children)

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        ctx = None if self.kind in (tuple, list) else (self.context if self.kind is dict else self.kind.__name__)
        return f"TreeSpec({self.kind.__name__}, {ctx}, [{inner}])"


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order and its spec."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    t = type(tree)
    if t is tuple or t is list:
        return TreeSpec(t, None, [_flatten(c, leaves) for c in tree])
    if t is dict:
        keys = list(tree)
        return TreeSpec(dict, keys, [_flatten(tree[k], leaves) for k in keys])
    if _is_namedtuple(tree):
        return TreeSpec(t, t, [_flatten(c, leaves) for c in tree])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    """The tree of shape ``spec`` holding ``leaves``."""
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec: TreeSpec):
    kind = spec.kind
    if kind is None:
        return next(it)
    children = [_build(it, c) for c in spec.children]
    if kind is dict:
        return dict(zip(spec.context, children))
    if kind is tuple or kind is list:
        return kind(children)
    return kind(*children)


def tree_map(fn: Callable[[Any], Any], tree):
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, spec: TreeSpec | None = None) -> list | None:
    """Leaves of ``prefix`` repeated over the leaves of ``tree`` below each prefix leaf (None: no match)."""
    if spec is None:
        spec = tree_flatten(tree)[1]
    out: list = []
    return out if _prefix(prefix, spec, out) else None


def _prefix(prefix, spec: TreeSpec, out: list) -> bool:
    t = type(prefix)
    if not (t is tuple or t is list or t is dict or _is_namedtuple(prefix)):
        out.extend([prefix] * spec.num_leaves)
        return True
    if spec.kind is None:
        return False
    if t is dict:
        if spec.kind is not dict or set(prefix) != set(spec.context):
            return False
        return all(_prefix(prefix[k], c, out) for k, c in zip(spec.context, spec.children))
    if t is not spec.kind or len(prefix) != len(spec.children):
        return False
    return all(_prefix(p, c, out) for p, c in zip(prefix, spec.children))
