"""The registry of pytree node types: the built-in containers and the classes users register.

>>> node_of(dict).flatten({"b": 2, "a": 1})
([1, 2], ('a', 'b'))
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Iterable, NamedTuple

from gradc.errors import ArgumentError
from gradc.tree_util.paths import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey


class PyTreeError(ArgumentError, ValueError):
    """Two pytrees that should have one structure do not, or a node cannot be flattened."""


class _Node(NamedTuple):
    flatten: Callable  # node -> (children, aux_data)
    unflatten: Callable  # (aux_data, children) -> node
    keys: Callable  # (aux_data, number of children, node or None) -> key per child
    flatten_with_keys: Callable | None = None  # node -> (((key, child), ...), aux_data)


def _index_keys(aux, n, node=None):
    return tuple(SequenceKey(i) for i in range(n))


def _dict_keys(aux, n, node=None):
    return tuple(DictKey(k) for k in aux)


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise PyTreeError(f"the keys of a dict in a pytree must be sortable (they are ordered as sorted); got "
                          f"{sorted(repr(k) for k in d)}", hint="use keys of one type, e.g. all strings") from None


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _unflatten_defaultdict(aux, children):
    return collections.defaultdict(aux[0], zip(aux[1], children))


_REGISTRY: dict = {
    tuple: _Node(lambda t: (t, None), lambda aux, c: tuple(c), _index_keys),
    list: _Node(lambda t: (t, None), lambda aux, c: list(c), _index_keys),
    dict: _Node(_flatten_dict, lambda aux, c: dict(zip(aux, c)), _dict_keys),
    type(None): _Node(lambda t: ((), None), lambda aux, c: None, _index_keys),
    collections.OrderedDict: _Node(lambda d: (list(d.values()), tuple(d)),
                                   lambda aux, c: collections.OrderedDict(zip(aux, c)), _dict_keys),
    collections.defaultdict: _Node(_flatten_defaultdict, _unflatten_defaultdict,
                                   lambda aux, n, node=None: tuple(DictKey(k) for k in aux[1])),
}


def _namedtuple_keys(aux, n, node=None):
    return tuple(GetAttrKey(f) for f in aux._fields)


_NAMEDTUPLE = _Node(lambda t: (tuple(t), type(t)), lambda aux, c: aux(*c), _namedtuple_keys)


def is_namedtuple(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def node_of(t: type):
    node = _REGISTRY.get(t)
    if node is None and is_namedtuple(t):
        return _NAMEDTUPLE
    return node


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Make instances of ``nodetype`` pytree nodes (exact type, not its subclasses).

    ``flatten_func(node)`` returns ``(children, aux_data)``: ``aux_data`` is static (hashable,
    compared for equality of structures); ``unflatten_func(aux_data, children)`` rebuilds the node.

    >>> from gradc.tree_util import tree_leaves
    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))
    >>> tree_leaves([Pair(1.0, 2.0), 3.0])
    [1.0, 2.0, 3.0]
    """
    if not isinstance(nodetype, type):
        raise PyTreeError(f"register_pytree_node takes a class, not {nodetype!r:.60}")
    if nodetype in _REGISTRY:
        raise PyTreeError(f"{nodetype.__qualname__} is already registered as a pytree node")
    if flatten_with_keys_func is None:
        def keys(aux, n, node=None):
            return tuple(FlattenedIndexKey(i) for i in range(n))
    else:
        def keys(aux, n, node=None):
            if node is None:  # the structure alone does not know the keys
                return tuple(FlattenedIndexKey(i) for i in range(n))
            return tuple(k for k, _ in flatten_with_keys_func(node)[0])
    _REGISTRY[nodetype] = _Node(flatten_func, unflatten_func, keys, flatten_with_keys_func)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable, unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Like :func:`register_pytree_node`, with ``flatten_with_keys(node) -> (((key, child), ...), aux_data)``."""
    if flatten_func is None:
        def flatten_func(node):
            pairs, aux = flatten_with_keys(node)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: ``cls.tree_flatten(self)`` and ``cls.tree_unflatten(aux, children)`` (a classmethod)."""
    register_pytree_node(cls, lambda node: node.tree_flatten(), cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


def register_dataclass(nodetype: type | None = None, data_fields: Iterable[str] | None = None,
                       meta_fields: Iterable[str] | None = None, drop_fields: Iterable[str] = ()):
    """Make a dataclass a pytree node: ``data_fields`` are children, ``meta_fields`` static (part of the structure).

    Usable as a decorator. On a dataclass the fields default to its own: a field with
    ``metadata={"static": True}`` is a meta field, every other ``init`` field a data field.

    >>> import dataclasses
    >>> from typing import Any
    >>> from gradc.tree_util import tree_flatten, tree_unflatten
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: Any
    ...     b: Any
    ...     act: str = dataclasses.field(default="tanh", metadata={"static": True})
    >>> leaves, treedef = tree_flatten(Layer(1.0, 2.0))
    >>> leaves, tree_unflatten(treedef, [3.0, 4.0])
    ([1.0, 2.0], Layer(w=3.0, b=4.0, act='tanh'))
    """
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields, drop_fields)
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise PyTreeError(f"register_dataclass({nodetype.__qualname__}): not a dataclass",
                              hint="decorate it with @dataclasses.dataclass first, or pass data_fields= and "
                                   "meta_fields=")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in set(drop_fields)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields or ()), tuple(meta_fields or ())
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = set(data_fields) | set(meta_fields)
        if given != init:
            raise PyTreeError(f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields must name "
                              f"every init field once; missing {sorted(init - given)}, unknown {sorted(given - init)}")

    def flatten(node):
        return [getattr(node, f) for f in data_fields], tuple(getattr(node, f) for f in meta_fields)

    def unflatten(meta, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, meta)))

    register_pytree_node(nodetype, flatten, unflatten)
    # the keys are the data fields' names, known from the structure alone
    _REGISTRY[nodetype] = _REGISTRY[nodetype]._replace(
        keys=lambda aux, n, node=None: tuple(GetAttrKey(f) for f in data_fields))
    return nodetype

