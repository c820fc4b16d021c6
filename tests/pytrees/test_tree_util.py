"""gradc.tree_util against JAX's documented pytree semantics, and a round trip of random nested structures."""
from __future__ import annotations

import collections
import dataclasses
import pickle
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradc import tree_util as tu


class Point(NamedTuple):
    x: Any
    y: Any


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


class Box:
    """A class registered by hand: its ``scale`` is static."""

    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def __eq__(self, other):
        return type(other) is Box and self.scale == other.scale and self.value == other.value


tu.register_pytree_node(Box, lambda b: ((b.value,), b.scale), lambda scale, children: Box(children[0], scale))


def test_leaves_in_jax_order():
    tree = {"b": [1, (2, None)], "a": 3, "c": Point(4, 5)}
    assert tu.tree_leaves(tree) == [3, 1, 2, 4, 5]  # dict keys sorted; None has no leaves


def test_none_is_an_empty_node():
    assert tu.tree_leaves(None) == []
    assert tu.tree_structure(None).num_leaves == 0
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert tu.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]


def test_scalars_strings_and_arrays_are_leaves():
    for leaf in (1.0, 3, "s", np.ones(3), np.float32(2), b"x", {1, 2}):
        leaves, treedef = tu.tree_flatten(leaf)
        assert len(leaves) == 1 and leaves[0] is leaf
        assert tu.treedef_is_leaf(treedef) and repr(treedef) == "PyTreeDef(*)"


def test_structure_equality_and_hash():
    a = tu.tree_structure({"w": 1.0, "b": [2.0, 3.0]})
    b = tu.tree_structure({"b": [np.ones(2), 0], "w": "x"})
    assert a == b and hash(a) == hash(b)
    assert a != tu.tree_structure({"w": 1.0, "b": (2.0, 3.0)})
    assert a != tu.tree_structure({"w": 1.0, "c": [2.0, 3.0]})
    assert tu.tree_structure([1]) != tu.tree_structure([1, 2])
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    assert tu.tree_structure(Box(1, 2.0)) != tu.tree_structure(Box(1, 3.0))  # aux data is part of the structure
    assert {a: 1}[b] == 1
    assert a.num_leaves == 3


def test_repr():
    treedef = tu.tree_structure({"a": (1,), "b": [None, 2], "c": Point(1, 2)})
    assert repr(treedef) == "PyTreeDef({'a': (*,), 'b': [None, *], 'c': CustomNode(namedtuple[Point], [*, *])})"
    assert repr(tu.tree_structure(collections.OrderedDict(z=1, a=2))) == "PyTreeDef(OrderedDict({'z': *, 'a': *}))"
    assert repr(tu.tree_structure(Layer(1, 2))) == "PyTreeDef(CustomNode(Layer[('tanh',)], [*, *]))"


def test_ordered_dict_keeps_insertion_order_and_dict_sorts():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    assert tu.tree_leaves(od) == [1, 2]
    assert tu.tree_leaves({"z": 1, "a": 2}) == [2, 1]
    back = tu.tree_unflatten(tu.tree_structure(od), [10, 20])
    assert type(back) is collections.OrderedDict and list(back.items()) == [("z", 10), ("a", 20)]


def test_defaultdict_round_trip():
    d = collections.defaultdict(list, {"b": 1, "a": 2})
    back = tu.tree_map(lambda x: x * 2, d)
    assert type(back) is collections.defaultdict and back.default_factory is list and dict(back) == {"a": 4, "b": 2}


def test_registered_dataclass_and_node():
    tree = [Layer(np.ones(2), 3.0, "relu"), Box(4.0, 2)]
    leaves, treedef = tu.tree_flatten(tree)
    assert len(leaves) == 3
    back = tu.tree_unflatten(treedef, [1, 2, 3])
    assert back == [Layer(1, 2, "relu"), Box(3, 2)]


