"""Which arguments a transform differentiates: ``argnums=`` and ``wrt=``, resolved in this one place.

Every transform (``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``,
``jacobian``, ``hessian``, ``hvp``, ``compile``, ``check``) and the CLI's ``--wrt`` read the
user's choice through :func:`select_arguments`, so they all mean the same thing by it:

* ``argnums`` is JAX's: an int or a tuple of ints. ``wrt`` says the same and also takes
  parameter names: a name, an int, or a tuple mixing them (``wrt=("w", 2)``).
* An int is a position among the *positional* parameters (a keyword-only parameter has none:
  name it); a negative int counts from the end, as Python's indexing does.
* A name may be any named parameter, keyword-only ones included.
* A single int or name gives the bare derivative; a tuple (or list) gives a tuple, in the
  order asked (``argnums=(1, 0)`` returns ``(d/d p1, d/d p0)``).
* Neither given: the transform's default, the first parameter (``argnums=0``; a keyword-only
  one when there is no other) for ``grad``
  and every transform that returns one derivative per chosen argument, as in JAX: a loss's
  parameters come first and its data after them, so ``grad(loss)(params, X, y)`` is the
  gradient a training step needs. (``jvp``, ``vjp`` and ``hvp`` default to every float
  argument, as JAX's take a tangent or return a cotangent for every primal.)
* Errors, at the user's line, with the parameter list in the hint: both ``argnums`` and
  ``wrt`` given, an empty tuple, a value of another type, a position out of range, an
  unknown name, the same parameter twice, a ``*args`` or ``**kwargs`` parameter.

Whether a chosen argument can be differentiated (a float array, not a static int) is known
only once it is traced: :func:`float_inputs` says so against the traced graph.

>>> def loss(w, b, X, *, scale=1.0): ...
>>> select_arguments(loss, argnums=(1, -3), what="gradc.grad")
Selection(names=('b', 'w'), as_tuple=True)
>>> select_arguments(loss, wrt="scale", what="gradc.grad")
Selection(names=('scale',), as_tuple=False)
>>> select_arguments(loss, what="gradc.grad")
Selection(names=('w',), as_tuple=False)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradc.errors import ArgumentError
from gradc.trace.signature import callable_signature, def_location, function_name

ALL = "all"  # a default meaning every float argument (jvp, vjp, hvp)


@dataclass(frozen=True)
class Selection:
    """The parameters chosen, by name, in the order asked; ``as_tuple``: the derivatives come as a tuple."""

    names: tuple
    as_tuple: bool
    defaulted: bool = field(default=False, compare=False)  # neither argnums nor wrt was given

    @property
    def wrt(self):
        """The choice as a ``wrt=`` value of names (a tuple when ``as_tuple``), to pass on unchanged."""
        return self.names if self.as_tuple else self.names[0]

    def __repr__(self) -> str:
        return f"Selection(names={self.names!r}, as_tuple={self.as_tuple})"


def _parameters(f):
    """``(positional names, keyword-only names, *args name, **kwargs name)`` of ``f``."""
    positional, keyword, star, double_star = [], [], None, None
    for p in callable_signature(f).parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(p.name)
        elif p.kind is p.KEYWORD_ONLY:
            keyword.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            star = p.name
        else:
            double_star = p.name
    return positional, keyword, star, double_star


def parameter_list(f) -> str:
    """The hint's list of ``f``'s parameters: the positional ones in order (their positions), then the others.

    >>> parameter_list(lambda w, b, *, s: 0)
    'parameters: w, b; keyword-only (by name only): s'
    """
    try:
        positional, keyword, star, double_star = _parameters(f)
    except (TypeError, ValueError):
        return "the function's parameters cannot be read"
    parts = [", ".join(positional)] if positional else []
    if keyword:
        parts.append(f"keyword-only (by name only): {', '.join(keyword)}")
    if star or double_star:
        parts.append("not differentiable: " + ", ".join(n for n in (star and f"*{star}",
                                                                      double_star and f"**{double_star}") if n))
    return "parameters: " + ("; ".join(parts) if parts else "none")


def select_arguments(f, argnums=None, wrt=None, *, what: str, default=0, where: str | None = None,
                     params=None, option: str | None = None) -> Selection | None:
    """The parameters of ``f`` that ``argnums`` or ``wrt`` choose (see the module docstring).

    ``default`` applies when neither is given: an int, a name, a tuple, or :data:`ALL` (then the
    result is None: every float argument, known once traced). ``what`` names the transform in
    messages (``"gradc.grad"``); ``where`` is the ``file:line`` errors point at (default: the
    user's line on the stack). ``params`` replaces ``f``'s signature by a list of positional names
    (a traced graph's parameters, when no function is at hand). ``option`` names a command-line
    option giving ``wrt`` (``"--wrt"``) in messages.

    >>> select_arguments(lambda x, y: 0, wrt=("y", 0), what="gradc.grad")
    Selection(names=('y', 'x'), as_tuple=True)
    >>> try:
    ...     select_arguments(lambda x, y: 0, argnums=2, what="gradc.grad", where="f.py:1")
    ... except ArgumentError as e:
    ...     print(e.message)
    gradc.grad: argnums=2 is not a parameter position: lambda_ has 2 positional parameters
    """
    prefix = f"{what}: " if what else ""  # a command-line option says itself: no prefix
    if params is not None:
        positional, keyword, star, double_star = list(params), [], None, None
    else:
        try:
            positional, keyword, star, double_star = _parameters(f)
        except (TypeError, ValueError):
            raise ArgumentError(f"{prefix}cannot read the parameters of {f!r}", where=where,
                                hint="pass a Python function (def or lambda)") from None
    hint = parameter_list(f) if params is None else "parameters: " + ", ".join(positional)
    if argnums is not None and wrt is not None:
        raise ArgumentError(f"{prefix}both argnums={argnums!r} and wrt={wrt!r} are given", where=where,
                            hint=f"give one: argnums (positions, as in JAX) or wrt (names or positions); {hint}")
    label, choice = ("argnums", argnums) if argnums is not None else ("wrt", wrt)
    defaulted = choice is None
    if defaulted:
        if default == ALL:
            return None
        label, choice = ("argnums" if not isinstance(default, str) else "wrt"), default
    label = option or label
    fname = function_name(f) if params is None else what
    as_tuple = isinstance(choice, (tuple, list))
    items = list(choice) if as_tuple else [choice]
    if not items:
        raise ArgumentError(f"{prefix}{_given(label, choice)} chooses no parameter", where=where,
                            hint=f"choose at least one; {hint}")
    names = []
    for item in items:
        name = _one(item, label, positional, keyword, star, double_star, (what, fname, f), where, hint, defaulted)
        if name in names:
            raise ArgumentError(f"{prefix}{_given(label, choice)} chooses {name!r} twice", where=where,
                                hint=f"list each parameter once; {hint}")
        names.append(name)
    return Selection(tuple(names), as_tuple, defaulted)


def _given(label, value) -> str:
    """``argnums=(0, 1)`` for a keyword, ``--wrt 'w,b'`` for a command-line option."""
    if label.startswith("--"):
        return f"{label} {','.join(map(str, value)) if isinstance(value, (tuple, list)) else value}"
    return f"{label}={value!r}"


def _one(item, label, positional, keyword, star, double_star, names, where, hint, defaulted) -> str:
    """One entry of ``argnums``/``wrt`` as a parameter name, or the error it deserves."""
    what, fname, f = names
    prefix = f"{what}: " if what else ""
    given = _given(label, item)
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
        n = len(positional)
        k = int(item) + n if item < 0 else int(item)
        if 0 <= k < n:
            return positional[k]
        if defaulted and n == 0 and keyword and item == 0:  # def f(*, x): the first parameter is keyword-only
            return keyword[0]
        if star is not None and item >= 0 and defaulted:  # the function's own shape: an error at its def
            raise ArgumentError(f"{prefix}{fname} has *{star}; gradc needs named parameters (the default "
                                "argnums=0 is the first one)", where=where or def_location(f),
                                hint="list the parameters explicitly")
        if star is not None and item >= 0:
            problem = f"position {item} falls in *{star}, which gradc cannot differentiate"
            fix = "give the function named parameters"
        elif defaulted:
            problem = f"{fname} has no positional parameter (the default is the first one, argnums=0)"
            fix = "name a parameter: wrt='...'"
        else:
            problem = f"{fname} has {n} positional parameter{'s' if n != 1 else ''}"
            fix = f"use a position from {-n} to {n - 1}" if n else "name a parameter: wrt='...'"
            if keyword:
                fix += " (a keyword-only parameter has no position: name it)"
        raise ArgumentError(f"{prefix}{given} is not a parameter position: {problem}", where=where,
                            hint=f"{fix}; {hint}")
    if isinstance(item, str):
        if label == "argnums":
            raise ArgumentError(f"{prefix}{given}: argnums takes positions (ints), as in JAX", where=where,
                                hint=f"use wrt={item!r} to choose by name; {hint}")
        if item in positional or item in keyword:
            return item
        if item in (star, double_star):
            stars = "*" if item == star else "**"
            raise ArgumentError(f"{prefix}{given} is the {stars}{item} parameter, which gradc cannot "
                                "differentiate", where=where, hint=f"give the function named parameters; {hint}")
        raise ArgumentError(f"{prefix}{given} is not a parameter of {fname}", where=where, hint=hint)
    kinds = "an int or a tuple of ints" if label == "argnums" else "a name, an int, or a tuple of them"
    raise ArgumentError(f"{prefix}{given} is neither a parameter's position nor its name", where=where,
                        hint=f"{label} takes {kinds}, e.g. {label}=0, {label}=(0, 1)"
                             + (", wrt='w'" if label == "wrt" else "") + f"; {hint}")


def float_inputs(selection: Selection | None, graph, where: str | None = None) -> list:
    """The names ``selection`` chooses, checked against the traced ``graph``: each a float array input.

    None chooses every float input, in parameter order. Errors point at ``where`` (the function's def).

    >>> from gradc.trace import trace
    >>> g = trace(lambda x, n: x * n, 1.0, 3)
    >>> float_inputs(None, g)
    ['x']
    >>> try:
    ...     float_inputs(Selection(("n",), False), g, where="f.py:1")
    ... except ArgumentError as e:
    ...     print(e.message)
    cannot differentiate with respect to 'n': it is a static Python int (3)
    """
    inputs = {v.name: v for v in graph.inputs}
    if selection is None:
        return [p for p in graph.params if p in inputs and inputs[p].type.is_inexact]
    for name in selection.names:
        if name not in graph.params:
            raise ArgumentError(f"{name!r} is not a parameter of {graph.name}", where=where,
                                hint="parameters are: " + ", ".join(graph.params))
        if name not in inputs:
            value = graph.static[name]
            raise ArgumentError(f"cannot differentiate with respect to {name!r}: it is a static Python "
                                f"{type(value).__name__} ({value!r})", where=where,
                                hint="pass it as a float or a float array")
        if not inputs[name].type.is_inexact:
            raise ArgumentError(f"cannot differentiate with respect to {name!r} of dtype {inputs[name].type.dtype}",
                                where=where, hint="pass it as a float array (e.g. x.astype(np.float64))")
    return list(selection.names)


def check_wrt(f, wrt, what: str, label: str = "wrt") -> None:
    """Refuse, at the user's line, a ``wrt`` (or ``argnums``: ``label``) that cannot choose parameters of ``f``:
    ``gradc.trace.selection`` has the rules. What only the trace knows (a static or integer argument) is judged
    there.

    >>> check_wrt(lambda x, y: x, ("x", 1), "gradc.grad")
    >>> try:
    ...     check_wrt(lambda x: x, "y", "gradc.grad")
    ... except ArgumentError as e:
    ...     print(e.message)
    gradc.grad: wrt='y' is not a parameter of lambda_
    """
    select_arguments(f, **{label: wrt}, what=what)
