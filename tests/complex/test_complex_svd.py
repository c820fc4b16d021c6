"""np.linalg.svd / scipy.linalg.svd / svdvals and the spectral norms of complex matrices: NumPy's values,
JAX's derivative convention (a real loss's gradient is dL/dx - i dL/dy) against central differences in the real
and imaginary parts. The losses do not depend on the singular vectors' common phase; the last one depends on the
relative phase of u_i and v_i (through U S^1/2 V^H), which the rule's phase term carries."""
import numpy as np
import pytest
import scipy.linalg

import gradc
from tests.complex.test_complex_eigh import jax_convention_gradient


def weights(shape, k):
    rng = np.random.default_rng(100)
    return rng.normal(size=(shape[0], k)), rng.normal(size=(k, shape[1]))


def losses(shape):
    k = min(shape)
    w1, w2 = weights(shape, k)
    ramp = np.arange(1.0, k + 1)

    def half_power(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.real(np.sum(((u * np.sqrt(s)) @ vh) * w1[:, :1]))

    def vectors(a):
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return np.sum(np.abs(u) ** 2 * w1) + np.sum(np.abs(vh) ** 2 * w2)
    return {
        "svdvals": lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2 * ramp),
        "scipy_svdvals": lambda a: np.sum(np.log(scipy.linalg.svdvals(a)) * ramp),
        "values": lambda a: np.sum(scipy.linalg.svd(a, full_matrices=False)[1] * ramp),
        "vectors": vectors,
        "half_power": half_power,
        "nuclear": lambda a: np.linalg.norm(a, "nuc"),
        "spectral": lambda a: np.linalg.norm(a, 2) + np.linalg.norm(a, -2),
    }


NAMES = sorted(losses((2, 2)))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape, seed", [((1, 1), 0), ((3, 3), 1), ((4, 2), 2), ((2, 5), 3)])
def test_value_and_gradient(name, shape, seed):
    loss = losses(shape)[name]
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    assert abs(gradc.compile(loss, a).forward(a) - loss(a)) < 1e-10 * (1 + abs(loss(a)))
    np.testing.assert_allclose(gradc.grad(loss)(a), jax_convention_gradient(loss, a), rtol=1e-6, atol=1e-7)


def test_factors_are_numpys():
    a = np.random.default_rng(9).normal(size=(3, 2)) + 1j * np.random.default_rng(8).normal(size=(3, 2))

    def parts(a):
        return np.linalg.svd(a, full_matrices=False)
    u, s, vh = gradc.compile(parts, a, mode="jvp").forward(a)
    want_u, want_s, want_vh = np.linalg.svd(a, full_matrices=False)
    assert s.dtype == np.float64 and u.dtype == vh.dtype == np.complex128
    np.testing.assert_allclose(s, want_s, rtol=1e-12)
    np.testing.assert_allclose(u, want_u, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(vh, want_vh, rtol=1e-10, atol=1e-12)


def test_real_svd_emits_no_conjugate():
    source = gradc.compile(lambda a: np.sum(np.linalg.svd(a)[1]), np.eye(2) * [1.0, 2.0]).source
    assert "np.conj" not in source
