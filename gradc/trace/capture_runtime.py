"""What captured code calls at run time (the capture transform's ``rt`` name).

The rewritten function keeps the user's own statement for concrete values and takes a
functional form (a call of ``gradc.trace.control``'s primitives) only when a traced
value is involved; the helpers below make that choice and adapt the user's variables to
the primitives' tuple carries. Each helper that is reached with traced values only
raises gradc errors at the user's line (``where``).

>>> ifexp(True, lambda: "a", lambda: "b")
'a'
"""
from __future__ import annotations

import sys

import numpy as np

from gradc.errors import GradcError, TraceError, user_location
from gradc.ir.builder import Traced, contains_traced
from gradc.ir.dims import is_dim_expr
from gradc.ops.values import lift
from gradc.trace import checks, collecting_loop, control
from gradc.trace.calls import call  # noqa: F401  (helper calls in captured code: gradc.trace.calls)
from gradc.trace.capture_lists import append_, concat_, extend_, len_  # noqa: F401  (reached by the generated code)
from gradc.trace.capture_values import (  # noqa: F401  (the generated code reaches them through this module)
    and_,
    compare,
    not_,
    or_,
    setitem,
    setitem_op,
    ufunc_at,
)
from gradc.trace.collected_list import scan_form, sum_  # noqa: F401  (sum_: reached by the generated code)
from gradc.trace.loop_outputs import fori_scan
from gradc.trace.tracer import size_operand


class Undefined:
    """The value of a variable that is not bound yet, while it travels through a functional form.

    >>> Undefined("y")
    <y not assigned yet>
    """

    __slots__ = ("name",)
    is_unset = True  # read on the type (an instance's attributes raise): gradc.trace.control_trace.is_unset

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name} not assigned yet>"

    def _use(self, *args, **kwargs):  # what Python raises on reading the unbound variable
        if sys.version_info >= (3, 11):
            raise UnboundLocalError(f"cannot access local variable '{self.name}' where it is not associated with a "
                                    "value")
        raise UnboundLocalError(f"local variable '{self.name}' referenced before assignment")

    __bool__ = __call__ = __getitem__ = __iter__ = __len__ = __float__ = __int__ = __index__ = _use
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _use
    __pow__ = __rpow__ = __neg__ = __matmul__ = __rmatmul__ = __lt__ = __le__ = __gt__ = __ge__ = _use
    __array__ = __array_ufunc__ = __array_function__ = _use

    def __getattr__(self, name):
        self._use()


def values(scope, names) -> tuple:
    """The current values of the local variables ``names`` that the function ``scope`` (a ``lambda`` naming
    them, never called) closes over; an :class:`Undefined` for those not bound yet. A closure reaches the
    variables from any nested function the rewrite makes, which the frame's own locals would not.

    >>> def f(a):
    ...     if a:
    ...         b = 2
    ...     return values(lambda: (a, b), ("a", "b"))
    >>> f(1), f(0)
    ((1, 2), (0, <b not assigned yet>))
    """
    cells = dict(zip(scope.__code__.co_freevars, scope.__closure__ or ()))
    out = []
    for n in names:
        try:
            out.append(cells[n].cell_contents)
        except (KeyError, ValueError):  # not a local of the function, or not assigned yet
            out.append(Undefined(n))
    return tuple(out)


def carry_init(scope, names, flags: int = 0) -> tuple:
    """:func:`values` of ``names`` followed by ``flags`` ``False`` (break flags start unset).

    >>> def f(s):
    ...     return carry_init(lambda: (s,), ("s",), 1)
    >>> f(2.0)
    (2.0, False)
    """
    return values(scope, names) + (False,) * flags


def traced(value) -> bool:
    """Whether ``value`` is a traced value (a predicate that needs a ``cond``).

    >>> traced(True), traced(np.float64(1.0))
    (False, False)
    """
    return isinstance(value, Traced)


def any_traced(values) -> bool:
    """Whether a traced value is anywhere in ``values`` (through tuples, lists and dicts).

    >>> any_traced([1.0, (np.ones(2), {"k": 3})])
    False
    """
    return contains_traced(*values)


