"""Functions with ``*args``/``**kwargs``: JAX's rule, each positional argument of the call is a parameter.

A transform of such a function waits for its call: the call's arity fixes the parameters
(``def f(x, *rest)`` called with three arrays has ``x, rest_0, rest_1``; ``argnums`` counts
into the call's positions, as JAX's does) and each keyword given to ``**kwargs`` becomes a
keyword-only parameter of its own name. One fixed-arity function per (arity, keywords), so the
transforms' caches are reused call after call.

>>> def total(*xs): return sum(xs)
>>> import inspect
>>> str(inspect.signature(fixed_arity(total, 2, ())))
'(xs_0, xs_1)'
"""
from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any, Callable

from gradc.errors import ArgumentError, user_location
from gradc.trace.signature import callable_signature, function_name
from gradc.trace.tracer import TRACING

_FIXED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # f -> {(arity, keywords): fixed function}


def is_variadic(f) -> bool:
    """Whether ``f`` takes ``*args`` or ``**kwargs`` (a signature Python cannot read: no).

    >>> is_variadic(lambda *a: a), is_variadic(lambda a: a)
    (True, False)
    """
    if f is None or not callable(f) or isinstance(f, VariadicTransform):
        return isinstance(f, VariadicTransform)
    try:
        params = callable_signature(f).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def fixed_arity(f: Callable, n_positional: int, keywords: tuple) -> Callable:
    """``f`` as a function of named parameters for a call with ``n_positional`` positions and ``keywords``.

    >>> def f(a, *more, scale=1.0, **options): return a
    >>> str(inspect.signature(fixed_arity(f, 3, ("tol",))))
    '(a, more_0, more_1, *, scale=1.0, tol)'
    """
    key = (n_positional, tuple(sorted(keywords)))
    try:
        table = _FIXED.setdefault(f, {})
    except TypeError:  # not weak-referenceable
        table = {}
    found = table.get(key)
    if found is not None:
        return found
    params = list(callable_signature(f).parameters.values())
    named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    double = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    keyword_only = [p for p in params if p.kind is p.KEYWORD_ONLY]
    taken = {p.name for p in params}
    extra_positions = []
    if star is not None:
        for i in range(max(0, n_positional - len(named))):
            name = f"{star.name}_{i}"
            while name in taken:
                name += "_"
            taken.add(name)
            extra_positions.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD))
    extra_keywords = []
    if double is not None:
        for name in key[1]:
            if name in {p.name for p in named + keyword_only}:
                continue
            if not name.isidentifier():
                raise ArgumentError(f"{function_name(f)}: the keyword {name!r} given to **{double.name} is not a "
                                    "Python name, so gradc cannot make it a parameter", where=user_location(),
                                    hint="pass it under a name that is a valid identifier")
            extra_keywords.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY))
    if extra_positions:  # the named positions are all filled by position before *args takes any
        named = [p.replace(default=inspect.Parameter.empty) for p in named]
    signature = inspect.Signature(named + extra_positions + keyword_only + extra_keywords)
    layout = ([p.name for p in named + extra_positions], [p.name for p in keyword_only + extra_keywords])

    def fixed(*args, **kwargs):  # no control flow of its own: the capture of loops leaves it as it is
        return _CALL(f, signature, layout, args, kwargs)

    shown: Any = fixed
    shown.__signature__ = signature
    shown.__name__ = shown.__qualname__ = function_name(f)
    shown.__wrapped__ = f
    table[key] = fixed
    return fixed


