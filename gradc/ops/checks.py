"""Run-time checks: ``check_raise``, the user's ``raise`` or ``assert`` on a traced condition, kept in the code.

``if np.any(x < 0): raise ValueError("x must be >= 0")`` and ``assert np.all(x > 0), "need
positive x"`` test values known only when the compiled code runs. The front end
(``gradc.trace.checks``) records each as one equation::

    t3: () = check_raise t2 args=('x must be >= 0',) exception='ValueError' where='f.py:3'

Its operand is a ``bool[]``: when it is true at run time the emitted code raises
``exception(*args)``, exactly the exception the user's function raises (class and
message), and does nothing otherwise. ``exception`` is one of :data:`EXCEPTIONS`, Python's
builtin exception classes the emitted code can name without importing anything of the
user's; ``args`` are Python constants (str, int, float, bool, None).

The equation's result is an empty tuple (a token nobody reads): the check has an effect,
no value. So that passes keep it where dead code goes, ``has_effects`` says which
equations (or sub-graphs holding them) must stay; the reverse sweep does not repeat a
check (the forward sweep ran it first), and a check has no derivative (``nondiff``).

>>> import numpy as np
>>> OPS["check_raise"].impl(np.bool_(False), exception="ValueError", args=("negative",), where="f.py:3")
()
>>> OPS["check_raise"].impl(np.bool_(True), exception="ValueError", args=("negative",), where="f.py:3")
Traceback (most recent call last):
ValueError: negative
"""
from __future__ import annotations

import ast
import builtins

import numpy as np

from gradc.ir.graph import Const, Graph, subgraphs
from gradc.ir.registry import OPS, bind, defop  # noqa: F401  (OPS: the doctest)
from gradc.ir.types import TensorType, TupleType
from gradc.ops import c_spell, spell

# the exception classes a check may raise: builtins (the emitted module names them without an import), and
# NumPy's LinAlgError (spelled np.linalg.LinAlgError)
_BUILTIN = ("ArithmeticError", "AssertionError", "AttributeError", "Exception", "FloatingPointError", "IndexError",
            "KeyError", "LookupError", "NotImplementedError", "OverflowError", "RuntimeError", "TypeError",
            "ValueError", "ZeroDivisionError")
EXCEPTIONS = {name: getattr(builtins, name) for name in _BUILTIN}
EXCEPTIONS["LinAlgError"] = np.linalg.LinAlgError
_SPELLED = {"LinAlgError": "np.linalg.LinAlgError"}
EFFECT_OPS = frozenset({"check_raise"})
TOKEN = TupleType(())
_BOOL = TensorType((), "bool")


def exception_class(name: str) -> type:
    """The class a check names.

    >>> exception_class("ZeroDivisionError")
    <class 'ZeroDivisionError'>
    """
    return EXCEPTIONS[name]


def exception_name(cls) -> str | None:
    """The name a check gives ``cls``, or None when a check cannot raise it (not one of :data:`EXCEPTIONS`).

    >>> exception_name(ValueError), exception_name(type("Mine", (ValueError,), {}))
    ('ValueError', None)
    """
    for name, known in EXCEPTIONS.items():
        if cls is known:
            return name
    return None


def has_effects(graph_or_eqn) -> bool:
    """Whether an equation is a check, or holds a sub-graph with one (at any depth); for a graph: any equation.

    >>> has_effects(Graph("f", [], [], []))
    False
    """
    pending = [graph_or_eqn]
    seen: set = set()  # a helper's body, called from many places, is read once
    while pending:  # sub-graphs nest as deep as the user's loops: no recursion
        item = pending.pop()
        if isinstance(item, Graph):
            if id(item) in seen:
                continue
            seen.add(id(item))
            pending.extend(item.eqns)
        elif item.op in EFFECT_OPS:
            return True
        else:
            pending.extend(subgraphs(item))
    return False


def is_never(eqn) -> bool:
    """A check whose condition is the constant False (it can never raise)."""
    return eqn.op in EFFECT_OPS and isinstance(eqn.inputs[0], Const) and not bool(eqn.inputs[0].value)


def is_always(eqn) -> bool:
    """A check whose condition is the constant True (a ``raise`` every run of its branch reaches)."""
    return eqn.op in EFFECT_OPS and isinstance(eqn.inputs[0], Const) and bool(eqn.inputs[0].value)


def _infer(types, params):
    if types[0] != _BOOL:
        raise TypeError(f"check_raise: the condition must be a bool[], not {types[0]}")
    if params.get("exception") not in EXCEPTIONS:
        raise TypeError(f"check_raise: {params.get('exception')!r} is not an exception class a check can raise")
    if not isinstance(params.get("args"), tuple) or not all(
            a is None or type(a) in (str, int, float, bool) for a in params["args"]):
        raise TypeError("check_raise: args must be a tuple of Python constants (str, int, float, bool, None)")
    return TOKEN


