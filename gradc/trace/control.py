"""Structured control flow: ``fori_loop``, ``while_loop``, ``cond`` and ``scan`` (JAX's signatures).

On concrete values (no traced value in the predicate, the bounds or the carried values)
each is the plain Python loop or branch it stands for. On traced values the body is
traced once into a sub-graph and the whole loop becomes one equation of the graph,
so the emitted code keeps a real ``for``/``while``/``if``.

The capture transform (``gradc.trace.capture``) rewrites the user's ``for``, ``while``
and ``if`` statements into calls of these, passing ``names=`` (the user's variable
names of the carried values, for readable emitted code and errors) and ``where=``
(``file:line`` of the statement, for errors).

>>> fori_loop(0, 3, lambda i, x: x * 2.0, 1.0)
8.0
"""
from __future__ import annotations

from typing import Any, Callable

from gradc.errors import ArgumentError, StaticValueNeeded, user_location
from gradc.ir.builder import contains_traced
from gradc.trace import control_trace
from gradc.trace.signature import check_function


def fori_loop(lower: int, upper: int, body: Callable, init_val: Any, *, step: int = 1,
              checkpoint: str | int | None = None, names: tuple | None = None, where: str | None = None) -> Any:
    """``for i in range(lower, upper, step): val = body(i, val)``; returns ``val``.

    With concrete bounds and values the iterations run in Python; once an iteration
    makes the carried value traced (the body reads a traced value from outside), the
    remaining iterations become one traced loop.

    >>> fori_loop(0, 4, lambda i, s: s + i, 0)
    6
    """
    check_function(body, "gradc.fori_loop's body", called_with=2)
    if not contains_traced(lower, upper, init_val):
        val = init_val
        steps = range(int(lower), int(upper), int(step))
        for k, i in enumerate(steps):
            val = body(i, val)
            if k + 1 < len(steps) and contains_traced(val):
                return control_trace.fori_loop(steps[k + 1], steps[-1] + (1 if step > 0 else -1), body, val,
                                               step=step, checkpoint=checkpoint, names=names, where=where)
        return val
    return control_trace.fori_loop(lower, upper, body, init_val, step=step, checkpoint=checkpoint, names=names,
                                   where=where)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any, *, max_trips: int | None = None,
               checkpoint: str | int | None = None, names: tuple | None = None, where: str | None = None) -> Any:
    """``while cond_fun(val): val = body_fun(val)``; returns ``val``.

    Runs in Python while the condition is a Python value; from the first traced condition on,
    the rest is one traced loop.

    >>> while_loop(lambda v: v < 10, lambda v: v * 3, 1)
    27
    """
    check_function(cond_fun, "gradc.while_loop's cond_fun", called_with=1)
    check_function(body_fun, "gradc.while_loop's body_fun", called_with=1)
    val = init_val
    while True:
        keep_going = cond_fun(val)
        if contains_traced(keep_going):  # from here on the condition depends on traced values
            break
        if not keep_going:
            return val
        if contains_traced(val):
            # a Python condition on a Python counter (``while t < 1.0``) while the loop carries traced values:
            # the counter is carried too, traced, so the loop stays a loop (unless the body needs it as an int)
            try:
                return control_trace.while_loop(cond_fun, body_fun, val, max_trips=max_trips, checkpoint=checkpoint,
                                                names=names, where=where, promote_python=True)
            except StaticValueNeeded:
                pass
        val = body_fun(val)
    return control_trace.while_loop(cond_fun, body_fun, val, max_trips=max_trips, checkpoint=checkpoint,
                                    names=names, where=where, hint=keep_going)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any, names: tuple | None = None,
         where: str | None = None) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``.

    >>> cond(True, lambda x: x + 1, lambda x: x - 1, 5)
    6
    """
    check_function(true_fun, "gradc.cond's true_fun", called_with=len(operands))
    check_function(false_fun, "gradc.cond's false_fun", called_with=len(operands))
    if not contains_traced(pred):
        return true_fun(*operands) if pred else false_fun(*operands)
    return control_trace.cond(pred, true_fun, false_fun, *operands, names=names, where=where)


def scan(f: Callable, init: Any, xs: Any, length: int | None = None, *, checkpoint: str | int | None = None,
         names: tuple | None = None, where: str | None = None) -> tuple:
    """``carry, y = f(carry, x)`` for each ``x`` along ``xs``'s first axis; returns ``(carry, stacked ys)``.

    >>> import numpy as np
    >>> carry, ys = scan(lambda c, x: (c + x, c * x), 0.0, np.arange(3.0))
    >>> float(carry), ys
    (3.0, array([0., 0., 2.]))
    >>> scan(lambda c, x: (c, (x, 2 * x)), 0.0, np.arange(2.0))[1]  # a tuple of outputs: each one stacked
    (array([0., 1.]), array([0., 2.]))
    """
    check_function(f, "gradc.scan's f", called_with=2)
    if xs is None and length is None:
        raise ArgumentError("gradc.scan has nothing to scan over: xs is None and no length is given",
                            where=user_location(), hint="pass length=N for N iterations without xs")
    if not contains_traced(init, xs):
        import numpy as np
        n = len(xs) if xs is not None else length if length is not None else 0  # (no length, no xs: refused above)
        carry, ys = init, []
        for k in range(n):
            carry, y = f(carry, None if xs is None else xs[k])
            if contains_traced(carry, y):  # the body reads traced values: the whole scan is traced
                return control_trace.scan(f, init, xs, length, checkpoint=checkpoint, names=names, where=where,
                                          hint=(carry, y))
            ys.append(y)
        if not ys or ys[0] is None:
            return carry, None
        leaves = [control_trace.flatten(y)[0] for y in ys]  # ys stacked leafwise, as the traced scan does
        rebuild = control_trace.flatten(ys[0])[1]
        return carry, rebuild([np.stack([np.asarray(row[j]) for row in leaves]) for j in range(len(leaves[0]))])
    return control_trace.scan(f, init, xs, length, checkpoint=checkpoint, names=names, where=where)
