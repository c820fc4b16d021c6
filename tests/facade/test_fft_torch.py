"""``torch.fft`` of the facade: against torch 2.13.0's recorded results (``spec/gen_fft.py``), NumPy's ``np.fft``,
and central differences along real and imaginary directions; seeded random transforms of random shapes."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gradc
import gradc.torch as torch
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("fft")


def test_every_case_is_recorded():
    assert [fn.__name__ for fn in GEN.CASES] == list(EXPECTED)


def _signed_zeros_unified(text):
    """``0.-0.j`` and ``0.+0.j`` read alike: an exactly cancelling sum's zero has the sign the FFT library's order
    of operations gives it, and NumPy's pocketfft and torch's differ there (documented in gradc/facade/fft.py)."""
    return re.sub(r"([+-])(0\.0*j)", r"+\2", text)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda f: f.__name__)
def test_matches_torch(fn):
    expected = EXPECTED[fn.__name__]
    actual = RUNNER.run_case(fn, torch)
    if fn.__name__ == "float32_results":
        expected = {k: _signed_zeros_unified(v) for k, v in expected.items()}
        actual = {k: _signed_zeros_unified(v) for k, v in actual.items()}
    assert RUNNER.compare(expected, actual, 1e-9) == []


# ---------------------------------------------------------------- references: np.fft and central differences
def _loss_and_grad(name, data, kwargs, w):
    x = torch.tensor(data, requires_grad=True)
    y = getattr(torch.fft, name)(x, **kwargs)
    loss = (y * torch.tensor(w)).real.sum() if y.is_complex() else (y * torch.tensor(w)).sum()
    loss.backward()
    return y.detach().numpy(), x.grad.numpy()


def _numpy_loss(name, data, kwargs, w):
    y = _numpy_transform(name, data, kwargs)
    return float(np.real(np.sum(y * w)))


def _numpy_transform(name, data, kwargs):
    """NumPy's transform for torch's arguments (``dim`` is NumPy's ``axis``/``axes``; ``ihfftn``/``hfftn`` through
    their definitions: the one-sided inverse transform, and ``irfftn`` of the conjugate with the norm swapped)."""
    kw = dict(kwargs)
    if "dim" in kw:
        kw["axes" if name[-1] in "2n" else "axis"] = kw.pop("dim")
    swap = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
    if name in ("hfftn", "hfft2"):
        kw["norm"] = swap[kw.get("norm") or "backward"]
        return np.fft.irfftn(np.conj(data), **_nd_defaults(name, kw))
    if name in ("ihfftn", "ihfft2"):
        kw["norm"] = swap[kw.get("norm") or "backward"]
        return np.conj(np.fft.rfftn(data, **_nd_defaults(name, kw)))
    if name[-1] == "2" or name[-1] == "n":
        return getattr(np.fft, name)(data, **_nd_defaults(name, kw))
    return getattr(np.fft, name)(data, **kw)


def _nd_defaults(name, kw):
    if "axes" not in kw:
        kw["axes"] = (-2, -1) if name.endswith("2") else tuple(range(-len(kw["s"]), 0)) if "s" in kw else None
    return kw


NAMES = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
         "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _random_case(seed):
    """A transform, an input (real or complex, 1-3 dims of 1-6 points) and arguments torch accepts."""
    rng = np.random.default_rng(seed)
    name = NAMES[rng.integers(len(NAMES))]
    nd = int(rng.integers(2 if name.endswith("2") else 1, 4))
    shape = tuple(int(v) for v in rng.integers(2, 7, size=nd))
    data = rng.standard_normal(shape)
    if name not in REAL_ONLY and rng.random() < 0.7:
        data = data + 1j * rng.standard_normal(shape)
    kwargs = {}
    if rng.random() < 0.6:
        kwargs["norm"] = ["backward", "ortho", "forward"][rng.integers(3)]
    one_dim = not (name.endswith("2") or name.endswith("n"))
    if one_dim:
        kwargs["dim"] = int(rng.integers(-nd, nd))
        if rng.random() < 0.5:
            kwargs["n"] = int(rng.integers(2, 9))
    elif name.endswith("n") and rng.random() < 0.5:
        k = int(rng.integers(1, nd + 1))
        kwargs["dim"] = tuple(int(d) for d in rng.permutation(nd)[:k])
        if rng.random() < 0.5:
            kwargs["s"] = tuple(int(v) for v in rng.integers(2, 8, size=k))
    elif rng.random() < 0.5:
        k = 2 if name.endswith("2") else int(rng.integers(1, nd + 1))
        kwargs["s"] = tuple(int(v) for v in rng.integers(2, 8, size=k))
    return name, data, kwargs


@pytest.mark.parametrize("seed", range(60))
def test_random_transforms_against_numpy_and_differences(seed):
    name, data, kwargs = _random_case(seed)
    expected = _numpy_transform(name, data, kwargs)
    rng = np.random.default_rng(1000 + seed)
    w = rng.standard_normal(expected.shape) + (1j * rng.standard_normal(expected.shape)
                                               if np.iscomplexobj(expected) else 0)
    value, grad = _loss_and_grad(name, data, kwargs, w)
    np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-10)
    # torch's convention: the gradient of a real loss is dL/dx + i dL/dy, checked along both directions
    h = 1e-6
    for direction in (rng.standard_normal(data.shape), 1j * rng.standard_normal(data.shape)):
        if not np.iscomplexobj(data) and np.iscomplexobj(direction):
            continue
        slope = (_numpy_loss(name, data + h * direction, kwargs, w)
                 - _numpy_loss(name, data - h * direction, kwargs, w)) / (2 * h)
        predicted = np.sum(np.real(np.conj(grad) * direction))
        np.testing.assert_allclose(predicted, slope, rtol=1e-6, atol=1e-7)


def test_parseval_gradient_and_second_order():
    """``sum |fft(z)|^2 = n sum |z|^2``: its gradient is ``2 n z``; its second derivative along ``v`` is ``2 n v``."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    z = torch.tensor(data, requires_grad=True)
    loss = (torch.fft.fft(z).abs() ** 2).sum()
    g, = torch.autograd.grad(loss, z, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 12 * data, rtol=1e-12)
    v = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    hv, = torch.autograd.grad((g.conj() * torch.tensor(v)).real.sum(), z)  # d/dz of Re<g, v>
    np.testing.assert_allclose(hv.numpy(), 12 * v, rtol=1e-12)


