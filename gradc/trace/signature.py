"""How the user's function is called: its parameters bound to arguments, and each argument's kind.

>>> bind_arguments(lambda x, n=2: x, (1.0,))
{'x': 1.0, 'n': 2}
"""
from __future__ import annotations

import functools
import inspect
import keyword
import os
import types

import numpy as np

from gradc.errors import ArgumentError, _display_path
from gradc.ir.builder import Traced
from gradc.ir.types import DTYPE_NAMES, TensorType, dtype_name


def classify_argument(name: str, value):
    """How an argument enters a trace: ``("tensor", TensorType)`` or ``("static", value)``.

    >>> classify_argument("n", 3)
    ('static', 3)
    >>> classify_argument("x", 1.5)
    ('tensor', f64[])
    """
    if isinstance(value, Traced):
        return "tensor", value.aval
    if isinstance(value, TensorType):  # a type alone: the CLI traces from --arg types, allocating nothing
        return "tensor", value
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return "static", value
    if isinstance(value, (int, np.integer)):
        return "static", int(value)
    if isinstance(value, float):
        return "tensor", TensorType((), "f64")
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype not in DTYPE_NAMES:
            raise ArgumentError(f"argument {name!r} has dtype {value.dtype}, which gradc does not handle",
                                hint="convert it with .astype(np.float64)")
        return "tensor", TensorType(tuple(int(d) for d in np.shape(value)), dtype_name(value.dtype))
    if isinstance(value, (list, tuple)):
        raise ArgumentError(f"argument {name!r} is a {type(value).__name__}",
                            hint=f"pass np.asarray({name}) instead")
    raise ArgumentError(f"argument {name!r} is a {type(value).__name__}; gradc takes NumPy arrays, "
                        "Python floats and Python ints", hint="convert it with np.asarray(...)")


def unwrap(f):
    """The Python function behind ``f``: through ``functools.partial``, bound methods and callable objects.

    >>> import functools
    >>> unwrap(functools.partial(lambda a, b: a, 1)).__name__
    '<lambda>'
    """
    for _ in range(32):  # partials of partials, a partial of a bound method, ...
        if isinstance(f, functools.partial):
            f = f.func
        elif isinstance(f, types.MethodType):
            f = f.__func__
        elif not isinstance(f, types.FunctionType) and callable(getattr(f, "__wrapped__", None)):
            f = f.__wrapped__  # a wrapper object (gradc.grad's): the function it wraps is the user's
        elif not isinstance(f, types.FunctionType) and callable(f) and \
                isinstance(inspect.getattr_static(type(f), "__call__", None), types.FunctionType):
            f = inspect.getattr_static(type(f), "__call__")
        else:
            break
    return f


def function_name(f) -> str:
    """The name the graph and the emitted functions take: the function's (a partial's: its function's).

    >>> function_name(lambda x: x)
    'lambda_'
    >>> def f(x): return x
    >>> f.__name__ = "if"; function_name(f)
    'if_'
    """
    inner = unwrap(f)
    name = getattr(inner, "__name__", None) or "f"
    if name == "__call__":
        name = type(f).__name__
    if name == "<lambda>":
        return "lambda_"
    name = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in str(name)) or "f"
    if name[0].isdigit() or keyword.iskeyword(name):  # soft keywords (match, type) are valid names
        name = f"{name}_" if not name[0].isdigit() else f"f_{name}"  # a valid identifier for the emitted def
    return name


def function_origin(f) -> str:
    code = getattr(unwrap(f), "__code__", None)
    path = code.co_filename if code else "?"
    return f"{os.path.basename(path)}:{function_name(f)}"


def bind_arguments(f, args, kwargs=None):
    """The user's parameter names bound to ``args`` (defaults filled in), or an ArgumentError."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        raise ArgumentError(f"cannot read the parameters of {f!r}",
                            hint="pass a Python function (def or lambda)") from None
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise ArgumentError(f"{function_name(f)} has {stars}{p.name}; gradc needs named parameters",
                                where=def_location(f), hint="list the parameters explicitly")
    try:
        bound = sig.bind(*args, **(kwargs or {}))
    except TypeError as e:
        raise ArgumentError(f"{function_name(f)}: {e}", hint="call it with the function's parameters") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def def_location(f) -> str | None:
    """``file:line`` of the ``def`` of ``f`` (through partials and methods), for errors about the function."""
    code = getattr(unwrap(f), "__code__", None)
    return f"{_display_path(code.co_filename)}:{code.co_firstlineno}" if code else None


def call_bound(f, values: dict):
    """Call ``f`` with every parameter's value, each passed the way its kind requires.

    >>> call_bound(lambda a, /, b, *, c: (a, b, c), {"a": 1, "b": 2, "c": 3})
    (1, 2, 3)
    """
    args, kwargs = [], {}
    for p in inspect.signature(f).parameters.values():
        if p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = values[p.name]
        else:
            args.append(values[p.name])
    return f(*args, **kwargs)
