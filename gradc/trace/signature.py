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
from typing import Any, Callable

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
    if isinstance(value, complex):
        return "tensor", TensorType((), "c128")
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype not in DTYPE_NAMES:
            raise ArgumentError(f"argument {name!r} has dtype {value.dtype}, which gradc does not handle",
                                hint="convert it with .astype(np.float64)")
        return "tensor", TensorType(tuple(int(d) for d in np.shape(value)), dtype_name(value.dtype))
    if isinstance(value, (list, tuple)):
        raise ArgumentError(f"argument {name!r} is a {type(value).__name__}",
                            hint=f"pass np.asarray({name}) instead")
    if callable(value) or not hasattr(value, "__array__"):  # a function, a sentinel: a constant of the trace
        raise ArgumentError(f"argument {name!r} is a {type(value).__name__}, which gradc cannot trace",
                            hint=f"declare it static (static_argnames=({name!r},)): its value is then baked into "
                                 "the trace, and a new value traces again")
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


def callable_signature(f) -> inspect.Signature:
    """The parameters gradc binds for ``f``: the one place that decides, for every kind of callable.

    A ``functools.wraps`` wrapper is called through its own parameters (``def wrapper(x)`` around
    ``f(x, y)`` takes ``x``), not the wrapped function's, which ``inspect.signature`` reports; only a
    wrapper taking ``*args, **kwargs`` alone is read through to the function it wraps (a decorator
    that passes everything on). A ``functools.partial`` drops the positions it binds and keeps the
    keywords it binds as keyword-only parameters with those defaults; NumPy functions
    (``np.sum``) read through their dispatcher; a NumPy ufunc takes its inputs alone
    (:func:`as_function`); bound methods and callable objects lose ``self``. Raises ``TypeError`` or
    ``ValueError`` when Python cannot tell (a builtin without a signature).

    >>> import functools
    >>> def f(x, y): return x * y
    >>> @functools.wraps(f)
    ... def twice(x): return f(x, 2.0)
    >>> str(callable_signature(twice)), str(callable_signature(functools.partial(f, y=3.0)))
    ('(x)', '(x, *, y=3.0)')
    """
    if isinstance(f, np.ufunc):
        return inspect.signature(as_function(f))
    if isinstance(f, functools.partial) and "__signature__" not in getattr(f, "__dict__", {}):
        return _partial_signature(f)
    try:
        own = inspect.signature(f, follow_wrapped=False)
    except ValueError:  # a C-level dispatcher (np.sum): the Python function it wraps has the signature
        if getattr(f, "__wrapped__", None) is None:
            raise
        return callable_signature(f.__wrapped__)
    wrapped = getattr(f, "__wrapped__", None)
    if wrapped is not None and callable(wrapped) and _passes_everything(own):
        try:
            return callable_signature(wrapped)
        except (TypeError, ValueError):
            return own
    return own


def _passes_everything(signature: inspect.Signature) -> bool:
    """``(*args, **kwargs)`` (or one of them) and nothing else: a wrapper that says nothing of its own."""
    kinds = [p.kind for p in signature.parameters.values()]
    return bool(kinds) and all(k in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) for k in kinds)


def _partial_signature(p: functools.partial) -> inspect.Signature:
    """What ``inspect`` gives for a partial, computed from :func:`callable_signature` of its function."""
    params = list(callable_signature(p.func).parameters.values())
    n_bound = len(p.args)
    out, keyword_from_here = [], False
    for param in params:
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD) and n_bound:
            n_bound -= 1  # bound by position
            continue
        if param.kind is param.VAR_POSITIONAL and n_bound:
            n_bound = 0
        if param.name in p.keywords and param.kind is not param.VAR_KEYWORD:
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(f"{p!r} binds the positional-only parameter {param.name!r} by keyword")
            param = param.replace(kind=param.KEYWORD_ONLY, default=p.keywords[param.name])
            keyword_from_here = True  # later parameters can then only be given by keyword
        elif keyword_from_here and param.kind is param.POSITIONAL_OR_KEYWORD:
            param = param.replace(kind=param.KEYWORD_ONLY)
        elif keyword_from_here and param.kind is param.VAR_POSITIONAL:
            continue
        out.append(param)
    return inspect.Signature(out)


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


def describe(value: Any) -> str:
    """A deterministic short text of a static value for headers (a function by its dotted name, not its address).

    >>> describe(np.tanh), describe(3), describe("a" * 80)[-4:]
    ('numpy.tanh', '3', "...'")
    """
    if callable(value) and hasattr(value, "__qualname__" if not isinstance(value, np.ufunc) else "__name__"):
        module = getattr(value, "__module__", None) or ("numpy" if isinstance(value, np.ufunc) else "")
        name = getattr(value, "__qualname__", None) or value.__name__
        return f"{module}.{name}" if module else name
    text = repr(value)
    if " at 0x" in text:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:56] + "...'"


def static_note(f: Callable) -> str:
    """``" (static n=3, act=numpy.tanh)"`` for a specialisation, ``""`` otherwise: for origins and headers."""
    fixed = getattr(f, "__gradc_static__", None)
    if not fixed:
        return ""
    return " (static " + ", ".join(f"{name}={describe(value)}" for name, value in fixed.items()) + ")"


def function_origin(f) -> str:
    """``file.py:name`` of the user's function, for headers (with the static values a transform baked in).

    >>> def f(x): return x
    >>> function_origin(f).endswith(":f")
    True
    """
    fixed = getattr(f, "__gradc_static__", None)
    if fixed is not None:
        return function_origin(f.__wrapped__) + static_note(f)
    if isinstance(getattr(unwrap(f), "__wrapped__", None), np.ufunc):  # as_function's: NumPy's, not gradc's
        return f"numpy:{function_name(f)}"
    code = getattr(unwrap(f), "__code__", None)
    inner = getattr(unwrap(f), "__wrapped__", None)
    if code is not None and inner is not None and os.path.abspath(code.co_filename).startswith(_GRADC_DIR):
        return function_origin(inner)  # a function gradc made around the user's (a fixed-arity one)
    path = code.co_filename if code else "?"
    return f"{os.path.basename(path)}:{function_name(f)}"


def bind_arguments(f, args, kwargs=None):
    """The user's parameter names bound to ``args`` (defaults filled in), or an ArgumentError."""
    try:
        sig = callable_signature(f)
    except (TypeError, ValueError):
        raise ArgumentError(f"cannot read the parameters of {f!r}",
                            hint="pass a Python function (def or lambda)") from None
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise ArgumentError(f"{function_name(f)} has {stars}{p.name}, whose parameters each call fixes, and "
                                "here no call gives them", where=def_location(f),
                                hint="pass example arguments (gradc.compile(f, x, y)), or list the parameters "
                                     "explicitly")
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
    for p in callable_signature(f).parameters.values():
        if p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = values[p.name]
        else:
            args.append(values[p.name])
    return f(*args, **kwargs)


CALLABLE_CONVERTERS: list = []  # f -> a function of named parameters standing in for f, or None


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
    for convert in CALLABLE_CONVERTERS:  # SciPy's distribution methods (gradc.trace.distribution_dispatch)
        converted = convert(f)
        if converted is not None:
            return converted
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
        signature = callable_signature(f)
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