def test_float32_stays_complex64_and_integers_promote():
    x = torch.tensor([1.0, 2.0, 3.0])
    assert torch.fft.fft(x).dtype is torch.complex64
    assert torch.fft.irfft(torch.fft.rfft(x), n=3).dtype is torch.float32
    assert torch.fft.fft(torch.arange(4)).dtype is torch.complex64
    assert torch.fft.fft(x.double()).dtype is torch.complex128
    np.testing.assert_allclose(torch.fft.fft(x).numpy(), np.fft.fft([1.0, 2.0, 3.0]), rtol=1e-6)


def test_torch_fft_inside_gradc_grad_on_numpy_arrays():
    """torch-style code given to gradc.grad: the same transforms, traced."""
    def energy(x):
        return (abs(torch.fft.rfft(x)) ** 2).sum()
    x = np.array([0.5, -1.0, 2.0, 0.25])
    grad = gradc.grad(energy)(x)
    h = 1e-6
    slopes = [(float(energy(torch.tensor(x + h * e))) - float(energy(torch.tensor(x - h * e)))) / (2 * h)
              for e in np.eye(4)]
    np.testing.assert_allclose(grad, slopes, rtol=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: torch.fft.fft(torch.ones(3), n=-1), "Invalid number of data points"),
    (lambda: torch.fft.rfft(torch.ones(3, dtype=torch.complex64)), "rfft expects a real input tensor"),
    (lambda: torch.fft.fftn(torch.ones(2, 2), dim=(1, -1)), "FFT dims must be unique"),
    (lambda: torch.fft.fft(torch.ones(2), norm="backwards"), 'Invalid normalization mode: "backwards"'),
])
def test_errors_name_the_problem(call, message):
    with pytest.raises((RuntimeError, IndexError), match=re.escape(message)):
        call()