def test_register_dataclass_with_explicit_fields_and_errors():
    @dataclasses.dataclass
    class Params:
        a: Any
        n: int

    tu.register_dataclass(Params, data_fields=["a"], meta_fields=["n"])
    assert tu.tree_leaves(Params(1.0, 3)) == [1.0]
    assert tu.tree_map(lambda x: x + 1, Params(1.0, 3)) == Params(2.0, 3)

    @dataclasses.dataclass
    class Partial:
        a: Any
        b: Any

    with pytest.raises(tu.PyTreeError, match="missing \\['b'\\]"):
        tu.register_dataclass(Partial, data_fields=["a"], meta_fields=[])
    with pytest.raises(tu.PyTreeError, match="not a dataclass"):
        tu.register_dataclass(Box)
    with pytest.raises(tu.PyTreeError, match="already registered"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)


def test_register_pytree_node_class():
    @tu.register_pytree_node_class
    class Scaled:
        def __init__(self, x, k):
            self.x, self.k = x, k

        def tree_flatten(self):
            return (self.x,), self.k

        @classmethod
        def tree_unflatten(cls, k, children):
            return cls(children[0], k)

    out = tu.tree_map(lambda v: v * 3, Scaled(2.0, "k"))
    assert (out.x, out.k) == (6.0, "k")


def test_unregistered_subclass_of_dict_is_a_leaf():
    class MyDict(dict):
        pass

    tree = MyDict(a=1)
    assert tu.tree_leaves(tree) == [tree]


def test_is_leaf():
    tree = [(1, 2), (3, 4)]
    assert tu.tree_leaves(tree, is_leaf=lambda t: isinstance(t, tuple)) == [(1, 2), (3, 4)]
    assert tu.tree_map(sum, tree, is_leaf=lambda t: isinstance(t, tuple)) == [3, 7]
    assert tu.tree_leaves([None, 1], is_leaf=lambda t: t is None) == [None, 1]


def test_tree_map_several_trees_and_prefix():
    assert tu.tree_map(lambda a, b, c: a + b + c, {"x": 1, "y": [2]}, {"x": 10, "y": [20]}, {"y": [100], "x": 0}) \
        == {"x": 11, "y": [122]}
    # the first tree's structure is a prefix of the others': their subtrees are passed whole
    assert tu.tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), {"k": 5}]) == [(1, (3, 4)), (2, {"k": 5})]


@pytest.mark.parametrize("other, where", [
    ({"x": 1}, "its root"),
    ({"x": 1, "y": (2,)}, "\\['y'\\]"),
    ({"x": 1, "y": [2, 3]}, "\\['y'\\]"),
    ([1, 2], "its root"),
])
def test_tree_map_mismatch_is_a_clear_error(other, where):
    with pytest.raises(tu.PyTreeError, match=f"argument 2 does not have the expected structure at {where}"):
        tu.tree_map(lambda a, b: a, {"x": 1, "y": [2]}, other)
    with pytest.raises(ValueError):  # a ValueError too, as JAX raises
        tu.tree_map(lambda a, b: a, {"x": 1, "y": [2]}, other)


def test_unflatten_wrong_number_of_leaves():
    treedef = tu.tree_structure([1, 2])
    with pytest.raises(tu.PyTreeError, match="has 2 leaves, got 3"):
        tu.tree_unflatten(treedef, [1, 2, 3])


def test_unsortable_dict_keys():
    with pytest.raises(tu.PyTreeError, match="sortable"):
        tu.tree_leaves({1: 1, "a": 2})


def test_key_paths_and_keystr():
    tree = {"layers": [Layer(1.0, 2.0), Point(3.0, 4.0)], "scale": Box(5.0, 1)}
    pairs, _ = tu.tree_flatten_with_path(tree)
    assert [(tu.keystr(p), x) for p, x in pairs] == [
        ("['layers'][0].w", 1.0), ("['layers'][0].b", 2.0), ("['layers'][1].x", 3.0), ("['layers'][1].y", 4.0),
        ("['scale'][0]", 5.0)]
    assert pairs[0][0] == (tu.DictKey("layers"), tu.SequenceKey(0), tu.GetAttrKey("w"))
    assert tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": [1]}) == {"a": ["['a'][0]"]}


