"""The whole per-op table (``test_ops_table``) through the C target.

For every case, the C target's value, gradients and forward value equal the NumPy
target's to 1e-12 relative (float32 cases: to a few float32 ulp, since the C
target computes float32 in float). The gradients themselves are checked against
central differences in ``test_ops_table``; here the C code is held to the NumPy code.
"""
from __future__ import annotations

import numpy as np
import pytest
from op_cases import DIFF_CASES, NONDIFF_CASES, compile_case, make_inputs, make_loss

import gradc
from gradc.backends.c import build as c_build
from gradc.ops import OPS

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def _tolerance(args):
    if any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args):
        return 1e-5, 1e-6
    return 1e-12, 1e-14


def _same(c_result, numpy_result, rtol, atol, what):
    c_arr, np_arr = np.asarray(c_result), np.asarray(numpy_result)
    assert c_arr.dtype == np_arr.dtype and c_arr.shape == np_arr.shape, (what, c_arr.dtype, np_arr.dtype)
    scale = float(np.max(np.abs(np_arr.astype(np.float64)), initial=0.0))
    np.testing.assert_allclose(c_arr.astype(np.float64), np_arr.astype(np.float64), rtol=rtol,
                               atol=atol * (1.0 + scale), err_msg=what)


@pytest.mark.parametrize("case", DIFF_CASES + NONDIFF_CASES, ids=lambda c: c.id)
def test_c_target_equals_numpy_target(case):
    args = make_inputs(case)
    # the C target has no loops yet: a loop of static length unrolls there (while loops and branches cannot)
    unrolled = {"scan", "element"} if not {"while_loop", "cond"} & set(case.ops) else set()
    no_c = sorted(op for op in case.ops if OPS[op].c is None and op not in unrolled)
    if getattr(case, "extra", {}).get("c_refuses"):  # a lowering that computes on real values only, given complex
        with pytest.raises(gradc.GradcError, match=case.extra["c_refuses"]):
            gradc.compile(make_loss(case.fn, len(args)), *args, 0.0, target="c")
        return
    if no_c:  # ops without a C lowering (c=None at the defop): a clear error naming them, nothing built
        with pytest.raises(gradc.GradcError, match=f"no C lowering for ops? {', '.join(no_c)} in loss"):
            gradc.compile(make_loss(case.fn, len(args)), *args, 0.0, target="c")
        return
    loss, ct, wrt, numpy_compiled = compile_case(case, args)
    c_compiled = gradc.compile(make_loss(case.fn, len(args)), *args, ct, wrt=tuple(f"a{i}" for i in wrt),
                               target="c")
    rtol, atol = _tolerance(args)
    value, grads = numpy_compiled.value_and_grad(*args, ct)
    c_value, c_grads = c_compiled.value_and_grad(*args, ct)
    _same(c_value, value, rtol, atol, "value")
    assert len(c_grads) == len(grads)
    for k, (cg, g) in enumerate(zip(c_grads, grads)):
        _same(cg, g, rtol, atol, f"gradient {k}")
    _same(c_compiled.forward(*args, ct), numpy_compiled.forward(*args, ct), rtol, atol, "forward")