class TracedRange:
    """``range(start, stop, step)`` with a traced bound (the step is a Python int)."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


class TracedItems:
    """``enumerate(a)`` or ``zip(a, b, ...)`` over traced arrays' first axis (equal lengths)."""

    def __init__(self, kind, arrays, start=0):
        self.kind, self.arrays, self.start = kind, tuple(arrays), start


def _rows(a):
    shape = getattr(a, "shape", None)
    return shape[0] if isinstance(a, (Traced, np.ndarray)) and shape else None


def enumerate_(iterable, start=0):
    """``enumerate(iterable, start)``, or :class:`TracedItems` over a traced array.

    >>> list(enumerate_("ab", start=1))
    [(1, 'a'), (2, 'b')]
    """
    if isinstance(iterable, Traced) and _rows(iterable) is not None and isinstance(start, int):
        return TracedItems("enumerate", (iterable,), start)
    return enumerate(iterable, start)


def zip_(*iterables):
    """``zip(*iterables)``, or :class:`TracedItems` when they are arrays of equal length, one of them traced.

    >>> list(zip_([1, 2], "ab"))
    [(1, 'a'), (2, 'b')]
    """
    rows = {_rows(a) for a in iterables}
    if any(isinstance(a, Traced) for a in iterables) and None not in rows and len(rows) == 1:
        return TracedItems("zip", iterables)
    return zip(*iterables)


