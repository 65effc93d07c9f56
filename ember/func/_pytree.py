"""The pytree functions ember.func's transforms use: torch.utils._pytree's (ember/utils/_pytree.py), plus
``broadcast_prefix`` for in_dims/out_dims given as a prefix of the arguments' structure."""
from __future__ import annotations

from ..utils._pytree import SUPPORTED_NODES, TreeSpec, _node_type, tree_flatten, tree_map, tree_unflatten
from ..utils._pytree import treespec_leaf

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "LEAF", "broadcast_prefix"]

LEAF = treespec_leaf()


def broadcast_prefix(prefix, tree, spec: TreeSpec | None = None) -> list | None:
    """Leaves of ``prefix`` repeated over the leaves of ``tree`` below each prefix leaf (None: no match)."""
    if spec is None:
        spec = tree_flatten(tree)[1]
    out: list = []
    return out if _prefix(prefix, spec, out) else None


def _prefix(prefix, spec: TreeSpec, out: list) -> bool:
    kind = _node_type(prefix)
    if kind is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    if kind is not spec.type:
        return False
    children, context = SUPPORTED_NODES[kind].flatten(prefix)
    if len(children) != spec.num_children:
        return False
    if kind is dict:
        if set(context) != set(spec.context):
            return False
        by_key = dict(zip(context, children))
        children = [by_key[k] for k in spec.context]
    elif context != spec.context:
        return False
    return all(_prefix(p, c, out) for p, c in zip(children, spec.children_specs))
