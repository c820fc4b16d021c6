"""``scipy.stats`` summaries on traced values: values against SciPy, gradients against central differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc

CASES = {
    "gmean": lambda a: st.gmean(a, axis=1), "gmean_w": lambda a: st.gmean(a, axis=None, weights=a[::-1].ravel()),
    "hmean": lambda a: st.hmean(a), "sem": lambda a: st.sem(a, axis=1), "moment3": lambda a: st.moment(a, 3),
    "moment1": lambda a: st.moment(a, 1) + a[0], "variation": lambda a: st.variation(a, axis=1, ddof=1),
    "skew": lambda a: st.skew(a, axis=1), "skew_unbiased": lambda a: st.skew(a, bias=False),
    "kurtosis": lambda a: st.kurtosis(a, axis=None),
    "kurtosis_pearson": lambda a: st.kurtosis(a, fisher=False, bias=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_summary(name, seed):
    f = CASES[name]
    a = np.random.default_rng(seed).uniform(0.5, 3.0, (5, 6))
    np.testing.assert_allclose(gradc.jit(f)(a), f(a), rtol=1e-12, atol=1e-14)
    w = np.random.default_rng(seed + 7).standard_normal(np.shape(f(a)))

    def loss(a):
        return np.sum(w * f(a))

    np.testing.assert_allclose(gradc.grad(loss)(a), fd_grad(loss, a), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["gmean", "skew_unbiased", "kurtosis", "variation"])
def test_summary_c_target(name):
    f = CASES[name]
    a = np.random.default_rng(3).uniform(0.5, 3.0, (5, 6))
    np.testing.assert_allclose(gradc.jit(f, target="c")(a), f(a), rtol=1e-12, atol=1e-14)

    def loss(a):
        return np.sum(f(a))

    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(a), fd_grad(loss, a), rtol=1e-6, atol=1e-8)
