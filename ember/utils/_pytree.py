"""ember.utils._pytree: torch.utils._pytree, nested containers flattened to leaves and rebuilt.

Containers are node types in a registry (tuple, list, dict, named tuples, OrderedDict, defaultdict, deque, and
whatever ``register_pytree_node`` adds); everything else, None included, is a leaf. ember.func's transforms use
the same functions (ember/func/_pytree.py), so a registered type is traversed by vmap/grad too, as in torch.
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from collections import OrderedDict, defaultdict, deque
from typing import Any, Callable, NamedTuple

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_iter", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "key_get", "SequenceKey", "MappingKey",
           "GetAttrKey", "treespec_dumps", "treespec_loads", "treespec_leaf", "treespec_tuple", "treespec_dict",
           "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance"]


# ---------------------------------------------------------------- keys (paths into a tree)
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as source text: ``[1]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp: tuple):
    for k in kp:
        obj = k.get(obj)
    return obj


# ---------------------------------------------------------------- the node registry
class _Node(NamedTuple):
    flatten: Callable  # node -> (children, context)
    unflatten: Callable  # (children, context) -> node
    keys: Callable  # (node, context) -> key per child
    serialized_name: str


SUPPORTED_NODES: dict = {}


def _seq_keys(node, context) -> list:
    return [SequenceKey(i) for i in range(len(node))]


def _map_keys(node, context) -> list:
    return [MappingKey(k) for k in (context[1] if isinstance(node, defaultdict) else context)]


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable, *,
                         serialized_type_name: str | None = None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    """Make ``cls`` a container: ``flatten_fn(obj) -> (children, context)``, ``unflatten_fn(children, context)``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    if flatten_with_keys_fn is not None:
        def keys(node, context, _f=flatten_with_keys_fn):
            return [k for k, _ in _f(node)[0]]
    else:
        keys = _seq_keys
    SUPPORTED_NODES[cls] = _Node(flatten_fn, unflatten_fn, keys,
                                 serialized_type_name or f"{cls.__module__}.{cls.__qualname__}")


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None) -> None:
    """Deprecated spelling of register_pytree_node."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                         flatten_with_keys_fn=flatten_with_keys_fn)


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


class namedtuple:  # noqa: N801 - the spec type torch prints for named tuples ("TreeSpec(namedtuple, <class>, ...)")
    """Stands for every named tuple class in tree specs (the context holds the class itself)."""


register_pytree_node(tuple, lambda t: (list(t), None), lambda v, c: tuple(v), serialized_type_name="builtins.tuple")
register_pytree_node(list, lambda t: (list(t), None), lambda v, c: list(v), serialized_type_name="builtins.list")
register_pytree_node(dict, lambda d: (list(d.values()), list(d)), lambda v, c: dict(zip(c, v)),
                     serialized_type_name="builtins.dict")
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda v, c: c(*v),
                     serialized_type_name="collections.namedtuple")
register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d)), lambda v, c: OrderedDict(zip(c, v)),
                     serialized_type_name="collections.OrderedDict")
register_pytree_node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
                     lambda v, c: defaultdict(c[0], zip(c[1], v)), serialized_type_name="collections.defaultdict")
register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda v, c: deque(v, maxlen=c),
                     serialized_type_name="collections.deque")
for _cls in (dict, OrderedDict, defaultdict):
    SUPPORTED_NODES[_cls] = SUPPORTED_NODES[_cls]._replace(keys=_map_keys)
del _cls


def _node_type(tree) -> type | None:
    """The registered node type of ``tree`` (named tuples share one), or None for a leaf."""
    cls = type(tree)
    if cls in SUPPORTED_NODES and cls is not namedtuple:
        return cls
    if is_namedtuple_class(cls):
        return namedtuple
    return None


def tree_is_leaf(tree, is_leaf: Callable | None = None) -> bool:
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) is None


# ---------------------------------------------------------------- specs
class TreeSpec:
    """The shape of a tree: node type, its context (dict keys, named tuple class ...) and one spec per child."""

    __slots__ = ("type", "context", "children_specs", "num_leaves", "num_nodes")

    def __init__(self, type, context, children_specs: list) -> None:  # noqa: A002 - torch's name
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    @property
    def num_children(self) -> int:
        return len(self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def children(self) -> list:
        return list(self.children_specs)

    def child(self, index: int) -> "TreeSpec":
        return self.children_specs[index]

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have at least this structure)."""
        out: list = []
        _flatten_up_to(self, tree, out)
        return out

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self) -> int:
        return hash((self.type, repr(self.context), len(self.children_specs)))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        parts = ""
        if self.children_specs:
            indent += 2
            first, *rest = self.children_specs
            parts = first.__repr__(indent) + ("," if rest else "")
            parts += ",".join("\n" + " " * indent + c.__repr__(indent) for c in rest)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{parts}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def treespec_leaf() -> LeafSpec:
    return _LEAF


def treespec_tuple(iterable=(), /) -> TreeSpec:
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs) -> TreeSpec:
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d), list(d.values()))


# ---------------------------------------------------------------- flatten / unflatten
def _flatten(tree, leaves: list, is_leaf) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    kind = _node_type(tree)
    if kind is None:
        leaves.append(tree)
        return _LEAF
    children, context = SUPPORTED_NODES[kind].flatten(tree)
    return TreeSpec(kind, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its spec."""
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _build(it, spec: TreeSpec):
    if spec.type is None:
        return next(it)
    children = [_build(it, c) for c in spec.children_specs]
    return SUPPORTED_NODES[spec.type].unflatten(children, spec.context)


def tree_unflatten(leaves, treespec: TreeSpec):
    """The tree of shape ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                        f"{type(treespec)}.")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                         f"pytree that holds {treespec.num_leaves} items ({treespec}).")
    return _build(iter(leaves), treespec)


