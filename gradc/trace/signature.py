"""How the user's function is called: its parameters bound to arguments, and each argument's kind.

>>> bind_arguments(lambda x, n=2: x, (1.0,))
{'x': 1.0, 'n': 2}
"""
from __future__ import annotations

import inspect
import os

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


def function_name(f) -> str:
    name = getattr(f, "__name__", "f")
    return "lambda_" if name == "<lambda>" else ("".join(c if c.isalnum() else "_" for c in name) or "f")


def function_origin(f) -> str:
    code = getattr(f, "__code__", None)
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
            raise ArgumentError(f"{function_name(f)} has *{p.name}; gradc needs named parameters",
                                where=def_location(f), hint="list the parameters explicitly")
    try:
        bound = sig.bind(*args, **(kwargs or {}))
    except TypeError as e:
        raise ArgumentError(f"{function_name(f)}: {e}", hint="call it with the function's parameters") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def def_location(f) -> str | None:
    code = getattr(f, "__code__", None)
    return f"{_display_path(code.co_filename)}:{code.co_firstlineno}" if code else None
