"""``np.fft`` on the array-API target: the standard's ``fft`` extension (``xp.fft.fft``/``ifft``/``rfft``/``irfft``),
checked with NumPy arrays and torch tensors against gradc's NumPy target and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc


def _loss(x):
    spectrum = np.fft.rfft(x, axis=0) * np.linspace(0.5, 1.5, 4)[:, None]
    mixed = np.fft.ifft(np.fft.fft(x, n=8, axis=1, norm="ortho"), axis=1)[:, :5]
    return np.sum(np.fft.irfft(spectrum, n=6, axis=0) ** 2) + np.sum(np.fft.irfft(mixed, n=8) ** 3)


def _fd(x, d, eps=1e-6):
    return (_loss(x + eps * d) - _loss(x - eps * d)) / (2 * eps)


def test_numpy_namespace():
    rng = np.random.default_rng(2)
    x, d = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    compiled = gradc.compile(_loss, x, target="array_api")
    assert "xp.fft.rfft(" in compiled.source and "np." not in compiled.source.split("def ", 1)[1]
    g = compiled.grad(x)
    np.testing.assert_allclose(g, gradc.compile(_loss, x).grad(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.sum(g * d), _fd(x, d), rtol=1e-6, atol=1e-8)


def test_torch_namespace():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((6, 3))
    compiled = gradc.compile(_loss, x, target="array_api")
    np.testing.assert_allclose(compiled.grad(torch.tensor(x)).numpy(), gradc.compile(_loss, x).grad(x),
                               rtol=1e-10, atol=1e-12)