def range_(*args, where=None):
    """``range(*args)``, or a :class:`TracedRange` when a bound is traced.

    >>> range_(5, 0, -2)
    range(5, 0, -2)
    """
    if any(is_dim_expr(a) for a in args):  # range(X.shape[0]) of a named size: a loop of run-time length
        args = tuple(size_operand(a) for a in args)
    if not any_traced(args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
    if len(args) not in (1, 2, 3):
        raise TraceError(f"range expected 1 to 3 arguments, got {len(args)}")
    if isinstance(step, Traced) or not isinstance(step, (int, np.integer)) or isinstance(step, bool):
        raise TraceError("the step of a range with traced bounds must be a Python int", where=where,
                         hint="use a fixed step (range(a, b, 2)), or loop over a fixed range and test a condition")
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    for bound in (start, stop):
        if isinstance(bound, Traced) and (bound.aval.shape != () or not str(bound.aval.dtype).startswith("i")):
            raise TraceError(f"a range bound is a traced {bound.aval}, not an integer scalar", where=where,
                             hint="compute the bound with integer operations, e.g. n // 2")
    return TracedRange(start, stop, int(step))


def reversed_(iterable):
    """``reversed(iterable)`` as a ``for`` loop iterates it: a range reversed is a range (of traced bounds too), a
    traced array's rows are scanned from the last (a flipped array), others are Python's ``reversed``.

    >>> reversed_(range(1, 8, 3)), list(reversed_([1, 2]))
    (range(7, -2, -3), [2, 1])
    """
    if isinstance(iterable, range):
        return iterable[::-1]
    if isinstance(iterable, TracedRange):
        from gradc.trace.control_trace import traced_trip_count
        start, step = iterable.start, iterable.step
        count = traced_trip_count(start, iterable.stop, step)
        last = start + (count - 1) * step
        return TracedRange(last, start - step, -step) if not isinstance(count, int) or count else range(0)
    if (isinstance(iterable, Traced) and _rows(iterable) is not None) or _numeric_rows(iterable):
        return iterable[::-1]
    scanned = scan_form(iterable)  # a list a traced loop collected: its stacked items, flipped
    if isinstance(scanned, Traced):
        return scanned[::-1]
    if scanned is not None:
        return TracedItems("zip", [a[::-1] for a in scanned])
    return reversed(iterable)


def loop_traced(iterable, current, indexed=(), tables=()) -> bool:
    """Whether a loop runs in functional form: its bounds or items are traced, or (over a range or for a
    ``while``: ``iterable`` is None) a value it reads or carries is; not when it indexes or calls a method of a
    Python container (``indexed``), which only a Python loop can do (unless a bound is traced), nor when it
    reads items of one (``tables``) that is not a list or tuple of numbers (``item`` reads those as arrays).

    >>> loop_traced(range(3), (1.0, np.ones(2))), loop_traced([1, 2], ())
    (False, False)
    """
    if isinstance(iterable, TracedRange) or scan_form(iterable) is not None:
        return True
    if any(isinstance(v, (list, tuple, dict, set)) for v in indexed) or any(
            isinstance(v, (list, tuple, dict, set)) and not _numbers(v) for v in tables):
        return False
    if isinstance(iterable, (Traced, TracedItems)):
        return True
    if iterable is None or isinstance(iterable, range) or _numeric_rows(iterable):
        return any_traced(current)
    return False


def _numeric_rows(iterable) -> bool:
    """A float NumPy array with at least one axis: its rows can be scanned as constants (integer arrays often
    hold indices or sizes the body needs as Python ints, so those loops stay Python loops)."""
    return isinstance(iterable, np.ndarray) and iterable.ndim >= 1 and iterable.dtype.kind == "f"


def _check_defined(init, names, where, what, targets=(), unset=()):
    for value, name in zip(init, names):
        if name in unset and isinstance(value, Undefined):
            continue  # read only by a `return` after the loop: the loop gives it its type (control_trace)
        if isinstance(value, Undefined) and name in targets:
            raise TraceError(f"the loop variable {name!r} is read after the traced loop (a `return` inside the loop "
                             "takes effect after it, with the loop's variables as they are then)", where=where,
                             hint="keep what you need in a variable set before the loop (found = 0.0), assign it "
                                  "inside the loop and break")
        if isinstance(value, Undefined):
            raise TraceError(f"{name!r} is first assigned inside a traced {what} and used after it (or in the next "
                             "iteration)", where=where,
                             hint=f"initialise {name} before the {what} (e.g. {name} = 0.0 or an array of its shape)")


def _target_from_first_item(iterable, init, names, targets):
    """A loop variable read after the loop (``for i in range(7): ...``, then ``i``) starts as the first item, so the
    loop carries it and leaves the last, as Python does (when the loop runs at least once; after none Python
    raises NameError). Only for one plain target over a range or an array's rows. A target bound before a loop over
    an array's rows starts as the first row too when there is one (its value before is never read: the loop
    rebinds it first), so an earlier binding of another type does not make the loop's carry change type."""
    if len(targets) != 1 or isinstance(iterable, TracedItems):
        return init
    k = list(names).index(targets[0])
    if not isinstance(init[k], Undefined) and not _surely_runs(iterable):
        return init
    if isinstance(iterable, (range, TracedRange)):
        first = iterable.start
    elif _rows(iterable):
        first = iterable[0]
    else:
        return init
    return tuple(first if j == k else v for j, v in enumerate(init))


def _surely_runs(iterable) -> bool:
    """Whether a loop over the rows of a traced array has at least one row, known when tracing (a range's items
    are Python ints: an earlier binding cannot differ in type beyond what a carry widens)."""
    rows = _rows(iterable) if isinstance(iterable, Traced) else None
    return isinstance(rows, (int, np.integer)) and rows > 0


def _scalar_predicate(pred, where, what):
    if isinstance(pred, Traced) and pred.aval.shape != ():
        raise TraceError(f"{what} depends on a traced array of shape {pred.aval.shape}, not a scalar", where=where,
                         hint="for an elementwise choice use np.where(cond, a, b); to test every or any entry use "
                              "np.all(...) or np.any(...)")


# the carried variables of the loops being traced that only a `return` after the loop reads (their `unset=`): an
# `if` in the body may assign one in a single branch (the branch that returns), the loop then gives it its type
_RETURN_ONLY: list = []


def _return_only_names() -> set:
    return set().union(*_RETURN_ONLY) if _RETURN_ONLY else set()


def for_stmt(iterable, body, init, names, where, targets=(), unset=(), collected=()):
    """Run a captured ``for`` in functional form: ``body(item, carry) -> carry`` over ``iterable`` (``targets``: the
    carried names the ``for`` itself assigns; ``collected``: the lists it appends to, ``gradc.trace.capture_lists``).

    >>> for_stmt(range(4), lambda i, c: (c[0] + i,), (0,), ("s",), "f.py:1")
    (6,)
    """
    _RETURN_ONLY.append(frozenset(unset))
    try:
        return _for_stmt(iterable, body, init, names, where, targets, unset, collected)
    finally:
        _RETURN_ONLY.pop()


def _for_stmt(iterable, body, init, names, where, targets=(), unset=(), collected=()):
    scanned = scan_form(iterable)  # a list a traced loop collected: a scan over its stacked items
    if scanned is not None:
        iterable = scanned if isinstance(scanned, Traced) else TracedItems("zip", scanned)
    init = _target_from_first_item(iterable, init, names, targets)
    _check_defined(init, names, where, "loop", targets, unset)
    kw = {"names": tuple(names), "where": where}
    positions = collecting_loop.collecting(init, names, collected)
    if positions:
        if isinstance(iterable, TracedRange):
            raise TraceError(f"the loop appends to {', '.join(repr(names[k]) for k in positions)} and its trip count "
                             "is known only when the code runs (a range with traced bounds), so the list's length is "
                             "not known", where=where, hint=_COLLECT_HINT)
        return collecting_loop.for_collecting(iterable, body, init, names, where, positions,
                                            lambda it, step, carry: _run_for(it, step, carry, kw, True),
                                            *_first_and_trips(iterable), lambda: _python_items(iterable))
    return _run_for(iterable, body, init, kw, False)


_COLLECT_HINT = ("loop over a range with a trip count fixed when gradc compiles (range(T), T a Python int) and "
                 "append once per iteration, or fill an array of the largest size instead (out = np.zeros(T_max), "
                 "then out[k] = value)")


def _first_and_trips(iterable):
    """``(first item, number of items)`` of a loop's iterable (range, traced array, its zip or enumerate)."""
    if isinstance(iterable, TracedItems):
        n = _rows(iterable.arrays[0])
        first = tuple(a[0] for a in iterable.arrays) if iterable.kind == "zip" else \
            (iterable.start, iterable.arrays[0][0])
        return first, n
    if isinstance(iterable, range):
        return (iterable.start if len(iterable) else None), len(iterable)
    return iterable[0], _rows(iterable)


def _python_items(iterable) -> list:
    """The items of a loop's iterable, one by one (the loop run in Python)."""
    if isinstance(iterable, TracedItems):
        n = _rows(iterable.arrays[0])
        if iterable.kind == "zip":
            return [tuple(a[k] for a in iterable.arrays) for k in range(n)]
        return [(iterable.start + k, iterable.arrays[0][k]) for k in range(n)]
    if isinstance(iterable, range):
        return list(iterable)
    return [iterable[k] for k in range(_rows(iterable))]


def _run_for(iterable, body, init, kw, outputs):
    """``body(item, carry)`` over ``iterable`` as a loop primitive; with ``outputs`` the body returns
    ``(carry, y)`` and the result is ``(carry, stacked ys)``."""
    if isinstance(iterable, Traced) or _numeric_rows(iterable):
        if isinstance(iterable, Traced) and iterable.aval.shape == ():
            raise TraceError("iteration over a 0-d array", where=kw["where"], hint="a 0-d value has no items")
        if outputs:
            return control.scan(lambda c, x: body(x, c), init, iterable, **kw)
        return control.scan(lambda c, x: (body(x, c), ()), init, iterable, **kw)[0]  # no per-step outputs
    if isinstance(iterable, TracedItems) and iterable.kind == "zip":
        if outputs:
            return control.scan(lambda c, xs: body(tuple(xs), c), init, iterable.arrays, **kw)
        return control.scan(lambda c, xs: (body(tuple(xs), c), ()), init, iterable.arrays, **kw)[0]
    if isinstance(iterable, TracedItems):
        array, start = iterable.arrays[0], iterable.start
        if outputs:
            return fori_scan(0, _rows(array), 1, lambda i, c: body((i + start, array[i]), c), init, **kw)
        return control.fori_loop(0, _rows(array), lambda i, c: body((i + start, array[i]), c), init, **kw)
    if outputs:
        return fori_scan(iterable.start, iterable.stop, iterable.step, body, init, **kw)
    return control.fori_loop(iterable.start, iterable.stop, body, init, step=iterable.step, **kw)


def while_stmt(cond_fn, body_fn, init, names, where, unset=(), collected=()):
    """Run a captured ``while`` in functional form: ``cond_fn(carry)``, ``body_fn(carry) -> carry``.

    >>> while_stmt(lambda c: c[0] < 10, lambda c: (c[0] * 3,), (1,), ("k",), "f.py:1")
    (27,)
    """
    _check_defined(init, names, where, "loop", (), unset)
    _RETURN_ONLY.append(frozenset(unset))
    try:
        return _while(cond_fn, body_fn, init, names, where, collected)
    finally:
        _RETURN_ONLY.pop()


def _while(cond_fn, body_fn, init, names, where, collected):
    positions = collecting_loop.collecting(init, names, collected)
    if positions:
        raise TraceError(f"the `while` loop on traced values appends to {', '.join(repr(names[k]) for k in positions)}"
                         ": its trip count, and so the list's length, is known only when the code runs", where=where,
                         hint=_COLLECT_HINT)

    def test(carry):
        p = cond_fn(carry)
        _scalar_predicate(p, where, "a `while` condition")
        return p
    return control.while_loop(test, body_fn, init, names=tuple(names), where=where)


def _branches(true_fn, false_fn, ops, outs, where, guard=False):
    """Branch functions taking only the defined operands, refusing an output left undefined."""
    defined = [k for k, v in enumerate(ops) if not isinstance(v, Undefined)]

    def wrap(fn):
        def branch(*vals):
            full = list(ops)
            for k, v in zip(defined, vals):
                full[k] = v
            try:
                result = fn(*full)
            except GradcError:
                raise
            except Exception as e:  # an error in a branch that may never run
                if checks.user_raise_site(e) is not None:
                    raise  # the user's raise statement: a run-time check (gradc.trace.checks)
                raise _raised_in_branch(e, where) from e
            if outs is None:
                if result is None:
                    raise TraceError("a branch of an `if` on a traced value ends without returning a value, while the "
                                     "function returns one", where=where, hint="return a value on every path")
                return result
            for value, name in zip(result, outs):
                if isinstance(value, Undefined) and not guard and name not in _return_only_names():
                    raise TraceError(f"{name!r} is assigned in only one branch of an `if` on a traced value and used "
                                     "after it", where=where, hint=f"initialise {name} before the `if`")
            return result
        return branch
    return wrap(true_fn), wrap(false_fn), [ops[k] for k in defined]


_DATA_RAISE_HINT = ("a `raise` statement of the function itself becomes a check the compiled code runs; an error of an "
                    "operation does not: make the branch valid for every input gradc may trace it with, or check the "
                    "condition in plain Python before calling what gradc compiled")


def _raised_in_branch(error, where):
    """The TraceError for ``error`` (not the user's ``raise``) raised while tracing a branch of an ``if`` on a traced
    value (``where``)."""
    at = _user_frame(error.__traceback__)
    what = f"{type(error).__name__}({str(error)!r})" if str(error) else type(error).__name__
    return TraceError(f"a branch of the `if` on a traced value at {where} fails with {what} while gradc traces it: "
                      "gradc traces both branches, since which one runs is known only when the compiled code runs",
                      where=at or where, hint=_DATA_RAISE_HINT)


def _user_frame(tb):
    """``file:line`` of the innermost frame of ``tb`` outside gradc and NumPy."""
    import os

    from gradc.errors import _SKIP_DIRS, _display_path
    found = None
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if not os.path.abspath(path).startswith(_SKIP_DIRS) and not path.startswith("<frozen"):
            found = f"{_display_path(path)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def assert_(test, message, source: str, where):
    """``assert test, message()``: Python's own on a concrete ``test``; a TraceError on a traced one.

    >>> assert_(True, lambda: "never", "x > 0", "f.py:1")
    >>> assert_(0, lambda: "no", "x > 0", "f.py:1")
    Traceback (most recent call last):
    AssertionError: no
    """
    if isinstance(test, Traced):  # checked when the compiled code runs
        checks.assert_traced(test, message, source, where)
        return
    if not test:
        text = message()
        raise AssertionError(text) if text is not None else AssertionError


def if_stmt(pred, true_fn, false_fn, ops, names, outs, where, in_place=(), guard=False):
    """Run a captured ``if`` in functional form: each branch takes ``ops`` (the values of ``names``) and returns
    the values of ``outs`` (``outs=None``: the branches return the function's result).

    ``guard``: the ``if not flag:`` of a loop's functional form, around the statements after a possible jump; a
    variable of the loop's carry it leaves unset (one only a `return` reads) takes the other branch's type.

    ``in_place``: the names among ``outs`` kept only because a branch changes their array in place (another
    name may see it, ``gradc.trace.carried_writes``); one that holds no traced array before the ``if`` is
    left as it was.

    >>> if_stmt(False, lambda y: (y + 1,), lambda y: (y - 1,), (5,), ("y",), ("y",), "f.py:1")
    (4,)
    """
    _scalar_predicate(pred, where, "an `if`")
    before = dict(zip(names, ops))
    dropped = [k for k, n in enumerate(outs or ()) if n in in_place and not isinstance(before.get(n), Traced)]
    if dropped:
        kept = [k for k in range(len(outs)) if k not in dropped]
        true_fn, false_fn = _select(true_fn, kept), _select(false_fn, kept)
        result = if_stmt(pred, true_fn, false_fn, ops, names, tuple(outs[k] for k in kept), where)
        full = [before.get(n, Undefined(n)) for n in outs]
        for k, v in zip(kept, result):
            full[k] = v
        return tuple(full)
    t, f, operands = _branches(true_fn, false_fn, ops, outs, where, guard)
    op_names = tuple(n for n, v in zip(names, ops) if not isinstance(v, Undefined))
    return control.cond(pred, t, f, *operands, names=op_names, where=where)


def _select(fn, kept):
    """A branch function returning only the outputs at positions ``kept``."""
    def selected(*args):
        result = fn(*args)
        return tuple(result[k] for k in kept)
    return selected


def ifexp(pred, true_thunk, false_thunk, where=None):
    """``true_thunk() if pred else false_thunk()``; a ``cond`` when ``pred`` is traced.

    >>> ifexp(0, lambda: "yes", lambda: "no")
    'no'
    """
    if not isinstance(pred, Traced):
        return true_thunk() if pred else false_thunk()
    _scalar_predicate(pred, where, "a conditional expression (`a if p else b`)")
    return control.cond(pred, true_thunk, false_thunk, where=where)


slice_ = slice  # ``a[lo:hi]`` rewritten as ``rt.item(a, rt.slice_(lo, hi, None))`` (a user's ``slice`` may differ)


def item(value, key):
    """``value[key]``; a NumPy array or a list of numbers (a constant of the trace) read at a traced index is
    lifted into the trace first, so a loop reading a table at its counter stays a loop.

    >>> item([10, 20, 30], 1), item(np.arange(4.0), slice_(1, None, None))
    (20, array([1., 2., 3.]))
    """
    if contains_traced(key) and (type(value) is np.ndarray or _numbers(value)):
        like = next(k for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, Traced))
        value = lift(np.asarray(value), like)
    elif isinstance(value, (list, tuple)) and isinstance(key, Traced):  # a traced choice among same-shaped values
        from gradc.trace.array_like_dispatch import list_at
        chosen = list_at(value, key)
        if chosen is not None:
            return chosen
    return value[key]


