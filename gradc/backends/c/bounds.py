"""Bounds of the C target's sizes: ``max_trips`` validated, every work size checked against overflow.

A work buffer's size is a C ``size_t`` and its offsets ``long``: a size past ``MAX_BYTES`` (``2**62``)
would wrap and the function would write outside its buffer. So a fixed size beyond it is an error
when the function is compiled (``check_work``), and a size that depends on named sizes is checked
when it is called: ``NAME_work_size(sizes...)`` returns ``SIZE_MAX`` (``(size_t)-1``) when the sizes
are below 1 or the size would pass ``MAX_BYTES`` (``work_guard``), and the Python entry points
raise ``ValueError`` for it (``too_large``).

>>> check_max_trips(100), check_max_trips(None)
(100, None)
>>> try:
...     check_max_trips(0)
... except ArgumentError as exc:
...     print(str(exc).split(" (")[0])
max_trips must be a positive integer, got 0
"""
from __future__ import annotations

import numbers

import sympy as sp

from gradc.errors import ArgumentError, EmitError

MAX_BYTES = 2 ** 62  # the largest work buffer (and so the largest offset in it, in bytes)
_HINT = ("max_trips is the number of rows of the tape of a loop whose trip count is known only when it runs "
         "(default 10000); pass an integer from 1 to 2**62")


def check_max_trips(value):
    """``value`` when it is a valid ``max_trips`` (None, or an integer from 1 to ``MAX_BYTES``); else an
    ``ArgumentError`` saying so."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"max_trips must be a positive integer, got {type(value).__name__} {value!r}",
                            hint=_HINT)
    if not 1 <= int(value) <= MAX_BYTES:
        raise ArgumentError(f"max_trips must be a positive integer, got {int(value)}" if value < 1 else
                            f"max_trips={int(value)} is too large (at most 2**62)", hint=_HINT)
    return int(value)


def check_work(fname: str, work_bytes: int, where=None):
    """Raise an ``EmitError`` when a fixed work size passes ``MAX_BYTES``.

    >>> check_work("f", 2 ** 62)
    >>> try:
    ...     check_work("f", 2 ** 63)
    ... except EmitError as exc:
    ...     print(str(exc).split(" (")[0])
    the work arrays of f need 9223372036854775808 bytes, more than 2**62
    """
    if work_bytes > MAX_BYTES:
        raise EmitError(f"the work arrays of {fname} need {work_bytes} bytes, more than 2**62", where=where,
                        hint="lower max_trips (a tape of a loop of run-time length has max_trips rows) or the "
                             "sizes of the arrays")


def work_guard(work, size_cnames: dict) -> str:
    """A C condition, true when the named sizes (``size_cnames``: name -> C name) are below 1 or the work size
    ``work`` (a SymPy expression of them) would pass ``MAX_BYTES``. Each term is bounded in ``double`` (no
    wrap-around, and a relative error far below the margin between ``2**62`` and ``size_t``'s ``2**64``).

    >>> from gradc.ir.dims import size_symbol
    >>> n, m = size_symbol("n"), size_symbol("m")
    >>> work_guard(8 * n * m + 24, {"n": "n", "m": "m_"})
    'm_ < 1 || n < 1 || 24.0 + 8.0*(double)m_*(double)n > 0x1p62'
    """
    names = sorted(s.name for s in sp.sympify(work).free_symbols)
    terms = []
    for term in sp.Add.make_args(sp.expand(work)):
        coeff, factors = term.as_coeff_mul()
        parts = [f"{abs(float(coeff))!r}"]
        for factor in factors:
            base, exp = factor.as_base_exp()
            if not (base.is_Symbol and exp.is_Integer and exp > 0):
                raise EmitError(f"work size {work} has no checked C spelling in gradc", where=None)
            parts += [f"(double){size_cnames[base.name]}"] * int(exp)
        terms.append("*".join(parts))
    small = [f"{size_cnames[n]} < 1" for n in names]
    return " || ".join(sorted(small) + [f"{' + '.join(terms)} > 0x1p62"])


def too_large(fname: str, sizes: dict) -> ValueError:
    """The error of a call whose named sizes make the work buffer pass ``MAX_BYTES``."""
    given = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return ValueError(f"{fname}: the sizes {given} need a work buffer of more than 2**62 bytes; call it with "
                      "smaller arrays")
