"""Registry completeness: every op has all its facets and a row in the per-op table."""
import numpy as np
import pytest
from op_cases import DIFF_CASES, NONDIFF_CASES

from gradc.backends.numpy.control import CONTROL_OPS, emit_control
from gradc.ops import OPS


def covered(cases):
    return {op for case in cases for op in case.ops}


def test_every_op_has_a_table_entry():
    diff_ops = {name for name, op in OPS.items() if not op.nondiff}
    nondiff_ops = {name for name, op in OPS.items() if op.nondiff}
    missing = sorted(diff_ops - covered(DIFF_CASES))
    assert not missing, f"differentiable ops without a finite-difference case in test_ops_table.py: {missing}"
    missing = sorted(nondiff_ops - covered(NONDIFF_CASES))
    assert not missing, f"nondiff ops without a zero-gradient case in test_ops_table.py: {missing}"


def test_table_names_only_registered_ops():
    unknown = sorted((covered(DIFF_CASES) | covered(NONDIFF_CASES)) - set(OPS))
    assert not unknown, f"the per-op table names ops that do not exist: {unknown}"


def test_table_ids_are_unique():
    ids = [c.id for c in DIFF_CASES + NONDIFF_CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_every_facet(name):
    op = OPS[name]
    assert op.name == name
    assert callable(op.infer), f"{name}: no type rule"
    assert callable(op.impl), f"{name}: no NumPy implementation"
    if name in CONTROL_OPS:  # loops and branches are statements: gradc/backends/numpy/control.py writes them
        assert callable(emit_control)
    else:
        assert callable(op.np), f"{name}: no NumPy spelling"
    assert op.doc and op.doc.strip(), f"{name}: no doc"
    if op.nondiff:
        assert op.vjp is None, f"{name}: nondiff but has a vjp rule"
    else:
        assert callable(op.vjp), f"{name}: neither a vjp rule nor nondiff"


def test_every_missing_facet_is_reported():
    """The facet check itself fails on an op that lacks something (it is not vacuous)."""
    from gradc.ir.registry import Op

    broken = Op("broken", infer=lambda t, p: t[0], impl=np.negative)
    OPS["broken"] = broken
    try:
        with pytest.raises(AssertionError, match="no NumPy spelling"):
            test_op_has_every_facet("broken")
        with pytest.raises(AssertionError, match="broken"):
            test_every_op_has_a_table_entry()
    finally:
        del OPS["broken"]