def _numbers(value) -> bool:
    """A list or tuple of Python (or NumPy) real numbers: read at a traced index as the array of them."""
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in value)


def max_(*values, where=None):
    """Python's ``max(a, b, ...)``; on traced scalars ``np.where(b > a, b, a)`` in turn (the first of equal
    values, as Python's; the derivative follows the value chosen).

    >>> max_(1, 3.5, 2)
    3.5
    """
    return _choose(values, max, lambda a, b: b > a, where)


def min_(*values, where=None):
    """Python's ``min(a, b, ...)``; on traced scalars ``np.where(b < a, b, a)`` in turn.

    >>> min_(1, 3.5, 2)
    1
    """
    return _choose(values, min, lambda a, b: b < a, where)


def _builtin_choice(builtin, better):
    """``max``/``min`` with Python's whole signature, choosing among traced scalars as :func:`max_` does: what
    code gradc does not rewrite (a lambda) sees in place of the builtin."""
    def choice(*args, **kwargs):
        values = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        if kwargs or not any(isinstance(v, Traced) for v in values):  # key= / default=: Python's own
            return builtin(*args, **kwargs)
        return _choose(tuple(values), builtin, better, user_location())
    choice.__name__ = choice.__qualname__ = builtin.__name__
    choice.__doc__ = builtin.__doc__
    return choice


