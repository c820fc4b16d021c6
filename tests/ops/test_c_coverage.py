"""C parity (issue 24): the ops without a C lowering, as an explicit allow-list that can only shrink.

An op added with ``c=None`` fails here (give it a C lowering: ``gradc.ops.c_spell``); an op of the list
that gains one fails too, until it is taken off the list. The lead empties the list once the
decompositions lower (then every op of the table lowers to C, as ``gradc ops`` counts).
"""
from __future__ import annotations

from gradc.backends.c.lowering import C_LOWERING
from gradc.ir.registry import OPS
from gradc.ops import c_spell

# the dense decompositions (their C99 algorithms are another part of issue 24)
# the sign (phase) of a complex determinant: it needs a complex LU in C
WITHOUT_C = frozenset({"det_phase", "eig"})  # complex LU and Hessenberg QR in C: not yet


def _without_c():
    return {name for name in OPS if C_LOWERING[name] is None}


def test_no_new_op_lacks_a_c_lowering():
    new = sorted(_without_c() - WITHOUT_C)
    assert not new, f"ops without a C lowering (c=None), not on the allow-list: {new}; give each one (c_spell)"


def test_the_allow_list_only_shrinks():
    lowered = sorted(WITHOUT_C - _without_c())
    assert not lowered, f"these ops lower to C now: take them off WITHOUT_C in {__file__}: {lowered}"


def test_every_op_says_its_c_spelling():
    unsaid = sorted(name for name, op in OPS.items() if op.c == c_spell.MISSING)
    assert not unsaid, f"ops whose defop does not say c=: {unsaid}"


def test_the_check_fails_on_an_op_without_c():
    """Not vacuous: a registered op with ``c=None`` is reported."""
    from gradc.ir.registry import Op
    OPS["no_c_probe"] = Op("no_c_probe", infer=lambda t, p: t[0], impl=lambda x: x, c=None, nondiff=True)
    try:
        assert "no_c_probe" in _without_c() - WITHOUT_C
    finally:
        del OPS["no_c_probe"]
