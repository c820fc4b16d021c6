"""Key paths (how a leaf is reached from a pytree's root) and the identifiers gradc names leaves by.

>>> keystr((SequenceKey(0), GetAttrKey("b"))), path_name((SequenceKey(0), GetAttrKey("b")), "layers")
('[0].b', 'layers_0_b')
"""
from __future__ import annotations

import dataclasses
import keyword
import re
from typing import Hashable, Iterable


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The ``idx``-th child of a list or tuple: prints as ``[idx]``."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The child of a dict under ``key``: prints as ``['key']``."""
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute ``name`` (a named tuple's or dataclass's field): prints as ``.name``."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The ``key``-th child of a registered node that gives no keys of its own: prints as ``[key]``."""
    key: int

    def __str__(self) -> str:
        return f"[{self.key!r}]"


def keystr(path: Iterable) -> str:
    """A key path as text, JAX's ``keystr``.

    >>> keystr((SequenceKey(0), DictKey("w")))
    "[0]['w']"
    """
    return "".join(str(k) for k in path)


_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def _key_text(key) -> str:
    for field in ("key", "idx", "name"):
        if hasattr(key, field):
            return str(getattr(key, field))
    return str(key)


def path_name(path: Iterable, prefix: str = "") -> str:
    """A Python identifier naming the leaf at ``path`` below an argument named ``prefix``.

    >>> path_name((DictKey("w"),), "params"), path_name((SequenceKey(0), GetAttrKey("b")), "layers")
    ('params_w', 'layers_0_b')
    >>> path_name((DictKey("learning rate"),)), path_name((), "x"), path_name((DictKey("if"),))
    ('learning_rate', 'x', 'if_')
    """
    parts = ([prefix] if prefix else []) + [_key_text(k) for k in path]
    name = _NOT_IDENTIFIER.sub("_", "_".join(parts)) or "leaf"
    if name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name += "_"
    return name


def distinct(names: list) -> list:
    """``names`` with each repeat suffixed ``_2``, ``_3``, ... (never a name that is in ``names`` already)."""
    taken = set(names)
    seen: set = set()
    out = []
    for name in names:
        unique, k = name, 1
        while unique in seen:
            k += 1
            unique = f"{name}_{k}"
            if unique in taken:
                unique = name  # another leaf has this exact name: keep counting
        seen.add(unique)
        out.append(unique)
    return out