CHOICES = {"max": _builtin_choice(max, lambda a, b: b > a), "min": _builtin_choice(min, lambda a, b: b < a)}


def _choose(values, builtin, better, where):
    if not any(isinstance(v, Traced) for v in values):
        return builtin(*values)
    for v in values:
        shape = v.aval.shape if isinstance(v, Traced) else np.shape(v)
        if shape != ():
            name = builtin.__name__
            raise TraceError(f"{name}() of a traced array of shape {tuple(shape)}: Python's {name} compares whole "
                             "values, and an array's truth value is ambiguous", where=where,
                             hint=f"for the elementwise {name}imum use np.{name}imum(a, b); for the "
                                  f"{'largest' if name == 'max' else 'smallest'} entry np.{name}(x)")
    best = values[0]
    for v in values[1:]:
        best = np.where(better(best, v), v, best)
    return best


_STATIC_ONLY = {
    "jump": ("a `break` or `continue` under a condition on a traced value, in a loop that runs in Python (over a "
             "list or another Python iterable, or indexing / appending to a Python list, tuple or dict)",
             "loop over range(...) or a NumPy array and keep the values in arrays, so the loop itself is traced"),
    "while": ("the condition of this `while` is a traced value, in a loop that runs in Python (it indexes or "
              "appends to a Python list, tuple or dict, whose changes a traced loop would lose)",
              "bound the loop (for k in range(T), T a Python int; a list appended there becomes the loop's "
              "stacked outputs), or keep the values in an array (out = np.zeros(n), then out[k] = ... with a "
              "counter k)"),
    "return": ("a `return` under a condition on a traced value, inside a loop or a `try`/`with` block",
               "assign the result to a variable (initialised before), leave with `break`, and return it at the end"),
}