class _Caller:
    """The body of every fixed-arity function: bind, then call the user's function with positions and keywords
    as it takes them, its control flow captured when a trace is running. An object, not a function: the capture
    rewrites no function of gradc's reached from the user's."""

    def __call__(self, f, signature, layout, args, kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        positions, keywords = layout
        call_args = [bound.arguments[name] for name in positions]
        call_kwargs = {name: bound.arguments[name] for name in keywords}
        if TRACING.get() is not None:
            from gradc.trace.capture import capture
            from gradc.trace.scipy_dispatch import rebind

            f = capture(rebind(f))
        return f(*call_args, **call_kwargs)


_CALL = _Caller()


class VariadicTransform:
    """A transform of a function with ``*args``/``**kwargs``: made for each call's arity on first use."""

    def __init__(self, transform: Callable, f: Callable, options: tuple, keyword_options: dict):
        self.transform, self.fun, self.options, self.keyword_options = transform, f, options, keyword_options
        self.by_arity: dict = {}
        functools.update_wrapper(self, f, updated=())

    def for_call(self, args: tuple, kwargs: dict):
        """The transform of the fixed-arity function this call's arguments make."""
        key = (len(args), tuple(sorted(kwargs)))
        inner = self.by_arity.get(key)
        if inner is None:
            inner = self.transform(fixed_arity(self.fun, *key), *self.options, **self.keyword_options)
            self.by_arity[key] = inner
        return inner

    def __call__(self, *args, **kwargs):
        inner = self.by_arity.get((len(args), tuple(sorted(kwargs))))  # inline: errors keep one frame here
        if inner is None:
            inner = self.transform(fixed_arity(self.fun, len(args), tuple(kwargs)), *self.options,
                                   **self.keyword_options)
            self.by_arity[(len(args), tuple(sorted(kwargs)))] = inner
        return inner(*args, **kwargs)

    def compiled(self, *args, **kwargs):
        """``grad(f).compiled(*args)``: the compiled object of the transform for these arguments."""
        return self.for_call(args, kwargs).compiled(*args, **kwargs)

    def lower(self, *args, **kwargs):
        """``jit(f).lower(*args)`` / ``vmap(f).lower(*args)`` for these arguments."""
        return self.for_call(args, kwargs).lower(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{getattr(self.transform, '__name__', 'transform')} of {function_name(self.fun)} (*args)>"


def _function_of(args, kwargs):
    """The function a transform was given: its first positional or its ``f``/``fun`` keyword."""
    if args:
        return args[0]
    return kwargs.get("f", kwargs.get("fun"))


def _check_no_star_chosen(f, wrt, what: str) -> None:
    """Refuse ``wrt="args"`` naming the ``*args`` parameter itself, at the user's line (its arguments have names
    of their own only once a call fixes them)."""
    chosen = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    try:
        params = callable_signature(f).parameters.values()
    except (TypeError, ValueError):  # a VariadicTransform's function was read when it was made
        return
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name in chosen:
            stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise ArgumentError(f"gradc.{what}: wrt={p.name!r} is the {stars}{p.name} parameter, whose arguments "
                                "are chosen one by one", where=user_location(),
                                hint=f"choose them by position (argnums=0 is the first) or by name ({p.name}_0, "
                                     f"{p.name}_1, ... for *{p.name}; a keyword's own name for **{p.name}); "
                                     f"parameters: {stars}{p.name}")


def per_call(transform: Callable, f: Callable, options: tuple, keyword_options: dict, what: str):
    """The transform of a variadic ``f``, made per call arity: ``transform(fixed, *options, **keyword_options)``."""
    _check_no_star_chosen(f, keyword_options.get("wrt", options[1] if len(options) > 1 else None), what)
    return VariadicTransform(transform, f, options, keyword_options)


def on_call(transform: Callable) -> Callable:
    """Decorate a transform returning a function (``grad``, ``jit``, ``vmap``): for a variadic ``f`` the
    transform is made per call arity."""

    @functools.wraps(transform)
    def accepting(*args, **kwargs):
        f = _function_of(args, kwargs)
        if f is None:  # @grad(argnums=1): the decorator, applied to the function through this check
            rest = {k: v for k, v in kwargs.items() if k not in ("f", "fun")}

            def decorate(fun):  # one frame between the user's line and the transform's errors
                if is_variadic(fun):
                    return accepting(fun, *args[1:], **rest)
                return transform(fun, *args[1:], **rest)
            return decorate
        if not is_variadic(f):
            return transform(*args, **kwargs)
        _check_no_star_chosen(f, kwargs.get("wrt"), getattr(transform, "__name__", "transform"))
        if args:
            return VariadicTransform(transform, f, args[1:], kwargs)
        rest = {k: v for k, v in kwargs.items() if k not in ("f", "fun")}
        return VariadicTransform(transform, f, (), rest)

    return accepting


def with_arguments(arguments_of: Callable[..., tuple]) -> Callable:
    """Decorate a transform given its arguments with ``f`` (``vjp(f, *primals)``): ``arguments_of(*rest,
    **kwargs)`` gives the number of positions and the keywords ``f`` will be called with, which fix its
    parameters."""

    def decorate(transform):
        @functools.wraps(transform)
        def accepting(*args, **kwargs):
            if not args or not is_variadic(args[0]):
                return transform(*args, **kwargs)
            n_positional, keywords = arguments_of(*args[1:], **kwargs)
            return transform(fixed_arity(args[0], n_positional, keywords), *args[1:], **kwargs)

        return accepting

    return decorate


COMPILE_OPTIONS = ("argnums", "wrt", "target", "mode", "checkpoint", "max_trips", "static_argnums",
                   "static_argnames", "holomorphic", "sparse")


def compile_arguments(*example_args, **options) -> tuple:
    """The call ``gradc.compile(f, *example_args, **example_kwargs)`` describes: its example arguments.

    >>> compile_arguments(1.0, 2.0, mode="jvp", scale=3.0)
    (2, ('scale',))
    """
    if not example_args:
        raise ArgumentError("gradc.compile: the function takes *args, so its parameters are known only from the "
                            "example arguments, and none were given", where=user_location(),
                            hint="pass example arguments: gradc.compile(f, x, y)")
    return len(example_args), tuple(k for k in options if k not in COMPILE_OPTIONS)
