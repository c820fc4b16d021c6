"""Pytrees: nested containers of arrays, with JAX's names and semantics.

A pytree is a leaf or a node whose children are pytrees. Nodes are ``dict`` (children in
sorted key order, as JAX does), ``list``, ``tuple``, named tuples, ``None`` (a node with no
children), ``collections.OrderedDict`` (insertion order), ``collections.defaultdict`` and the
classes registered here; everything else (arrays, Python numbers, strings) is a leaf.

>>> leaves, treedef = tree_flatten({"b": [1.0, 2.0], "a": (3.0, None)})
>>> leaves
[3.0, 1.0, 2.0]
>>> treedef
PyTreeDef({'a': (*, None), 'b': [*, *]})
>>> tree_unflatten(treedef, [x * 10 for x in leaves])
{'a': (30.0, None), 'b': [10.0, 20.0]}
>>> tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
[11, (22, 33)]

**Leaf names.** Emitted code and messages name each leaf by its path, as an identifier:
:func:`path_name` joins the argument's name and the path's keys with ``_`` (``params["w"]``
is ``params_w``, ``layers[0].b`` is ``layers_0_b``), replaces every other character with ``_``,
and :func:`tree_leaf_names` makes the names of one tree distinct by appending ``_2``, ``_3``, ...
to a repeat (``{"a_b": x, "a": {"b": y}}`` gives ``a_b`` and ``a_b_2``).

>>> tree_leaf_names({"w": 1.0, "layers": [{"b": 2.0}]}, "params")
['params_layers_0_b', 'params_w']
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from gradc.tree_util.paths import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr, path_name
from gradc.tree_util.registry import (
    PyTreeError,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
)
from gradc.tree_util.treedef import PyTreeDef, flatten

__all__ = ["PyTreeDef", "PyTreeError", "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey",
           "register_pytree_node", "register_pytree_with_keys", "register_pytree_node_class", "register_dataclass",
           "tree_flatten", "tree_unflatten", "tree_structure", "tree_leaves", "tree_map", "tree_reduce", "tree_all",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr", "treedef_is_leaf",
           "path_name", "tree_leaf_names", "all_leaves", "tree_transpose", "treedef_children"]



def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple:
    """``(leaves, treedef)``: the leaves in order (dicts by sorted key) and the structure.

    >>> tree_flatten([1.0, {"a": 2.0}])
    ([1.0, 2.0], PyTreeDef([*, {'a': *}]))
    """
    leaves: list = []
    treedef = flatten(tree, is_leaf, leaves)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """The pytree with structure ``treedef`` and these leaves (the inverse of :func:`tree_flatten`)."""
    return treedef.unflatten(leaves)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, in order.

    >>> tree_leaves({"b": 2, "a": [1, None]})
    [1, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure is a single leaf."""
    return treedef.node_type is None


def all_leaves(iterable: Iterable, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element is a leaf."""
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) for x in iterable)


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied leaf by leaf; each of ``rest`` has ``tree``'s structure (or it as a prefix).

    >>> tree_map(lambda w, g: w - 0.1 * g, {"w": 1.0, "b": 2.0}, {"w": 10.0, "b": 0.0})
    {'b': 2.0, 'w': 0.0}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r, f"tree_map's argument {k + 2}") for k, r in enumerate(rest)]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple:
    """``([(key_path, leaf), ...], treedef)``; a key path is a tuple of keys (:func:`keystr` prints it).

    >>> pairs, _ = tree_flatten_with_path({"layers": [{"w": 1.0}]})
    >>> [(keystr(p), x) for p, x in pairs]
    [("['layers'][0]['w']", 1.0)]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    return list(zip(treedef.key_paths(), leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """``[(key_path, leaf), ...]``."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f(key_path, leaf, *others)`` leaf by leaf."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r, f"tree_map_with_path's argument {k + 2}") for k, r in enumerate(rest)]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def tree_reduce(f: Callable, tree: Any, *initializer: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(f, tree_leaves(tree), *initializer)``.

    >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)], 0)
    6
    """
    return functools.reduce(f, tree_leaves(tree, is_leaf), *initializer)


def tree_all(tree: Any) -> bool:
    """Whether every leaf is true."""
    return all(tree_leaves(tree))


def tree_leaf_names(tree: Any, prefix: str = "", is_leaf: Callable[[Any], bool] | None = None) -> list:
    """A distinct Python identifier per leaf of ``tree``, from its key path (see the module's docstring).

    >>> tree_leaf_names([{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0}], "params")
    ['params_0_b', 'params_0_w', 'params_1_b', 'params_1_w']
    """
    return tree_flatten(tree, is_leaf)[1].leaf_names(prefix)


def treedef_children(treedef: PyTreeDef) -> list:
    """The structures of the root's children."""
    return treedef.children()


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of ``outer_treedef`` whose leaves are trees of ``inner_treedef`` turned into the converse.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    outer = outer_treedef.flatten_up_to(pytree_to_transpose, "the tree to transpose")
    if inner_treedef is None:
        inner_treedef = tree_structure(outer[0])
    rows = [inner_treedef.flatten_up_to(x, "an inner tree") for x in outer]
    columns = [outer_treedef.unflatten([row[j] for row in rows]) for j in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(columns)
