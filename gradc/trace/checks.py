"""The user's ``raise`` and ``assert`` on traced values, as run-time checks (``gradc.ops.checks``).

gradc traces both branches of an ``if`` on a traced value. A branch whose tracing ends in
the user's own ``raise`` statement (``if np.any(x < 0): raise ValueError("x must be >= 0")``,
in the function or a function it calls) is a branch that raises whenever it runs: its
sub-graph keeps what it did before (earlier checks) and ends with an unconditional
``check_raise``; its results are never read. An ``if`` with nothing else in it becomes one
``check_raise`` on its condition. An ``assert`` on a traced value is a check of ``not test``
with ``AssertionError(message)``.

What a check can hold is what the emitted code can say without the user's objects: an
instance (or class) of one of ``gradc.ops.checks.EXCEPTIONS`` whose arguments are Python
constants. Refused at the ``raise``'s line: another exception class (the emitted module
cannot import it), a message built from a traced value (its text is known only when the
code runs), a bare ``raise`` (re-raise) and a ``raise`` of something that is not an
exception. An ``if`` whose every branch raises is refused where no enclosing branch takes
it (the function would never return a value).

A ``raise`` on a static condition (shapes, Python values) is Python's own: it runs while
gradc traces, as before. So does one that a branch reaches only because a value is traced
(``if not isinstance(x, np.ndarray): raise TypeError``): write such tests on static facts.

>>> user_raise_site(ValueError("not raised")) is None
True
"""
from __future__ import annotations

import dis
import os

import numpy as np

from gradc.errors import _SKIP_DIRS, TraceError, _display_path, _in_stdlib
from gradc.ir.atoms import Const
from gradc.ir.builder import Traced
from gradc.ops import checks as ops_checks
from gradc.ops import elementwise as ew
from gradc.trace.carried_writes import ACTIVE

_BOOL = ops_checks._BOOL
_NOT_AN_EXCEPTION = "exceptions must derive from BaseException"
_HINT = ("raise a builtin exception with a constant message, e.g. raise ValueError('x must be >= 0'), or check the "
         "condition in Python before calling what gradc compiled")


class Raised:
    """What a branch gives when its tracing ended in the user's ``raise`` (at ``where``)."""

    __slots__ = ("error", "where")

    def __init__(self, error, where):
        self.error, self.where = error, where

    def __repr__(self):
        return f"<raises {type(self.error).__name__} at {self.where}>"


class AlwaysRaises(TraceError):
    """Every branch of an ``if`` on a traced value raises: the ``if`` (recorded) never completes."""


def _user_file(path: str) -> bool:
    full = os.path.abspath(path)
    return not full.startswith(_SKIP_DIRS) and not path.startswith("<frozen") and not _in_stdlib(full) and not any(
        part in ("site-packages", "dist-packages") for part in full.split(os.sep))


def _innermost(tb):
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _raise_instruction(tb):
    """The ``RAISE_VARARGS`` instruction ``tb``'s frame stopped at, or None (the error came from elsewhere)."""
    for ins in dis.get_instructions(tb.tb_frame.f_code):
        if ins.offset == tb.tb_lasti:
            return ins if ins.opname == "RAISE_VARARGS" else None
    return None


def user_raise_site(error) -> str | None:
    """``file:line`` of the user's ``raise`` statement that raised ``error``; None when something else raised it
    (gradc, NumPy, a library, or Python itself inside an operation).

    >>> def f():
    ...     raise ValueError("no")
    >>> try:
    ...     f()
    ... except ValueError as e:
    ...     print(user_raise_site(e).rsplit(":", 1)[1])
    2
    """
    if isinstance(error, AlwaysRaises):
        return error.where
    tb = _innermost(getattr(error, "__traceback__", None))
    if tb is None or not _user_file(tb.tb_frame.f_code.co_filename) or _raise_instruction(tb) is None:
        return None
    return f"{_display_path(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def _site(error) -> str | None:
    """``file:line`` of the innermost user frame of ``error``'s traceback."""
    tb, found = getattr(error, "__traceback__", None), None
    while tb is not None:
        if _user_file(tb.tb_frame.f_code.co_filename):
            found = f"{_display_path(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _constant(value, what, where):
    if value is None or type(value) in (str, int, float, bool):
        if isinstance(value, str) and ("Tracer<" in value or "Traced(" in value):
            raise _traced_message(what, where)
        return value
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, Traced):
        raise _traced_message(what, where)
    raise TraceError(f"{what} has an argument of type {type(value).__name__} ({value!r:.60}); the emitted code "
                     "keeps only Python constants (str, int, float, bool, None)", where=where, hint=_HINT)


def _traced_message(what, where):
    return TraceError(f"the message of {what} is built from a traced value (an f-string, str() or format() of an "
                      "array the function computes): its text is known only when the compiled code runs",
                      where=where, hint="give the exception a constant message (raise ValueError('x must be >= 0')), "
                                        "or check and format the values in Python before calling what gradc compiled")


def check_params(error, where) -> dict:
    """The params of the check that raises ``error`` (the user's exception at ``where``), or a clear TraceError."""
    tb = _innermost(error.__traceback__)
    ins = _raise_instruction(tb) if tb is not None else None
    if ins is not None and ins.arg == 0:
        raise TraceError("a bare `raise` (re-raise) under a condition on a traced value: there is no exception to "
                         "raise again when the compiled code runs", where=where, hint=_HINT)
    if type(error) is TypeError and str(error) == _NOT_AN_EXCEPTION:
        raise TraceError("`raise` of a value that is not an exception (Python raises TypeError: exceptions must "
                         "derive from BaseException)", where=where, hint=_HINT)
    name = ops_checks.exception_name(type(error))
    what = f"the {type(error).__name__} raised here"
    if name is None:
        raise TraceError(f"{type(error).__qualname__} is not one of the exception classes a compiled check can raise "
                         f"({', '.join(sorted(ops_checks.EXCEPTIONS))}): the emitted code names only Python's "
                         "builtin exceptions (and NumPy's LinAlgError), never the user's classes", where=where,
                         hint="raise one of those classes (a class of your own can derive from it and be caught as "
                              "it), or check the condition in Python before calling what gradc compiled")
    args = tuple(_constant(a, what, where) for a in error.args)
    return {"exception": name, "args": args, "where": where}


