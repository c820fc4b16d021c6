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

from gradc.errors import ArgumentError, _display_path, user_location
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
    if isinstance(getattr(unwrap(f), "__wrapped__", None), np.ufunc):  # as_function's: NumPy's, not gradc's
        return f"numpy:{function_name(f)}"
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
    inner = getattr(f, "__wrapped__", None)
    if code is not None and inner is not None and os.path.abspath(code.co_filename).startswith(_GRADC_DIR):
        return def_location(inner)  # a function gradc made around the user's (a Jacobian's whole computation)
    return f"{_display_path(code.co_filename)}:{code.co_firstlineno}" if code else None


_GRADC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


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


def as_function(f):
    """``f`` as gradc calls it: a NumPy ufunc becomes a function of its inputs alone (``np.sin`` -> ``sin(x)``,
    ``np.add`` -> ``add(x1, x2)``), since its keyword options (``out=``, ``dtype=``, ``where=``) are no
    parameters to differentiate; anything else is returned as it is.

    >>> import inspect
    >>> str(inspect.signature(as_function(np.add))), as_function(np.sin).__name__
    ('(x1, x2)', 'sin')
    >>> as_function(len) is len
    True
    """
    if not isinstance(f, np.ufunc):
        return f
    ufunc = f

    def of_inputs(*inputs):
        return ufunc(*inputs)

    names = ["x"] if ufunc.nin == 1 else [f"x{i + 1}" for i in range(ufunc.nin)]
    of_inputs.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names])
    of_inputs.__name__ = of_inputs.__qualname__ = ufunc.__name__
    of_inputs.__wrapped__ = ufunc  # errors then name no gradc line as the function's def
    return of_inputs


def check_function(f, what: str, *, called_with: int | None = None):
    """Refuse, at the user's line, a ``f`` that ``what`` (``"gradc.grad"``) cannot call; return it as gradc
    calls it (``as_function``). (A generator or async
    function is refused when traced, at its ``def``; a builtin such as ``len`` is traced as called.)

    ``called_with``: ``f`` is a piece gradc calls itself with that many arguments (a loop body, a branch, a
    custom rule): a generator or async function, or one that cannot take them, is refused here.

    >>> try:
    ...     check_function(3, "gradc.grad")
    ... except ArgumentError as e:
    ...     print(e.message)
    gradc.grad takes a function, not int 3
    """
    if not callable(f):
        shown = repr(f)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ArgumentError(f"{what} takes a function, not {type(f).__name__} {shown}", where=user_location(),
                            hint=f"pass the function itself: {what}(loss)")
    f = as_function(f)  # first: NumPy < 2.3 gives ufuncs no signature to read
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what}: cannot read the parameters of {f!r}", where=user_location(),
                            hint="pass a Python function (def or lambda)") from None
    if called_with is None:
        return f
    inner = unwrap(f)
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner) or inspect.iscoroutinefunction(inner):
        kind = "an async function" if inspect.iscoroutinefunction(inner) else "a generator function (it uses yield)"
        raise ArgumentError(f"{what}: {function_name(f)} is {kind}, not a function returning a value",
                            where=user_location(), hint="define it with def and return the value")
    try:
        signature.bind(*[None] * called_with)
    except TypeError as e:
        raise ArgumentError(f"{what}: {function_name(f)} is called with {called_with} argument"
                            f"{'s' if called_with != 1 else ''}, but {e}", where=user_location(),
                            hint=f"give it {called_with} parameter{'s' if called_with != 1 else ''}") from None
    return f