def _impl(pred, *, exception, args, where):
    if bool(pred):
        raise EXCEPTIONS[exception](*args)
    return ()


def raise_statement(params, bare_cause: bool = False) -> ast.stmt:
    """``raise ValueError('...')``: the message is an ``ast.Constant`` (``ast.unparse`` quotes and escapes it).

    ``bare_cause``: ``from None`` (a NumPy twin runs inside its fast twin's ``except``: no chained traceback).

    >>> print(ast.unparse(raise_statement({"exception": "ValueError", "args": ('say "hi"\\n',)})))
    raise ValueError('say "hi"\\n')
    """
    cls = spell.dotted(_SPELLED.get(params["exception"], params["exception"]))
    call = ast.Call(cls, [_argument(a) for a in params["args"]], [])
    return ast.Raise(call, ast.Constant(None) if bare_cause else None)


def _argument(value) -> ast.expr:
    """A constant argument as Python source (``float('nan')`` where a literal cannot say it)."""
    if isinstance(value, float) and not np.isfinite(value):
        return ast.Call(ast.Name("float", ast.Load()), [ast.Constant(repr(value))], [])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return spell.literal(value)
    return ast.Constant(value)


def _np_spelling(args, params, out, target):
    """``if <condition>: raise E(...)`` (a bare ``raise`` when the condition is the constant True)."""
    statement = raise_statement(params)
    if isinstance(args[0], ast.Constant) and args[0].value is True:
        return [statement]
    return [ast.If(args[0], [statement], [])]


def _batch(pred, batched, **params):
    """A batch raises when any of its elements would (the first check that holds for any element)."""
    from gradc.ops import elementwise as ew
    from gradc.ops import reduce as red
    if batched[0]:
        pred = ew.greater(red.sum_(ew.astype(pred, "i64")), np.int64(0))
    bind("check_raise", pred, **params)
    return []


defop("check_raise", infer=_infer, impl=_impl, nondiff=True, np=_np_spelling, math=_np_spelling,
      c=c_spell.loop("check_raise"), batch=_batch,  # C: returns a status the Python side raises (backends/c/checks)
      doc="raise exception(*args) when the condition holds at run time (the user's raise or assert on traced "
          "values); an effect, no value, no derivative")


def check(pred, exception: str, args: tuple, where: str):
    """Record (or, on concrete values, run) the check that ``pred`` is false.

    >>> check(np.bool_(False), "ValueError", ("bad",), "f.py:1")
    ()
    """
    return bind("check_raise", pred, exception=exception, args=tuple(args), where=where)


__all__ = ["EFFECT_OPS", "EXCEPTIONS", "TOKEN", "check", "exception_class", "exception_name", "has_effects",
           "is_always", "is_never", "raise_statement"]


def masked(graph: Graph) -> Graph:
    """``graph`` with one more input, ``mask: bool[]`` (last), that each of its checks also needs to raise.

    A batched ``if`` whose condition differs across the batch runs both branches for every element (and a
    while loop whose condition does keeps running the finished elements): an element raises only where its
    own branch (or its own loop) runs, so each check there is ``check_raise (c and mask)``. A check inside a
    nested loop or branch of ``graph`` is refused (MissingRuleError): its mask would have to reach it.

    >>> masked(Graph("f", [], [], [])).inputs
    [mask: bool[]]
    """
    from gradc.errors import MissingRuleError
    from gradc.ir.graph import Eqn, Var
    mask = Var("mask", _BOOL)
    eqns, k = [], 0
    taken = {e.out.name for e in graph.eqns} | {v.name for v in graph.inputs}
    for eqn in graph.eqns:
        if eqn.op in EFFECT_OPS:
            name = f"{eqn.out.name}_mask"
            while name in taken:
                k += 1
                name = f"{eqn.out.name}_mask{k}"
            taken.add(name)
            both = Var(name, _BOOL)
            eqns.append(Eqn("logical_and", (eqn.inputs[0], mask), {}, both))
            eqns.append(Eqn(eqn.op, (both,), eqn.params, eqn.out))
        elif has_effects(eqn):
            raise MissingRuleError(f"cannot batch a check (a raise or assert at {_first_where(eqn)}) nested in a loop "
                                   "or branch whose condition differs across the batch",
                                   hint="move the check out of the inner loop or branch, or batch with a Python loop")
        else:
            eqns.append(eqn)
    return graph.replace(inputs=list(graph.inputs) + [mask], eqns=eqns, params=list(graph.params) + ["mask"])


def _first_where(eqn) -> str:
    pending = [eqn]
    while pending:
        item = pending.pop()
        if item.op in EFFECT_OPS:
            return item.params.get("where", "?")
        pending.extend(e for g in subgraphs(item) for e in g.eqns)
    return "?"
