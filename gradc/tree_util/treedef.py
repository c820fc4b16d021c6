"""``PyTreeDef``, the structure of a pytree, and flattening a pytree into its leaves and structure.

>>> leaves = []
>>> treedef = flatten({"a": [1, 2]}, None, leaves)
>>> leaves, treedef, treedef.unflatten([3, 4])
([1, 2], PyTreeDef({'a': [*, *]}), {'a': [3, 4]})
"""
from __future__ import annotations

import collections
from typing import Any, Iterable

from gradc.tree_util.paths import distinct, keystr, path_name
from gradc.tree_util.registry import PyTreeError, is_namedtuple, node_of


class PyTreeDef:
    """The structure of a pytree: its nodes and static data, with ``*`` for each leaf.

    Equal structures compare equal and hash alike; ``num_leaves`` counts the leaves.

    >>> from gradc.tree_util import tree_structure
    >>> tree_structure({"w": 1.0, "b": [2.0, None]})
    PyTreeDef({'b': [*, None], 'w': *})
    >>> tree_structure((1, 2)) == tree_structure((3, 4)), tree_structure((1, 2)).num_leaves
    (True, 2)
    """

    __slots__ = ("node_type", "data", "children_defs", "num_leaves", "num_nodes", "_hash", "_keys")
    # node_type: the node's class (None for a leaf); data: its static data (dict keys, a registered class's aux)

    def __init__(self, node_type: type | None, data: Any, children_defs: tuple, keys: tuple | None = None):
        self.node_type = node_type  # None for a leaf
        self.data = data
        self.children_defs = children_defs
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children_defs)
        self.num_nodes = 1 + sum(c.num_nodes for c in children_defs)
        self._hash: int | None = None
        self._keys = keys

    def children(self) -> list:
        """The structures of this node's children."""
        return list(self.children_defs)

    def node_data(self):
        """``(node type, static data)`` of the root, None for a leaf (JAX's ``PyTreeDef.node_data``)."""
        return None if self.node_type is None else (self.node_type, self.data)

    def unflatten(self, leaves: Iterable) -> Any:
        """The pytree of this structure with these leaves (in order)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise PyTreeError(f"{self!r} has {self.num_leaves} leaves, got {len(leaves)}")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.node_type is None:
            return next(leaves)
        children = [c._build(leaves) for c in self.children_defs]
        return node_of(self.node_type).unflatten(self.data, children)

    def key_paths(self) -> list:
        """The key path of each leaf, in leaf order."""
        out: list = []
        self._paths((), out)
        return out

    def _paths(self, prefix, out):
        if self.node_type is None:
            out.append(prefix)
            return
        keys = self._keys
        if keys is None:
            keys = node_of(self.node_type).keys(self.data, len(self.children_defs))
        for key, child in zip(keys, self.children_defs):
            child._paths(prefix + (key,), out)

    def leaf_names(self, prefix: str = "") -> list:
        """A distinct identifier per leaf (:func:`path_name` of its key path under ``prefix``)."""
        return distinct([path_name(p, prefix) for p in self.key_paths()])

    def flatten_up_to(self, tree: Any, what: str = "the tree") -> list:
        """The subtrees of ``tree`` at this structure's leaves; ``tree`` must have this structure down to them."""
        out: list = []
        self._up_to(tree, (), out, what)
        return out

    def _up_to(self, tree, path, out, what):
        if self.node_type is None:
            out.append(tree)
            return
        node = node_of(type(tree))
        expected = self.node_type
        if type(tree) is not expected:
            raise PyTreeError(f"{what} does not have the expected structure at {keystr(path) or 'its root'}: "
                              f"expected {_describe(self)}, got {type(tree).__name__} {tree!r:.60}")
        children, aux = node.flatten(tree)
        children = list(children)
        if aux != self.data or len(children) != len(self.children_defs):
            raise PyTreeError(f"{what} does not have the expected structure at {keystr(path) or 'its root'}: "
                              f"expected {_describe(self)}, got {_describe(_one_level(tree))}")
        keys = node.keys(aux, len(children), tree)
        for key, child, child_def in zip(keys, children, self.children_defs):
            child_def._up_to(child, path + (key,), out, what)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return (self is other or self.node_type is other.node_type and self.num_leaves == other.num_leaves
                and self.data == other.data and self.children_defs == other.children_defs)

    def __hash__(self) -> int:
        found: int | None = self._hash
        if found is None:
            try:
                data = hash(self.data)
            except TypeError:  # an unhashable aux_data: equal structures still hash alike
                data = 0
            found = self._hash = hash((self.node_type, data, self.children_defs))
        return found

    def __repr__(self) -> str:
        return f"PyTreeDef({_text(self)})"


def _one_level(tree):
    node = node_of(type(tree))
    children, aux = node.flatten(tree)
    return PyTreeDef(type(tree), aux, tuple(_LEAF for _ in children))


def _describe(treedef: PyTreeDef) -> str:
    t = treedef.node_type
    if t is dict or t is collections.OrderedDict:
        return f"{t.__name__} with keys {list(treedef.data)}"
    if t is None:
        return "a leaf"
    return f"{t.__name__} of {len(treedef.children_defs)}"


def _text(treedef: PyTreeDef) -> str:
    t = treedef.node_type
    children = [_text(c) for c in treedef.children_defs]
    if t is None:
        return "*"
    if t is type(None):
        return "None"
    if t is tuple:
        return "(" + ", ".join(children) + ("," if len(children) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(children) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(treedef.data, children)) + "}"
    if t is collections.OrderedDict:
        return "OrderedDict({" + ", ".join(f"{k!r}: {c}" for k, c in zip(treedef.data, children)) + "})"
    name = f"namedtuple[{t.__name__}]" if is_namedtuple(t) else f"{t.__name__}[{treedef.data!r}]"
    return f"CustomNode({name}, [{', '.join(children)}])"


_LEAF = PyTreeDef(None, None, ())


def flatten(tree, is_leaf, leaves) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    t = type(tree)
    node = node_of(t)
    if node is None:
        leaves.append(tree)
        return _LEAF
    if node.flatten_with_keys is not None:
        pairs, aux = node.flatten_with_keys(tree)
        keys = tuple(k for k, _ in pairs)
        children = [c for _, c in pairs]
    else:
        children, aux = node.flatten(tree)
        keys = None
    return PyTreeDef(t, aux, tuple(flatten(c, is_leaf, leaves) for c in children), keys)

