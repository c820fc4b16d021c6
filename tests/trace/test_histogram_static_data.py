"""``np.histogram`` with an estimator name for ``bins`` where the data are a NumPy array (static) and the
weights are traced: NumPy's own rule applies (no estimation for weighted data) and the refusal says so, for
every estimator; static data with string bins and nothing traced run as NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError

DATA = np.random.default_rng(5).standard_normal(40)
ESTIMATORS = ("auto", "fd", "scott", "doane", "stone", "sqrt", "sturges", "rice")


@pytest.mark.parametrize("name", ESTIMATORS)
def test_weighted_static_data_refused_as_numpy_does(name):
    with pytest.raises(TypeError, match="weighted"):
        np.histogram(DATA, bins=name, weights=np.ones(40))
    with pytest.raises(GradcError, match="not supported for weighted data") as info:
        gradc.jit(lambda w: np.histogram(DATA, bins=name, weights=w)[0])(np.ones(40))
    assert "test_histogram_static_data.py" in str(info.value)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_static_data_with_estimator_beside_traced_values(name):
    def f(x):
        counts, edges = np.histogram(DATA, bins=name)
        return np.sum(counts * x) + np.sum(edges) * x

    counts, edges = np.histogram(DATA, bins=name)
    np.testing.assert_allclose(gradc.grad(f)(1.5), np.sum(counts) + np.sum(edges), rtol=1e-13)
