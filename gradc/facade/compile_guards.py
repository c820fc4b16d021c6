"""Guards of ``torch.compile``: the Python state a compiled signature read, checked before each call.

A compiled signature bakes in what its trace read besides its tensor inputs: a module's
plain attributes (``m.scale = 5.0``), the globals and closure cells the function (and the
user functions and module ``forward`` methods it reaches) names, the lists, dicts and
objects they hold, the defaults of its parameters, tensors and arrays that are not
inputs (a tensor in a dict, a module's plain tensor attribute). ``Guards`` takes a
snapshot of all of it when the signature is compiled; ``changed()`` compares the state
now with it and names the first difference. ``CompiledFunction`` then re-traces, as
torch.compile's guards do, and after ``RECOMPILE_LIMIT`` re-traces runs the function
eagerly with a warning (torch's recompile limit).

What each kind is compared by:

* numbers, strings, ``None``, tuples of them: value (type and ``==``);
* lists, dicts, sets and plain objects' attributes: their items, recursively (to depth 4; a
  container of more than 256 items by identity and length only);
* tensors and arrays that are not inputs: identity, shape, dtype, ``requires_grad``, the version
  counter (every in-place facade op bumps it) and the bytes (all up to 16 KiB, 256 evenly
  spaced entries above);
* functions, callable objects, classes, Python modules, facade Modules reached as values: identity (a
  reachable Module's own parameters and buffers are inputs, read at each call; its
  plain attributes and submodules are guarded as listed here).

A function that changes the state it reads (``calls.append(1)``) runs eagerly from then on;
its first call has also made that change in each of the two runs that traced it (compiled
code does not replay Python side effects, and a trace cannot be undone).

What is not guarded, because it is part of the signature's key (a new signature compiles):
the shapes, dtypes and ``requires_grad`` of the tensor inputs, grad mode and each module's
``train()``/``eval()`` mode. A parameter replaced by another of the same shape
(``m.weight = nn.Parameter(...)``) needs nothing: parameters are inputs, read at each call.

>>> import gradc.torch as torch
>>> class Scale(torch.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = 2.0
...     def forward(self, x):
...         return x * self.scale
>>> m = Scale(); f = torch.compile(m)
>>> f(torch.ones(1)).item()
2.0
>>> m.scale = 5.0; f(torch.ones(1)).item()
5.0
"""
from __future__ import annotations

import types

import numpy as np

from gradc.facade.nn.module_base import Module
from gradc.facade.tensor import Tensor

RECOMPILE_LIMIT = 8  # torch.compile's default recompile limit
_WHOLE_BYTES = 1 << 14
_SAMPLES = 256
_DEPTH = 4
_ITEMS = 256  # a larger container is compared by identity and length only
_MODULE_KEYS = frozenset({"_parameters", "_buffers", "_modules", "training", "_non_persistent_buffers_set"})
_SCALARS = (int, float, complex, bool, str, bytes, type(None), np.generic)
_BY_IDENTITY = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type, Module)


def _array_state(a: np.ndarray):
    if a.nbytes <= _WHOLE_BYTES:
        data = a.tobytes()
    else:
        data = a.reshape(-1)[np.linspace(0, a.size - 1, _SAMPLES).astype(np.intp)].tobytes()
    return (a.shape, a.dtype.str, data)


