"""Calling what ``gradc.compile(f, ..., static_argnums=...)`` returns with the static arguments too.

The emitted functions do not take a static argument: its value is compiled in. A caller who passes it
anyway (as they would to ``f``, or to a ``jax.jit`` function) gets the call made when the value is the
one compiled in, and otherwise an :class:`~gradc.errors.ArgumentError` at their line that names the
argument, both values and how to get a function for the new value, never a bare ``TypeError``.

>>> import numpy as np, gradc
>>> def f(x, n): return np.sum(x ** n)
>>> c = gradc.compile(f, np.ones(2), 2, static_argnums=1)
>>> float(c.forward(np.ones(2) * 3, 2)), float(c.forward(np.ones(2) * 3))
(18.0, 18.0)
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from gradc.errors import ArgumentError, user_location

# the attributes whose functions take f's arguments (the others also take tangents or cotangents after them)
_PRIMAL = ("forward", "grad", "value_and_grad", "jacobian", "hessian")
_OTHERS = ("jvp", "vjp", "hvp")


def accept_static(compiled: Any, f: Callable, fixed: dict) -> Any:
    """``compiled`` (of ``f`` specialised to the static values ``fixed``) with its functions taking the static
    arguments as well: passed at their compiled values they are dropped, another value is an error."""
    try:
        full = inspect.signature(f)
    except (TypeError, ValueError):
        return compiled
    rest = full.replace(parameters=[p for p in full.parameters.values() if p.name not in fixed])
    for attribute in _PRIMAL + _OTHERS:
        fn = getattr(compiled, attribute, None)
        if callable(fn) and attribute in vars(compiled):
            setattr(compiled, attribute, _accepting(fn, attribute, full, rest, fixed, attribute in _PRIMAL))
    return compiled


def _accepting(fn, attribute, full, rest, fixed, primal):
    # functools.wraps keeps the emitted function's module and name: pickling drops and reloads it as before
    @functools.wraps(fn)
    def call(*args, **kwargs):
        named = [n for n in fixed if n in kwargs]
        if not named and (not primal or _binds(rest, args, kwargs)):
            return fn(*args, **kwargs)
        if primal:
            try:
                values = dict(full.bind(*args, **kwargs).arguments)
            except TypeError as err:
                raise ArgumentError(f"{attribute}{rest}: {err}", where=user_location(),
                                    hint=f"{_compiled_in(fixed)} compiled in; pass the other arguments"
                                    ).with_traceback(None) from None
        else:  # primals then tangents: only keywords can name a static argument
            values = kwargs = dict(kwargs)
        for n in [n for n in fixed if n in values]:
            refusal = _refusal(attribute, n, values.pop(n), fixed)
            if refusal is not None:
                raise refusal.with_traceback(None) from None
        if not primal:
            return fn(*args, **kwargs)
        positional, keywords = [], {}
        for p in rest.parameters.values():
            if p.name not in values:
                continue
            value = values[p.name]
            if p.kind is p.VAR_POSITIONAL:
                positional.extend(value)
            elif p.kind is p.VAR_KEYWORD:
                keywords.update(value)
            elif p.kind is p.KEYWORD_ONLY or keywords or len(positional) < _index(rest, p.name):
                keywords[p.name] = value
            else:
                positional.append(value)
        return fn(*positional, **keywords)
    return call


def _binds(signature, args, kwargs) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _index(signature, name) -> int:
    return list(signature.parameters).index(name)


def _refusal(attribute, name, value, fixed) -> ArgumentError | None:
    compiled = fixed[name]
    if value is compiled or _equal(value, compiled):
        return None
    return ArgumentError(f"{attribute} was compiled for the static argument {name}={compiled!r}, called with "
                        f"{name}={value!r}", where=user_location(),
                        hint=f"compile again with {name}={value!r}, or use gradc.jit(f, static_argnames="
                             f"{name!r}) (or a transform with static_argnames), which compiles once per value")


def _equal(a, b) -> bool:
    try:
        return bool(a == b) and hash(a) == hash(b)
    except Exception:  # unhashable, or an == that is not a bool (an array): only itself is equal
        return False


def _compiled_in(fixed) -> str:
    return ", ".join(f"{n}={v!r}" for n, v in fixed.items()) + (" is" if len(fixed) == 1 else " are")
