"""NumPy's bitwise ops on integers and booleans: ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``.

On booleans ``&``, ``|``, ``^`` and ``~`` are logic (``logical_and``, ``logical_or``,
``not_equal``, ``logical_not``); on integers they act on the two's-complement bits. A float operand
is refused, as NumPy refuses it. All have zero derivative (``nondiff``). C spellings are C's
operators (bracketed: they bind more loosely than comparisons), shifts by ``gradc_left_shift_i64``
and ``gradc_right_shift_i64`` (NumPy's result for a shift outside ``[0, 64)``, where C's is undefined).

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> import numpy as np
>>> bitwise_and(np.array([7, -1]), 3), invert(np.array([True, False]))
(array([3, 3]), array([False,  True]))
"""
from __future__ import annotations

import functools

import numpy as np

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ir.types import INT_DTYPES
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.values import result_dtype


@functools.lru_cache(maxsize=None)
def _infix_class(symbol):
    sp = c_spell.sym().sp

    def _ccode(self, printer):
        a, b = (printer._print(x) if x.is_Atom else f"({printer._print(x)})" for x in self.args)
        return f"({a} {symbol} {b})"

    return type(f"c_infix_{symbol}", (sp.Function,), {"nargs": 2, "_ccode": _ccode, "is_integer": True,
                                                       "is_real": True})


def _infix_c(symbol):
    return c_spell.scalar(lambda a, p, ti, to: _infix_class(symbol)(a[0], a[1]))


def _invert_c(a, p, ti, to):
    s = c_spell.sym()
    return s.sp.Not(a[0]) if ti[0].dtype == "bool" else -a[0] - 1  # ~k == -k - 1 in two's complement


def _shift_c(name):
    return c_spell.scalar(lambda a, p, ti, to: c_spell.sym().int_call(name, a[0], a[1]))


for _name, _impl, _symbol in [("bitwise_and", np.bitwise_and, "&"), ("bitwise_or", np.bitwise_or, "|"),
                              ("bitwise_xor", np.bitwise_xor, "^")]:
    defop(_name, infer=_same_types, impl=_impl, nondiff=True, elementwise=True,
          doc=f"bits of integers ({_symbol}); zero derivative", np=spell.fn(f"np.{_name}"), c=_infix_c(_symbol))
defop("invert", infer=_same_types, impl=np.invert, nondiff=True, elementwise=True,
      doc="bits of integers (~); zero derivative", np=spell.fn("np.invert"), c=c_spell.scalar(_invert_c))
defop("left_shift", infer=_same_types, impl=np.left_shift, nondiff=True, elementwise=True,
      doc="bits of integers (<<); zero derivative", np=spell.fn("np.left_shift"),
      c=_shift_c("gradc_left_shift_i64"))
defop("right_shift", infer=_same_types, impl=np.right_shift, nondiff=True, elementwise=True,
      doc="bits of integers (>>); zero derivative", np=spell.fn("np.right_shift"),
      c=_shift_c("gradc_right_shift_i64"))


def _integers(what, *xs, booleans=True):
    dtype = result_dtype(*xs)
    if dtype not in (INT_DTYPES + ("bool",) if booleans else INT_DTYPES):
        raise TraceError(f"{what} takes integers{' or booleans' if booleans else ''}, not {dtype} "
                         f"(NumPy raises TypeError)", hint="convert with .astype(np.int64), or compare first")
    return dtype


def bitwise_and(x, y):
    """``x & y``: ``logical_and`` on booleans, the bits of integers otherwise."""
    if _integers("&", x, y) == "bool":
        return ew.logical_and(x, y)
    return apply_elementwise("bitwise_and", x, y)


def bitwise_or(x, y):
    """``x | y``: ``logical_or`` on booleans, the bits of integers otherwise."""
    if _integers("|", x, y) == "bool":
        return ew.logical_or(x, y)
    return apply_elementwise("bitwise_or", x, y)


def bitwise_xor(x, y):
    """``x ^ y``: ``not_equal`` on booleans, the bits of integers otherwise."""
    if _integers("^", x, y) == "bool":
        return ew.not_equal(x, y)
    return apply_elementwise("bitwise_xor", x, y)


def invert(x):
    """``~x``: ``logical_not`` on booleans, ``-x - 1`` on integers."""
    if _integers("~", x) == "bool":
        return ew.logical_not(x)
    return apply_elementwise("invert", x)


def left_shift(x, y):
    """``x << y`` on integers."""
    _integers("<<", x, y, booleans=False)
    return apply_elementwise("left_shift", x, y)


def right_shift(x, y):
    """``x >> y`` on integers."""
    _integers(">>", x, y, booleans=False)
    return apply_elementwise("right_shift", x, y)