def freeze(value, depth=0):
    """A comparable snapshot of ``value`` (see the module docstring)."""
    if isinstance(value, _SCALARS):
        return (type(value), value)
    if isinstance(value, Tensor):
        data = value._data
        return ("tensor", id(value), value._vc[0], value._requires_grad,
                _array_state(data) if isinstance(data, np.ndarray) else id(data))
    if isinstance(value, np.ndarray):
        return ("array", id(value), _array_state(value))
    if isinstance(value, _BY_IDENTITY) or depth >= _DEPTH:
        return ("id", id(value))
    if isinstance(value, (tuple, list, dict, set, frozenset)) and len(value) > _ITEMS:
        return ("big", type(value), id(value), len(value))
    if isinstance(value, (tuple, list)):
        return (type(value), id(value) if isinstance(value, list) else None,
                tuple(freeze(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return (type(value), id(value), tuple((repr(k), freeze(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value), id(value), tuple(sorted(repr(v) for v in value)))
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and type(value).__module__ != "builtins" and not callable(value):
        return ("object", id(value), tuple((k, freeze(v, depth + 1)) for k, v in attributes.items()))
    return ("id", id(value))


def _user_function(f) -> bool:
    module = getattr(f, "__module__", None) or ""
    return isinstance(f, types.FunctionType) and not module.startswith(("gradc.", "numpy"))


def watched(fn, modules):
    """``[(label, getter)]``: every piece of Python state the call may read besides its tensor inputs."""
    out, seen_code = [], set()
    functions = [(getattr(fn, "__name__", "fn"), fn)]
    for prefix, top in modules:
        for name, m in top.named_modules():
            label = (prefix + name).rstrip(".") or type(m).__name__
            for key in m.__dict__:
                if key not in _MODULE_KEYS:
                    out.append((f"{label}.{key}", _attribute(m, key)))
            out.append((f"{label}'s submodules", _module_children(m)))
            forward = getattr(type(m), "forward", None)
            if _user_function(forward):
                functions.append((f"{type(m).__name__}.forward", forward))
    self_object = getattr(fn, "__self__", None)
    if self_object is not None and not isinstance(self_object, Module):
        out.append(("self", lambda obj=self_object: obj))
    while functions:  # the user functions reached through globals and cells, each scanned once
        where, f = functions.pop(0)
        f = getattr(f, "__func__", f)
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen_code:
            continue
        seen_code.add(id(code))
        out.append((f"the defaults of {where}", lambda f=f: (f.__defaults__, f.__kwdefaults__)))
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            out.append((name, _direct(_cell(cell))))
            value = _cell(cell)()
            if _user_function(value):
                functions.append((name, value))
        g = f.__globals__
        for name in _names(code):
            if name in g:
                out.append((name, _direct(_global(g, name))))
                if _user_function(g[name]):
                    functions.append((name, g[name]))
    return out


def _names(code):
    """The global names ``code`` and the code nested in it (comprehensions, lambdas) read."""
    names, stack = [], [code]
    while stack:
        c = stack.pop()
        names.extend(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return list(dict.fromkeys(names))


_EMPTY = object()


def _attribute(m, key):
    return lambda: m.__dict__.get(key, _EMPTY)


def _module_children(m):
    return lambda: tuple((k, id(v)) for k, v in m._modules.items()) + tuple(
        (k, v is None) for k, v in m._parameters.items()) + tuple((k, v is None) for k, v in m._buffers.items())


def _direct(get):
    """A global's or a cell's value: a tensor held there is an input of the call (read at each call)."""
    def value():
        v = get()
        return _INPUT if isinstance(v, Tensor) else v
    return value


_INPUT = ("an input tensor",)


def _cell(cell):
    def get():
        try:
            return cell.cell_contents
        except ValueError:
            return _EMPTY
    return get


def _global(g, name):
    return lambda: g.get(name, _EMPTY)


class Guards:
    """The snapshot of ``watched(fn, modules)`` taken when a signature was compiled."""

    def __init__(self, fn, modules):
        self.checks = []
        for label, get in watched(fn, modules):
            value = get()
            # a number, string, function or module that is still the same object needs no snapshot
            fixed = isinstance(value, _SCALARS + _BY_IDENTITY) or value is _INPUT
            self.checks.append((label, get, value, fixed, freeze(value)))

    def changed(self):
        """The label of the first watched value that differs from its snapshot, or None."""
        for label, get, value, fixed, snapshot in self.checks:
            now = get()
            if fixed and now is value:
                continue
            if freeze(now) != snapshot:
                return label
        return None
