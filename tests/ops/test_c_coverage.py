"""C parity (issue 24): every op of the registry lowers to C (``gradc ops`` counts 100 %).

An op added with ``c=None`` fails here: give it a C lowering (``gradc.ops.c_spell``). The last two
without one, ``eig`` and ``det_phase``, lower since gradc/backends/c/linalg_eig.py.
"""
from __future__ import annotations

from gradc.backends.c.lowering import C_LOWERING
from gradc.ir.registry import OPS
from gradc.ops import c_spell

WITHOUT_C: frozenset = frozenset()  # none: an op without C is a failure, not an entry here


def _without_c():
    return {name for name in OPS if C_LOWERING[name] is None}


def test_no_new_op_lacks_a_c_lowering():
    new = sorted(_without_c() - WITHOUT_C)
    assert not new, f"ops without a C lowering (c=None), not on the allow-list: {new}; give each one (c_spell)"


def test_every_op_lowers_to_c():
    assert not _without_c(), sorted(_without_c())


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
