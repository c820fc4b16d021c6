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

import weakref

from gradc.errors import TraceError
from gradc.ir.builder import Traced

_OUTER_READS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # builder -> arrays of enclosing code read
ACTIVE: list = []  # the builders of the loop bodies and branches being traced, innermost last (control_trace's)


def note_reads(args) -> None:
    """Note the arrays of enclosing code that ``args`` (an op's operands, traced while a loop body or branch is)
    hold: a loop body's op on them alone is recorded outside the loop, yet the body read them."""
    if not ACTIVE:
        return
    inner = ACTIVE[-1]
    for a in args:
        if isinstance(a, Traced) and a.builder is not inner:
            b = inner
            while b is not None and b is not a.builder:
                _OUTER_READS.setdefault(b, []).append(a)
                b = b.parent


def check_no_stale_reads(builder, leaves, written, names, where, what: str) -> None:
    """Refuse a body that reads, through another name or a view, an array it changes in place through a carried
    name: the read would see the array as it was before the loop or branch, where NumPy sees the change."""
    if not written:
        return
    roots = {id(_root(leaves[j])): j for j in written if isinstance(leaves[j], Traced)}
    for value in _OUTER_READS.get(builder, ()):
        j = roots.get(id(_root(value)))
        if j is not None:
            name = repr(str(names[j])) if names and j < len(names) else "an array"
            raise TraceError(f"the {what} changes {name} in place and reads the same array through another name or "
                             f"a view of it; gradc carries {name} by name, so that read would see the array as it "
                             f"was before the {what}", where=where,
                             hint=f"inside the {what}, read and write the array through one name (through the array "
                                  "itself, not a view of it: `y[0:2] += 1` rather than `z += 1` with `z = y[0:2]`); "
                                  f"the other names see the change after the {what}")


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
