"""Complex values carried through loops, while loops and branches on the C target: the value against the
function itself and the NumPy target, the gradient (in a real parameter, and in a complex input by JAX's
convention) against central differences along the real and imaginary directions; seeded random programs."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

STEPS = [
    lambda z, x: z * (1 + 0.1j) + np.sin(z) * x,
    lambda z, x: z * z * 0.3 + x * 1j,
    lambda z, x: np.exp(0.2j * z) * x + np.conj(z) * 0.5,
    lambda z, x: z / (1.5 + np.abs(z)) + x,
]


def make_program(seed):
    rng = np.random.default_rng(seed)
    picks = [STEPS[k] for k in rng.integers(0, len(STEPS), 3)]
    trips = int(rng.integers(2, 5))
    kind = ["for", "while", "branch"][seed % 3]

    def f(z, x):
        if kind == "for":
            for _ in range(trips):
                for step in picks:
                    z = step(z, x)
        elif kind == "while":
            i = 0
            while i < trips:
                z = picks[0](z, x)
                i += 1
        else:
            for _ in range(trips):
                if np.sum(x) > 0.0:
                    z = picks[1](z, x)
                else:
                    z = picks[2](z, x)
        return np.sum(np.abs(z) ** 2) + np.real(np.sum(z))
    return f


def central(f, z, x, h=1e-6):
    """d f / d x (real) and JAX's d f / d z = df/dRe - i df/dIm, by central differences."""
    gx = np.array([(f(z, x + h * e) - f(z, x - h * e)) / (2 * h) for e in np.eye(x.size)])
    gz = np.array([(f(z + h * e, x) - f(z - h * e, x)) / (2 * h) - 1j * (f(z + 1j * h * e, x) - f(z - 1j * h * e, x))
                   / (2 * h) for e in np.eye(z.size)])
    return gz, gx


@pytest.mark.parametrize("seed", range(9))
def test_random_complex_loops_on_c_match_numpy_and_differences(seed):
    f = make_program(seed)
    rng = np.random.default_rng(100 + seed)
    z = (rng.standard_normal(2) + 1j * rng.standard_normal(2)) * 0.5
    x = rng.standard_normal(2) * 0.5
    value_c = gradc.jit(f, target="c")(z, x)
    assert value_c == pytest.approx(f(z, x), rel=1e-10, abs=1e-12)
    assert value_c == pytest.approx(gradc.jit(f)(z, x), rel=1e-10, abs=1e-12)
    gz, gx = gradc.compile(f, z, x, wrt=(0, 1), target="c").grad(z, x)
    want_z, want_x = central(f, z, x)
    np.testing.assert_allclose(gx, want_x, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gz, want_z, rtol=1e-5, atol=1e-7)


def test_complex_sqrtm_on_c_is_scipys_root():
    """Its Denman-Beavers loop carries complex matrices (it was refused on the C target)."""
    a = np.array([[0.34, 1.37, -0.11], [1.37, -2.03, 1.44], [-0.11, 1.44, -0.49]]) + 3j * np.eye(3)
    root = gradc.jit(lambda m: scipy.linalg.sqrtm(m), target="c")(a)
    np.testing.assert_allclose(root, scipy.linalg.sqrtm(a), rtol=1e-12, atol=1e-13)