def static_test(value, why, where):
    """``value``, the test of an ``if`` kept as Python's own (its branches ``break``/``continue`` a Python loop or
    ``return`` from inside a loop); a TraceError saying so when it is traced.

    >>> static_test(3 > 2, "jump", "f.py:1")
    True
    """
    if isinstance(value, Traced):
        message, hint = _STATIC_ONLY[why]
        raise TraceError(message, where=where, hint=hint)
    return value


def refuse(message, where, hint):
    """Raise the TraceError for a statement gradc cannot run in functional form.

    >>> refuse("no", "f.py:3", "do this")
    Traceback (most recent call last):
    gradc.errors.TraceError: no (f.py:3); do this
    """
    raise TraceError(message, where=where, hint=hint)


def comprehension(item, iterable, current, indexed, tables, where):
    """``[item(x) for x in iterable]``: on traced values, the ``for`` loop appending ``item(x)`` that the
    comprehension stands for, kept as a loop with the items its stacked outputs (``capture_comprehensions``).

    >>> comprehension(lambda i: i * i, range(4), (), (), (), "f.py:1")
    [0, 1, 4, 9]
    """
    if loop_traced(iterable, current, indexed, tables) and not (isinstance(iterable, range) and len(iterable) < 2):
        name = "items"  # the list has no name of its own: errors and emitted code call it so
        return for_stmt(iterable, lambda x, carry: (append_(carry[0], item(x)),), ([],), (name,), where,
                        collected=(name,))[0]
    return [item(x) for x in _python_iterable(iterable)]


def _python_iterable(iterable):
    """What Python's comprehension iterates: a traced array's rows, or the items of enumerate_/zip_ over them."""
    if isinstance(iterable, TracedItems):
        return _python_items(iterable)
    return iterable