def _builder(like=None):
    """The builder a check records in: the innermost body or branch being traced (a check in a loop stays in
    it: hoisted out, it would run when the loop runs no iteration)."""
    if ACTIVE:
        return ACTIVE[-1]
    if like is None:
        raise TraceError("internal: a check outside any trace")
    return like.builder


def _atom_in(builder, value: Traced):
    if value.builder is builder:
        return value.atom
    if not builder.encloses(value.builder):
        from gradc.ir.builder import raise_escaped
        raise_escaped()
    return builder.capture(value.builder, value.atom)


def record(builder, pred_atom, params) -> None:
    """Append ``check_raise pred_atom`` to ``builder``."""
    builder.add("check_raise", (pred_atom,), params, ops_checks.TOKEN)


def record_raise(error, where) -> Raised:
    """The branch being traced raised the user's ``error`` at ``where``: record the unconditional check there."""
    if not isinstance(error, AlwaysRaises):  # a nested ``if`` whose branches all raise is recorded already
        record(_builder(), Const(np.bool_(True)), check_params(error, where))
    return Raised(error, where)


def branch(fn):
    """``fn`` (a branch of a traced ``if``) giving :class:`Raised` where its tracing ends in the user's ``raise``."""
    def traced_branch(*args):
        try:
            return fn(*args)
        except SystemExit as error:  # sys.exit() in a branch that may never run: not while gradc traces
            raise TraceError(f"a branch of an `if` on a traced value exits (SystemExit({error.code!r})) while gradc "
                             "traces it: gradc traces both branches", where=user_raise_site(error) or _site(error),
                             hint=_HINT) from None
        except Exception as error:  # noqa: BLE001  (only the user's raise statements are kept; others go on)
            where = user_raise_site(error)
            if where is None:
                raise
            return record_raise(error, where)
    return traced_branch


def _truth(test, where, source):
    """``test`` as a traced ``bool[]`` (a scalar: an assert on an array is ambiguous, as in NumPy)."""
    if test.aval.shape != ():
        raise TraceError(f"`assert {source}` tests a traced array of shape {test.aval.shape}, not one truth value",
                         where=where, hint="reduce it with np.all(...) or np.any(...)")
    if test.aval.dtype != "bool":
        test = ew.not_equal(test, np.zeros((), test.aval.np_dtype))
    return test


def assert_traced(test, message, source: str, where: str) -> None:
    """``assert test, message()`` on a traced ``test``: a check of ``not test`` raising AssertionError."""
    test = _truth(test, where, source)
    text = message()
    what = f"`assert {source}`"
    args = () if text is None else (_constant(text, what, where),)
    builder = _builder(test)
    failed = ew.logical_not(test)
    record(builder, _atom_in(builder, failed), {"exception": "AssertionError", "args": args, "where": where})


def always_raises(where, errors) -> AlwaysRaises:
    """The error of an ``if`` at ``where`` whose branches all raise (``errors``: theirs)."""
    what = " and ".join(sorted({f"{type(e).__name__}" for e in errors}))
    return AlwaysRaises(f"every branch of the `if` on a traced value raises ({what}): the function never returns a "
                        "value", where=where, hint="raise in one branch only (if cond: raise ...), or raise "
                                                   "unconditionally where the function cannot go on")


__all__ = ["AlwaysRaises", "Raised", "always_raises", "assert_traced", "branch", "check_params", "record",
           "record_raise", "user_raise_site"]


def settle_branches(builder, pred_atom, subs, flatten, zero_like):
    """After tracing an ``if``'s branches (``subs``: false, true): give a branch that raised the other's results
    (``zero_like(branch builder, leaf, k)``: zeros never read) so the ``cond`` has one type. Returns ``(done,
    value)``: ``done`` when the ``if`` became a single ``check_raise`` (``value``: its results), else the caller
    records the ``cond`` as usual (and then calls :func:`finish`)."""
    raised = [isinstance(s.result, Raised) for s in subs]
    if not any(raised):
        return False, None
    if all(raised):
        for s in subs:
            s.result = ()
        return False, None
    k = raised.index(True)
    other = subs[1 - k]
    leaves, rebuild = flatten(other.result)
    eqns = subs[k].builder.eqns
    if not leaves and not other.builder.eqns and eqns and ops_checks.is_always(eqns[-1]) and not any(
            ops_checks.has_effects(e) for e in eqns[:-1]):
        for s in subs:  # `if cond: raise E(...)` and nothing else: one check on the condition
            s.builder.closed = True
        pred = Traced(builder, pred_atom)
        failed = pred if k == 1 else ew.logical_not(pred)
        record(builder, _atom_in(builder, failed), dict(eqns[-1].params))
        return True, rebuild([])
    subs[k].result = rebuild([zero_like(subs[k].builder, leaf, j) for j, leaf in enumerate(leaves)])
    return False, None


def finish(subs_raised: list, where) -> None:
    """Raise :class:`AlwaysRaises` when every branch raised (the ``cond`` holding their checks is recorded)."""
    if subs_raised and all(isinstance(r, Raised) for r in subs_raised):
        raise always_raises(where, [r.error for r in subs_raised])
