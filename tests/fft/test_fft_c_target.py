"""``np.fft`` compiled to C (the radix-2/Bluestein library of ``gradc.backends.c.mathlib.fft``) against gradc's
NumPy target and the user's function: values, gradients and complex results, over a seeded generator of
transforms, lengths (powers of two, primes, others), axes, ``n`` and ``norm``."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

NORMS = [None, "ortho", "forward"]


def _case(rng):
    ndim = int(rng.integers(1, 3))
    shape = tuple(int(v) for v in rng.integers(1, 8, ndim))
    axis = int(rng.integers(-ndim, ndim))
    n = None if rng.random() < 0.4 else int(rng.integers(1, 12))
    norm = NORMS[rng.integers(len(NORMS))]
    kind = ["rfft", "fft", "ifft", "fftn"][rng.integers(4)]
    weights = rng.standard_normal(16)

    def loss(x):
        if kind == "rfft":
            spectrum = np.fft.rfft(x, n=n, axis=axis, norm=norm)
        elif kind == "fftn":
            spectrum = np.fft.fftn(x, norm=norm)
        else:
            spectrum = getattr(np.fft, kind)(x, n=n, axis=axis, norm=norm)
        length = spectrum.shape[axis] if kind != "fftn" else spectrum.shape[-1]
        back = np.fft.irfft(spectrum * (1.0 + 0.5j), n=2 * length - 1, axis=axis if kind != "fftn" else -1)
        return np.sum(back * weights[: back.shape[-1]]) + np.sum(np.abs(spectrum) ** 2)
    return f"{kind}{shape}axis={axis},n={n},norm={norm}", loss, shape


CASES = [_case(np.random.default_rng(seed)) for seed in range(24)]


@pytest.mark.parametrize("label, loss, shape", CASES, ids=[c[0] for c in CASES])
def test_c_gradient_matches_numpy_target(label, loss, shape):
    x = np.random.default_rng(len(label)).standard_normal(shape)
    compiled = gradc.compile(loss, x, target="c")
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_allclose(value, loss(x), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad, gradc.compile(loss, x).grad(x), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13, 16, 30])
def test_c_complex_results(n):
    rng = np.random.default_rng(n)
    z = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))

    def f(z):
        return np.fft.ifft(np.fft.fft(z, axis=1) * np.arange(n), n=n + 1, norm="ortho")

    compiled = gradc.compile(f, z, mode="vjp", target="c")
    ct = rng.standard_normal((2, n + 1)) + 1j * rng.standard_normal((2, n + 1))
    value, z_bar = compiled.vjp(z, ct)
    reference = gradc.compile(f, z, mode="vjp").vjp(z, ct)
    np.testing.assert_allclose(value, f(z), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(z_bar, reference[1], rtol=1e-9, atol=1e-10)


def test_c_float32():
    x = np.random.default_rng(0).standard_normal((3, 7)).astype(np.float32)

    def loss(x):
        return np.sum(np.fft.irfft(np.fft.rfft(x) * np.float32(2.0), n=7) ** 2)

    got = gradc.compile(loss, x, target="c").grad(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, gradc.compile(loss, x).grad(x), rtol=1e-4, atol=1e-4)
