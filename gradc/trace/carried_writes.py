"""Arrays a traced loop or branch changes in place: NumPy's object identity kept across the functional form.

A traced loop or ``if`` carries each variable it assigns by name and returns new values. In
NumPy, ``z[i] += 1`` (or ``z += 1``) in the loop changes the *array object* ``z`` names, so
every other name for it (``y`` after ``z = y``) and every view of it (``z = y[0:2]`` writes
into ``y``) sees the change. :func:`write_back` keeps that meaning: a carried array that the
body changed in place (the body ends with the very object it was given, holding a new value)
is written into the object the loop started from, with the view rules of
``gradc.trace.inplace.store``, and the name keeps that object.

Two carried names for one array (``z = y``, both assigned in the loop) would each be carried
apart, so writes through one would be lost for the other: refused, at the user's line
(:func:`check_distinct`).

>>> import numpy as np, gradc
>>> def f(x):
...     y = x * 1.0
...     z = y
...     for i in range(x.shape[0]):
...         z[i] += 1.0
...     return np.sum(y ** 2)
>>> float(gradc.value_and_grad(f)(np.arange(3.0))[0])  # NumPy: (1 + 4 + 9)
14.0
"""
from __future__ import annotations

from gradc.errors import TraceError
from gradc.ir.builder import Traced


def _root(value):
    """The array object a (basic-index) view finally views; the object itself otherwise."""
    while getattr(value, "_base", None) is not None:
        value = value._base
    return value


def changed_in_place(sub, out_leaves) -> dict:
    """``{output position: carried position}`` for each output that is the very object the body was given for
    that carried value and now holds a value the body computed (``z[i] = ...``, ``z += ...``)."""
    wrappers = getattr(sub, "carry_leaves", ())
    found = {}
    for k, leaf in enumerate(out_leaves):
        for j, w in enumerate(wrappers):
            if leaf is w and w.atom is not sub.carry_vars[j]:
                found[k] = j
                break
    return found


def check_distinct(leaves, written, names, where, what: str) -> None:
    """Refuse two carried values that are one array (or views of one array) when ``what`` changes one in place."""
    roots = {}
    for j, leaf in enumerate(leaves):
        if isinstance(leaf, Traced):
            roots.setdefault(id(_root(leaf)), []).append(j)
    for group in roots.values():
        if len(group) > 1 and any(j in written for j in group):
            label = [repr(str(names[j])) if names and j < len(names) else f"value {j}" for j in group[:2]]
            first, second = label
            raise TraceError(f"{first} and {second} are one array (one name assigned from the other, or a view of "
                             f"it) and {what} changes it in place; gradc carries each name through the {what} "
                             "separately, so a write through one would be lost for the other", where=where,
                             hint=f"use one name for the array in the {what}, or make the second a copy before it "
                                  "(`z = y.copy()`)")


def write_back(builder, leaves, results, pairs: dict):
    """``results`` with each output ``k`` of ``pairs`` (``{output k: carried j}``) written into ``leaves[j]``,
    the object the loop or branch started from, which then stands for the result."""
    from gradc.trace.inplace import store
    results = list(results)
    for k, j in pairs.items():
        origin = leaves[j]
        if not isinstance(origin, Traced) or origin.builder is not builder or not isinstance(results[k], Traced):
            continue
        if results[k].aval != origin.aval:
            continue  # the type widened (a Python number carried): a new value, as Python rebinds it
        store(origin, results[k])
        results[k] = origin
    return results
