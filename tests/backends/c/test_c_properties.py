"""Property tests for the C target: random op compositions (the trees of test_properties) agree with NumPy's."""
import ctypes
import functools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradc
from gradc.backends.c import build as c_build

test_properties = pytest.importorskip("test_properties")
pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def _agree(c_out, np_out):
    value_c, grads_c = c_out
    value_n, grads_n = np_out
    np.testing.assert_allclose(value_c, value_n, rtol=1e-10, atol=1e-12)
    for a, b in zip(grads_c if isinstance(grads_c, tuple) else (grads_c,),
                    grads_n if isinstance(grads_n, tuple) else (grads_n,)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=test_properties.trees, seed=st.integers(0, 2 ** 32 - 1))
def test_random_composition_c_matches_numpy(tree, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, (2, 3))
    y = rng.uniform(-1.5, 1.5, 3)
    ct = rng.standard_normal(np.shape(test_properties.build(tree, x, y)))
    loss = test_properties.make_loss(tree)
    c = gradc.compile(loss, x, y, ct, wrt=("x", "y"), target="c")
    n = gradc.compile(loss, x, y, ct, wrt=("x", "y"))
    _agree(c(x, y, ct), n(x, y, ct))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=test_properties.shaped_trees, seed=st.integers(0, 2 ** 32 - 1))
def test_random_shape_op_composition_c_matches_numpy(tree, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, (2, 3))
    ct = rng.standard_normal((2, 3))

    def loss(x, ct):
        return np.sum(test_properties.build_shaped(tree, x) * ct)

    _agree(gradc.compile(loss, x, ct, target="c")(x, ct), gradc.compile(loss, x, ct)(x, ct))


# ---------------------------------------------------------------- integer ops over the whole int64 range
INT64 = np.iinfo(np.int64)
EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 63, 64, 65, -64, 2 ** 31, -2 ** 31, 2 ** 53 + 1, INT64.max, INT64.min,
         INT64.min + 1, INT64.max - 1]
# every integer op NumPy and gradc share; + - * only where they do not overflow (C's signed overflow is
# undefined: NumPy wraps)
INT_OPS = [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: np.fmod(a, b), lambda a, b: np.floor_divide(b, a),
    lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a, lambda a, b: a << b,
    lambda a, b: a >> b, lambda a, b: b >> (a % 70 - 3), lambda a, b: b << (a % 70 - 3), lambda a, b: np.abs(a),
    lambda a, b: np.maximum(a, b), lambda a, b: np.minimum(a, b), lambda a, b: np.sign(a),
    lambda a, b: (a < b) * 1 + (a == b) * 2 + (a >= b) * 4, lambda a, b: a % 7 - b // -5 + (a >> 40) * (b & 0xFFFF),
    lambda a, b: np.where(a > b, a, b) % 3, lambda a, b: (a >> 33) * (b >> 33) - (a >> 34), lambda a, b: -(a >> 1),
]
N_INT = 24


def _int_ops(a, b):
    return np.stack([op(a, b) for op in INT_OPS])


@functools.lru_cache(maxsize=None)
def _int_ops_in_c():
    from gradc.backends.c.build import _CFunction, build
    from gradc.backends.c.emit import emit_c
    from gradc.passes import optimize
    from gradc.trace import trace

    example = np.arange(N_INT, dtype=np.int64)
    graph = optimize(trace(_int_ops, example, example))
    source, _ = emit_c([(graph, "int_ops", ["value"], "integer ops")], ["integer ops"], "GRADC_INT_OPS_H")
    work = int(re.search(r"size_t int_ops_work_size\(void\)\n{\n    return (\d+);", source).group(1))
    return _CFunction(ctypes.CDLL(build(source, "int_ops")), "int_ops", graph, work)


int64s = st.lists(st.one_of(st.sampled_from(EDGES), st.integers(INT64.min, INT64.max), st.integers(-20, 20)),
                  min_size=N_INT, max_size=N_INT).map(lambda v: np.array(v, dtype=np.int64))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=int64s, b=int64s)
def test_integer_ops_match_numpy_over_int64(a, b):
    """Floor division and modulo of negative numbers and by 0, INT64_MIN // -1, shifts by any amount, bits:
    the C target gives NumPy's int64 results exactly (C's own operators differ or are undefined there)."""
    with np.errstate(all="ignore"):
        want = _int_ops(a, b)
    got = _int_ops_in_c()(a, b)[0]
    assert got.dtype == np.int64
    for n, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"op {n} of INT_OPS on a={a.tolist()}, b={b.tolist()}")