def _flatten_up_to(spec: TreeSpec, tree, out: list) -> None:
    if spec.type is None:
        out.append(tree)
        return
    kind = _node_type(tree)
    if kind is not spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {type(tree)}.")
    children, context = SUPPORTED_NODES[kind].flatten(tree)
    if kind in (dict, OrderedDict, defaultdict):  # keys compared as sets; children taken in the spec's order
        keys, want = (context[1], spec.context[1]) if kind is defaultdict else (context, spec.context)
        if set(keys) != set(want):
            raise ValueError(f"Node keys mismatch; missing key(s): {set(want) - set(keys)}; extra key(s): "
                             f"{set(keys) - set(want)}.")
        by_key = dict(zip(keys, children))
        children, context = [by_key[k] for k in want], spec.context
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    if context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {spec.type}.")
    for c, s in zip(children, spec.children_specs):
        _flatten_up_to(s, c, out)


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_iter(tree, is_leaf: Callable | None = None):
    yield from tree_leaves(tree, is_leaf)


def tree_map(func: Callable, tree, *rests, is_leaf: Callable | None = None):
    """``tree`` with ``func`` applied to each leaf (and the matching leaves of ``rests``)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable, tree, *rests, is_leaf: Callable | None = None):
    """Call ``func`` on each leaf for its side effect; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for xs in zip(leaves, *[spec.flatten_up_to(r) for r in rests]):
        func(*xs)
    return tree


def _only(type_or_types, func: Callable) -> Callable:
    if isinstance(type_or_types, type):
        type_or_types = (type_or_types,)
    return lambda x: func(x) if isinstance(x, tuple(type_or_types)) else x


def tree_map_only(type_or_types, func: Callable, tree, is_leaf: Callable | None = None):
    """``tree`` with ``func`` applied to the leaves that are instances of ``type_or_types``."""
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func: Callable, tree, is_leaf: Callable | None = None):
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    types_ = (type_or_types,) if isinstance(type_or_types, type) else tuple(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, types_))


def tree_any_only(type_or_types, pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    types_ = (type_or_types,) if isinstance(type_or_types, type) else tuple(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, types_))


# ---------------------------------------------------------------- paths
def _with_path(tree, path: tuple, out: list, is_leaf) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        out.append((path, tree))
        return _LEAF
    kind = _node_type(tree)
    if kind is None:
        out.append((path, tree))
        return _LEAF
    node = SUPPORTED_NODES[kind]
    children, context = node.flatten(tree)
    keys = node.keys(tree, context)
    if kind is namedtuple:
        keys = [GetAttrKey(f) for f in type(tree)._fields]
    return TreeSpec(kind, context, [_with_path(c, path + (k,), out, is_leaf) for k, c in zip(keys, children)])


def tree_flatten_with_path(tree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """((key path, leaf) pairs, spec)."""
    out: list = []
    return out, _with_path(tree, (), out, is_leaf)


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func: Callable, tree, *rests, is_leaf: Callable | None = None):
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(p, x, *xs) for (p, x), *xs in zip(pairs, *others)], spec)


# ---------------------------------------------------------------- serialisation (torch's JSON, protocol 1)
_PROTOCOL = 1


def _spec_to_json(spec: TreeSpec) -> dict:
    if spec.type is None:
        return {"type": None, "context": None, "children_spec": []}
    node = SUPPORTED_NODES[spec.type]
    context = spec.context
    if spec.type is namedtuple:
        context = context.__qualname__
    elif spec.type is defaultdict:
        context = {"default_factory_module": context[0].__module__,
                   "default_factory_name": context[0].__qualname__, "dict_keys": context[1]}
    return {"type": node.serialized_name, "context": json.dumps(context),
            "children_spec": [_spec_to_json(c) for c in spec.children_specs]}


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """The spec as torch's JSON text."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"treespec_dumps(treespec, protocol): Expected `treespec` to be instance of PyTreeSpec but "
                        f"got item of type {type(treespec)}.")
    return json.dumps([protocol or _PROTOCOL, _spec_to_json(treespec)])


def _spec_from_json(data: dict) -> TreeSpec:
    if data["type"] is None:
        return _LEAF
    by_name = {n.serialized_name: cls for cls, n in SUPPORTED_NODES.items()}
    if data["type"] not in by_name:
        raise NotImplementedError(f"Deserializing {data['type']} in pytree is not registered.")
    kind = by_name[data["type"]]
    context = json.loads(data["context"])
    if kind is namedtuple:
        raise NotImplementedError("Deserializing a named tuple needs its class, which the JSON does not carry")
    if kind is defaultdict:
        import importlib

        factory = getattr(importlib.import_module(context["default_factory_module"]), context["default_factory_name"])
        context = [factory, context["dict_keys"]]
    return TreeSpec(kind, context, [_spec_from_json(c) for c in data["children_spec"]])


def treespec_loads(serialized: str) -> TreeSpec:
    protocol, data = json.loads(serialized)
    if protocol != _PROTOCOL:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [{_PROTOCOL}]")
    return _spec_from_json(data)
