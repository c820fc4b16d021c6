"""Property tests for the C target: random op compositions (the trees of test_properties) agree with NumPy's."""
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
