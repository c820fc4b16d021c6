"""The expression helpers of captured code: ``and``/``or``/``not``, chained comparisons and item assignment.

On concrete values each is exactly Python's operation (same evaluation order, same
short-circuit, same result object); on traced booleans the logical ones build
``np.logical_and``/``np.logical_or``/``np.logical_not``, and a traced non-boolean or
non-scalar operand is a TraceError at the user's line. Item assignment goes to
``gradc.trace.inplace``. Captured code reaches these through ``gradc.trace.capture_runtime``.

>>> and_(1, lambda: 0), or_(0, lambda: 2), not_([])
(0, 2, True)
"""
from __future__ import annotations

import operator

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced, contains_traced

_has_traced = contains_traced


def _boolean(value, what):
    if value.aval.shape != () or str(value.aval.dtype) != "bool":
        raise TraceError(f"`{what}` on a traced {value.aval} (Python's `{what}` needs a single truth value)",
                         hint=f"for arrays use np.logical_{what}(a, b); for numbers compare first: (x > 0) {what} ...")
    return value


def and_(first, *thunks):
    """``first and thunk1() and ...``; on traced booleans, np.logical_and of all of them.

    >>> and_(2, lambda: 3, lambda: "last")
    'last'
    """
    return _chain(first, thunks, "and", np.logical_and, stop_at=False)


def or_(first, *thunks):
    """``first or thunk1() or ...``; on traced booleans, np.logical_or of all of them.

    >>> or_(0, lambda: "", lambda: 7)
    7
    """
    return _chain(first, thunks, "or", np.logical_or, stop_at=True)


def _chain(value, thunks, word, combine, stop_at: bool):
    """Python's short-circuit ``and``/``or`` (it stops at the first value whose truth is ``stop_at``) until a
    value is traced; from there every operand is evaluated and combined elementwise."""
    for k, thunk in enumerate(thunks):
        if isinstance(value, Traced):
            for rest in thunks[k:]:
                value = combine(_boolean(value, word), _logical_operand(rest(), word))
            return value
        if bool(value) is stop_at:
            return value
        value = thunk()
    return value


def _logical_operand(value, what):
    return _boolean(value, what) if isinstance(value, Traced) else bool(value)


_COMPARE = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge, "Eq": operator.eq,
            "NotEq": operator.ne, "Is": operator.is_, "IsNot": operator.is_not,
            "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b}


def compare(left, ops, *thunks):
    """A chained comparison ``left op1 b op2 c ...`` (each operand evaluated once, lazily, as in Python); on
    traced results, np.logical_and of the comparisons.

    >>> compare(1, ("Lt", "LtE"), lambda: 2, lambda: 2), compare(3, ("Lt", "Lt"), lambda: 2, lambda: 1 / 0)
    (True, False)
    """
    traced_part, last = None, True
    for op, thunk in zip(ops, thunks):
        right = thunk()
        step = _COMPARE[op](left, right)
        if isinstance(step, Traced):
            step = _boolean(step, "and")
            traced_part = step if traced_part is None else np.logical_and(traced_part, step)
        elif not step:
            return step
        else:
            last = step
        left = right
    return traced_part if traced_part is not None else last


def not_(value):
    """``not value``; on a traced boolean scalar, np.logical_not.

    >>> not_(0), not_([1])
    (True, False)
    """
    if isinstance(value, Traced):
        return np.logical_not(_boolean(value, "not"))
    return not value


# ---------------------------------------------------------------- item assignment (gradc.trace.inplace)
def setitem(value, target, key, where=None, through=(), param=None):
    """``target[key] = value`` (arguments in Python's evaluation order); returns what ``target`` becomes.
    ``through=(k1, ...)``: ``target[k1]...[key] = value``.

    >>> setitem(5.0, np.zeros(2), 1)
    array([0., 5.])
    """
    from gradc.trace import inplace
    inplace.check_reaches_caller(target, [value, key, *through], param, where)
    return inplace.setitem(target, key, value, where=where, through=through)


def setitem_op(target, key, symbol, value, where=None, through=(), param=None):
    """``target[key] <symbol>= value``; returns what ``target`` becomes.

    >>> setitem_op(np.ones(2), 0, "+", 2.0)
    array([3., 1.])
    """
    from gradc.trace import inplace
    inplace.check_reaches_caller(target, [value, key, *through], param, where)
    return inplace.setitem_op(target, key, symbol, value, where=where, through=through)


def ufunc_at(method_owner, target, indices, *vals, where=None):
    """``method_owner.at(target, indices, *vals)``: NumPy ufuncs' unbuffered in-place update, kept for traced
    arrays through gradc.trace.inplace; returns what ``target`` becomes.

    >>> ufunc_at(np.add, np.zeros(3), [0, 0], 1.0)
    array([2., 0., 0.])
    """
    if isinstance(method_owner, np.ufunc) and (vals or _has_traced(target, indices)):
        from gradc.trace import inplace
        return inplace.ufunc_at(method_owner, target, indices, vals[0] if vals else None, where=where)
    method_owner.at(target, indices, *vals)
    return target
