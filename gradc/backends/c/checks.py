"""Run-time checks in C: ``check_raise`` returns a status the Python side turns into the user's exception.

A function holding a check returns ``int`` (as one holding a bounded loop does,
``control.loop_limits``): 0 when it ran to the end, or the check's own status (1, 2, ...)
as soon as its condition holds, from wherever it stands (a loop body, a branch). The
extension's glue and the ctypes wrapper raise ``exception(*args)`` for that status: the
exception class and message of the user's ``raise``/``assert``. The message never enters
the C source as a string: the code and the header name it in comments (``c_comment``).

>>> import numpy as np, gradc
>>> from gradc.trace import trace
>>> from gradc.backends.c.emit import emit_function
>>> def f(x):
...     assert x > 0.0, "need x > 0"
...     return x * 2.0
>>> print(emit_function(trace(f, 1.0), "f", ["value"])[1])  # doctest: +ELLIPSIS
int f(const double *restrict x, double *restrict value)
{
    /* t0 = greater x 0.0
     * t1 = logical_not t0 */
    const unsigned char t1 = (x[0] > 0.0) == 0;
    /* t2 = check_raise t1: raise AssertionError('need x > 0') (<doctest ...>:2), status 1 */
    if (t1) return 1;
    /* t3 = mul x 2.0 */
    value[0] = 2.0*x[0];
    return 0;
}
"""
from __future__ import annotations

from gradc.backends.escape import c_comment
from gradc.ops.checks import is_always, is_never


def raise_text(params) -> str:
    """``raise ValueError('...')`` as the user wrote it (for comments and the header; escape before use).

    >>> raise_text({"exception": "ValueError", "args": ("x < 0",), "where": "f.py:3"})
    "raise ValueError('x < 0') (f.py:3)"
    """
    args = ", ".join(repr(a) for a in params["args"])
    return f"raise {params['exception']}({args}) ({params['where']})"


def check_limit(eqn) -> tuple | None:
    """``(what, hint)`` of a check that can raise (its status is numbered with the loops'), else None."""
    if eqn.op != "check_raise" or is_never(eqn):
        return None
    return raise_text(eqn.params), "the exception of the user's raise or assert"


class CheckLowerings:
    """``op_check_raise``, mixed into ``FunctionEmitter``."""

    def op_check_raise(self, e):
        limit = self.limit_of(e)
        self.emit(f"/* {c_comment(f'{e.out.name} = check_raise {_atom_text(e.inputs[0])}: {raise_text(e.params)}')}"
                  f", status {limit.code} */")
        if is_always(e):
            self.emit(f"return {limit.code};")
            return
        self.emit(f"if ({self.atom_loc(e.inputs[0]).at(())}) return {limit.code};")


def _atom_text(atom) -> str:
    return getattr(atom, "name", None) or repr(atom.value.item())