def test_register_with_keys():
    class Named:
        def __init__(self, **kw):
            self.kw = kw

    tu.register_pytree_with_keys(
        Named, lambda n: ([(tu.DictKey(k), v) for k, v in sorted(n.kw.items())], tuple(sorted(n.kw))),
        lambda keys, children: Named(**dict(zip(keys, children))))
    pairs = tu.tree_leaves_with_path(Named(b=2, a=1))
    assert [(tu.keystr(p), x) for p, x in pairs] == [("['a']", 1), ("['b']", 2)]
    assert tu.tree_leaf_names(Named(b=2, a=1), "n") == ["n_a", "n_b"]


def test_leaf_names():
    params = [{"w": 1, "b": 2}, {"w": 3, "b": 4}]
    assert tu.tree_leaf_names(params, "params") == ["params_0_b", "params_0_w", "params_1_b", "params_1_w"]
    assert tu.tree_leaf_names({"layers": [Layer(1, 2)]}, "") == ["layers_0_w", "layers_0_b"]
    assert tu.tree_leaf_names(np.ones(2), "x") == ["x"]
    assert tu.tree_leaf_names({"learning rate": 1, "1st": 2, "class": 3}) == ["_1st", "class_", "learning_rate"]
    # two paths spelling one name get distinct names, never one already taken
    assert tu.tree_leaf_names({"a_b": 1, "a": {"b": 2}, "a_b_2": 3}, "") == ["a_b", "a_b_3", "a_b_2"]


def test_reduce_and_all():
    assert tu.tree_reduce(lambda a, b: a * b, {"a": 2, "b": [3, 4]}) == 24
    assert tu.tree_all([True, (1, None)]) and not tu.tree_all([True, 0])


def test_node_data_children_and_transpose():
    treedef = tu.tree_structure({"a": 1, "b": [2, 3]})
    assert treedef.node_data() == (dict, ("a", "b"))
    assert tu.tree_structure(1.0).node_data() is None
    assert tu.treedef_children(treedef) == [tu.tree_structure(0), tu.tree_structure([0, 0])]
    swapped = tu.tree_transpose(tu.tree_structure({"x": 0, "y": 0}), tu.tree_structure([0, 0]),
                                {"x": [1, 2], "y": [3, 4]})
    assert swapped == [{"x": 1, "y": 3}, {"x": 2, "y": 4}]


def test_treedef_pickles():
    treedef = tu.tree_structure({"a": [1, (2, None)], "p": Point(1, 2)})
    assert pickle.loads(pickle.dumps(treedef)) == treedef


# ---------------------------------------------------------------- random nested structures
leaves = st.one_of(st.floats(allow_nan=False), st.integers(), st.text(max_size=3),
                   st.builds(lambda n: np.arange(float(n)), st.integers(0, 3)))
keys = st.text(alphabet="abcxyz_ 0", min_size=1, max_size=3)


def containers(children):
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(lambda d: collections.OrderedDict(sorted(d.items())[::-1])),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.tuples(children, children).map(lambda t: Layer(*t)),
        st.just(None),
    )


trees = st.recursive(leaves, containers, max_leaves=12)


def same(a, b) -> bool:
    """Equality that also compares types and arrays (Layer and Point compare their fields)."""
    la, ta = tu.tree_flatten(a)
    lb, tb = tu.tree_flatten(b)
    return ta == tb and all(type(x) is type(y) and np.array_equal(x, y) for x, y in zip(la, lb))


@settings(max_examples=150, deadline=None)
@given(trees)
def test_round_trip(tree):
    leaves_, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves_)
    back = tu.tree_unflatten(treedef, leaves_)
    assert same(back, tree)
    assert tu.tree_structure(back) == treedef and hash(tu.tree_structure(back)) == hash(treedef)
    # identity map rebuilds the same containers, and flattening with paths agrees with flattening
    assert same(tu.tree_map(lambda x: x, tree), tree)
    pairs, treedef2 = tu.tree_flatten_with_path(tree)
    assert treedef2 == treedef and all(x is y for (_, x), y in zip(pairs, leaves_))
    names = treedef.leaf_names("arg")
    assert len(set(names)) == len(names) and all(n.isidentifier() for n in names)
    # a structure's leaf positions can be refilled with anything, e.g. their own key strings
    assert tu.tree_leaves(tu.tree_unflatten(treedef, [tu.keystr(p) for p, _ in pairs])) == \
        [tu.keystr(p) for p, _ in pairs]
