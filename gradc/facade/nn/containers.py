"""``torch.nn.ModuleList`` and ``torch.nn.ModuleDict``: submodules held by position or by key.

Their children are registered like attributes, so ``parameters()``, ``state_dict()``,
``train()``/``eval()`` and ``print(model)`` see them. ``ModuleList`` prints runs of equal
modules once, as torch does (``(0-2): 3 x Linear(...)``).

>>> from gradc.facade.nn.modules import ReLU
>>> print(ModuleList([ReLU(), ReLU()]))
ModuleList(
  (0-1): 2 x ReLU()
)
"""
from __future__ import annotations

from gradc.facade.nn.module_base import Module


def _index(idx, n):
    if not isinstance(idx, int):
        raise TypeError(f"ModuleList indices must be integers or slices, not {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _indent(text):
    first, *rest = text.split("\n")
    return "\n".join([first] + ["  " + line for line in rest])


class ModuleList(Module):
    """Submodules in a list: ``ml[i]``, ``ml[a:b]``, ``len``, iteration, ``append``, ``extend``, ``insert``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _items(self):
        return list(self._modules.values())

    def _reset(self, items):
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __getitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            return type(self)(items[idx])
        return items[_index(idx, len(items))]

    def __setitem__(self, idx, module):
        items = self._items()
        self.add_module(str(_index(idx, len(items))), module)

    def __delitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(idx, len(items))]
        self._reset(items)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._items())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return type(self)(self._items() + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if isinstance(modules, Module) and not isinstance(modules, ModuleList):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        for m in list(modules):
            self.append(m)
        return self

    def insert(self, index, module):
        items = self._items()
        items.insert(index, module)
        self._reset(items)

    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [ModuleList] is missing the required "forward" function')

    def __repr__(self):
        reprs = [repr(m) for m in self._items()]
        if not reprs:
            return "ModuleList()"
        lines, start = [], 0
        while start < len(reprs):
            end = start
            while end + 1 < len(reprs) and reprs[end + 1] == reprs[start]:
                end += 1
            if end == start:
                lines.append(f"({start}): {_indent(reprs[start])}")
            else:
                lines.append(f"({start}-{end}): {end - start + 1} x {_indent(reprs[start])}")
            start = end + 1
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Submodules by name, in insertion order: ``md[key]``, ``in``, ``keys``/``values``/``items``, ``update``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        return self._modules.pop(key)

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for pair in pairs:
            key, module = pair
            self[key] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [ModuleDict] is missing the required "forward" function')
