"""torch.utils._pytree against torch's: flatten/unflatten, specs and their printed form, maps, paths,
registration and serialisation."""
from __future__ import annotations

import collections

import pytest

from oracle import ember, torch, same_outcome

NT = collections.namedtuple("NT", "a b")


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


ember.utils._pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], None), lambda v, c: Point(*v),
                                         serialized_type_name="tests.Point")
torch.utils._pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], None), lambda v, c: Point(*v),
                                         serialized_type_name="tests.Point")

TREES = [
    "1", "None", "(1, [2, {'b': 3, 'a': None}], collections.OrderedDict(x=4))", "NT(1, [2, 3])",
    "collections.deque([1, 2], maxlen=3)", "collections.defaultdict(list, {'a': 1, 'b': (2,)})",
    "Point(1, [2, (3,)])", "{'k': [], 'j': ()}", "'text'", "[[], [[]], ({},)]",
]


def _p(lib):
    return lib.utils._pytree


@pytest.mark.parametrize("tree", TREES)
def test_flatten_spec_and_round_trip(tree: str) -> None:
    def run(lib):
        t = eval(tree)
        leaves, spec = _p(lib).tree_flatten(t)
        back = _p(lib).tree_unflatten([x if x is None else x for x in leaves], spec)
        return leaves, repr(spec), str(spec), back == t or repr(back) == repr(t), spec.num_leaves, spec.num_nodes, \
            spec.num_children, spec.is_leaf()
    same_outcome(run)


CALLS = """
p.tree_map(lambda x: x * 2, (1, [2, {'b': 3}]))
p.tree_map(lambda x, y: x + y, (1, [2]), (10, [20]))
p.tree_map(lambda x, y: x + y, (1, [2]), (10, 20))
p.tree_map(lambda x, y: x + y, {'a': 1}, {'b': 2})
p.tree_map_only(int, lambda x: x * 2, (1, 'a', 2.0))
p.tree_map_only((int, float), lambda x: x * 2, (1, 'a', 2.0))
p.tree_leaves((1, [2, 3]), is_leaf=lambda x: isinstance(x, list))
p.tree_all(lambda x: x > 0, (1, [2])), p.tree_any(lambda x: x > 1, (1, [2]))
p.tree_all_only(int, lambda x: x > 0, (1, 'a')), p.tree_any_only(str, lambda x: x == 'a', (1, 'a'))
list(p.tree_iter((1, [2])))
p.tree_unflatten([5, 6], p.tree_structure((1, [2, {'b': 3}])))
p.tree_unflatten([5, 6], 3)
p.tree_structure((1, [2])) == p.tree_structure((3, [4])), p.tree_structure((1, [2])) == p.tree_structure([1, [2]])
p.tree_structure((1, [2])).unflatten([5, 6])
p.tree_structure((1, [2])).flatten_up_to(((1, 2), [3]))
repr(p.tree_flatten_with_path((1, {'a': [2]}, NT(3, 4)))[0])
p.keystr(p.tree_flatten_with_path((1, {'a': [2]}))[0][1][0])
p.tree_map_with_path(lambda kp, x: p.keystr(kp), {'a': [1, 2]})
repr(p.tree_leaves_with_path([NT(1, 2)]))
p.register_pytree_node(Point, lambda q: ([q.x], None), lambda v, c: Point(*v))
p.treespec_dumps(p.tree_structure((1, [2], {'a': 3})))
repr(p.treespec_loads(p.treespec_dumps(p.tree_structure((1, [2], {'a': 3})))))
repr(p.treespec_loads(p.treespec_dumps(p.tree_structure(Point(1, 2)))))
p.tree_map_(lambda x: None, [1])
p.tree_is_leaf([1]), p.tree_is_leaf(1), p.tree_is_leaf([1], is_leaf=lambda x: True)
repr(p.treespec_tuple([p.treespec_leaf(), p.treespec_leaf()])), repr(p.treespec_dict(a=p.treespec_leaf()))
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_pytree_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"p": _p(lib), "NT": NT, "Point": Point}))


def test_tensor_leaves_and_func_transforms_use_the_registry() -> None:
    """A registered container is traversed by ember.func, as torch.func traverses torch's registry."""
    def f(pt):
        return (pt.x * pt.y).sum()
    for lib in (ember, torch):
        g = lib.func.grad(f)(Point(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])))
        assert isinstance(g, Point) and g.x.tolist() == [3.0, 4.0] and g.y.tolist() == [1.0, 2.0]


def test_constants_and_top_level_vmap() -> None:
    same_outcome(lambda lib: (lib.pi, lib.e, lib.inf, str(lib.nan), type(lib.pi).__name__))
    assert ember.vmap is ember.func.vmap
    same_outcome(lambda lib: lib.vmap(lambda r: r.sum())(lib.arange(6.0).reshape(2, 3)).tolist())
