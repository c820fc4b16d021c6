"""``np.fft`` traced by gradc against NumPy: values (interpreter and emitted NumPy), VJPs and JVPs against
central differences, second order. Cases come from a seeded generator over transforms, shapes, axes,
``n``/``s`` and ``norm``.

Derivative convention (JAX's): for a real input ``x`` and complex output ``y = f(x)`` the pull-back of a
complex cotangent ``ct`` is ``Re(J^T ct)``, so ``<x_bar, d> = Re(sum(ct * J d))`` for every real ``d``.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.ir.interpret import evaluate

NORMS = [None, "backward", "ortho", "forward"]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft"]
MANY_AXES = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2"]


def _one_axis_case(rng):
    name = ONE_AXIS[rng.integers(len(ONE_AXIS))]
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(v) for v in rng.integers(1, 7, ndim))
    axis = int(rng.integers(-ndim, ndim))
    n = None if rng.random() < 0.4 else int(rng.integers(1, 10))
    if name == "irfft" and n is None and shape[axis] == 1:
        n = int(rng.integers(1, 6))
    norm = NORMS[rng.integers(len(NORMS))]
    fn = getattr(np.fft, name)
    return f"{name}{shape}axis={axis},n={n},norm={norm}", (lambda x: fn(x, n=n, axis=axis, norm=norm)), shape


def _many_axes_case(rng):
    name = MANY_AXES[rng.integers(len(MANY_AXES))]
    ndim = int(rng.integers(2, 4))
    shape = tuple(int(v) for v in rng.integers(2, 6, ndim))
    k = 2 if name.endswith("2") else int(rng.integers(1, ndim + 1))
    repeat = name.startswith(("fftn", "ifftn")) and rng.random() < 0.25  # NumPy transforms a repeated axis twice
    axes = [int(a) for a in (rng.integers(0, ndim, k) if repeat else rng.permutation(ndim)[:k])]
    s = None if rng.random() < 0.5 else tuple(int(v) for v in rng.integers(1, 8, k))
    if s is not None and rng.random() < 0.3:
        s = (-1,) + s[1:]  # NumPy's "the input's length"
    norm = NORMS[rng.integers(len(NORMS))]
    fn = getattr(np.fft, name)
    return f"{name}{shape}axes={axes},s={s},norm={norm}", (lambda x: fn(x, s=s, axes=axes, norm=norm)), shape


def _cases(count, seed):
    rng = np.random.default_rng(seed)
    return [(_one_axis_case if i % 2 == 0 else _many_axes_case)(rng) for i in range(count)]


CASES = _cases(60, 2024)


def _central(f, x, d, eps=1e-6):
    return (f(x + eps * d) - f(x - eps * d)) / (2 * eps)


@pytest.mark.parametrize("label, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_values_vjp_against_numpy(label, fn, shape):
    rng = np.random.default_rng(len(label))
    x = rng.standard_normal(shape)
    want = fn(x)
    graph = gradc.trace(fn, x)
    np.testing.assert_allclose(evaluate(graph, x)[0], want, rtol=1e-10, atol=1e-10)
    compiled = gradc.compile(fn, x, mode="vjp")
    got = compiled.forward(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    ct = rng.standard_normal(want.shape) + (1j * rng.standard_normal(want.shape) if np.iscomplexobj(want) else 0)
    value, x_bar = compiled.vjp(x, ct)
    np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-10)
    assert x_bar.dtype == np.float64 and x_bar.shape == x.shape
    d = rng.standard_normal(shape)
    np.testing.assert_allclose(np.sum(x_bar * d), np.real(np.sum(ct * _central(fn, x, d))), rtol=1e-6, atol=1e-7)


REAL_OUT = [  # real-valued results, so grad, jvp and second order apply
    ("irfft_rfft_filter", lambda x: np.fft.irfft(np.fft.rfft(x, n=7) * np.linspace(0.5, 1.5, 4), n=7), (2, 6)),
    ("irfft_of_fft_half", lambda x: np.fft.irfft(np.fft.fft(x, axis=0)[:3], n=5, axis=0), (4, 3)),
    ("irfftn_rfftn_roundtrip", lambda x: np.fft.irfftn(np.fft.rfftn(x, norm="ortho") * 2.0, s=x.shape, axes=(0, 1),
                                                        norm="ortho"), (3, 4)),
    ("irfft2_odd", lambda x: np.fft.irfft2(np.fft.rfft2(x), s=(3, 5)), (3, 5)),
    ("ifft_fft_real_roundtrip", lambda x: np.fft.irfft(np.fft.ifft(x, norm="forward")[..., :4], n=7), (2, 7)),
]


@pytest.mark.parametrize("label, fn, shape", REAL_OUT, ids=[c[0] for c in REAL_OUT])
def test_real_results_grad_and_second_order(label, fn, shape):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(fn(x).shape)

    def loss(x):
        return np.sum(fn(x) ** 2 * w)

    np.testing.assert_allclose(gradc.compile(fn, x, mode="vjp").forward(x), fn(x), rtol=1e-10, atol=1e-10)
    g = gradc.compile(loss, x).grad(x)
    d = rng.standard_normal(shape)
    np.testing.assert_allclose(np.sum(g * d), _central(loss, x, d), rtol=1e-6, atol=1e-7)
    grad_loss = gradc.grad(loss)
    hvp = gradc.grad(lambda x: np.sum(grad_loss(x) * d))(x)  # second order: reverse over reverse
    np.testing.assert_allclose(hvp, _central(grad_loss, x, d, 1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("label, fn, shape", REAL_OUT, ids=[c[0] for c in REAL_OUT])
def test_real_results_jvp(label, fn, shape):
    rng = np.random.default_rng(8)
    x, d = rng.standard_normal(shape), rng.standard_normal(shape)
    value, tangent = gradc.compile(fn, x, mode="jvp").jvp(x, d)
    np.testing.assert_allclose(value, fn(x), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(tangent, _central(fn, x, d), rtol=1e-6, atol=1e-7)


def _shift_twice(fn, axes):
    return lambda x: fn(x, axes=axes) * 2.0


def test_shifts_and_frequencies():
    x = np.arange(30.0).reshape(5, 6)
    for fn in (np.fft.fftshift, np.fft.ifftshift):
        for axes in (None, 0, (1,), (-1, 0)):
            shifted = _shift_twice(fn, axes)
            got = gradc.compile(shifted, x, mode="vjp").forward(x)
            np.testing.assert_array_equal(got, shifted(x))

    def spectrum_energy(x, d):
        f = np.fft.fftshift(np.fft.fftfreq(6, d))
        return np.sum(np.fft.irfft(np.fft.rfft(x), n=6) * f) + np.sum(np.fft.rfftfreq(6, d) * x[:4])

    g = gradc.compile(spectrum_energy, x[0], 0.3, wrt=("x", "d")).grad(x[0], 0.3)
    eps = 1e-6
    fd = (spectrum_energy(x[0], 0.3 + eps) - spectrum_energy(x[0], 0.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(g[1], fd, rtol=1e-6)


# ---------------------------------------------------------------- complex inputs and real losses (Parseval)
COMPLEX_IN = [
    ("fft_n_pad", lambda z: np.fft.fft(z, n=7, axis=0), (5, 2)),
    ("ifft_n_cut_ortho", lambda z: np.fft.ifft(z, n=3, norm="ortho"), (2, 5)),
    ("fftn_forward", lambda z: np.fft.fftn(z, norm="forward"), (3, 4)),
    ("ifft2_s", lambda z: np.fft.ifft2(z, s=(2, 5)), (3, 4)),
    ("irfft_even", lambda z: np.fft.irfft(z, n=6), (2, 4)),
    ("irfft_odd_cut", lambda z: np.fft.irfft(z, n=5, axis=0), (4, 2)),
    ("irfftn_default", lambda z: np.fft.irfftn(z, axes=(0, 1)), (3, 4)),
]


@pytest.mark.parametrize("label, fn, shape", COMPLEX_IN, ids=[c[0] for c in COMPLEX_IN])
def test_complex_inputs_vjp_real_and_imaginary_directions(label, fn, shape):
    """JAX's convention: ``Re(sum(z_bar * d)) == Re(sum(ct * J d))`` along real and imaginary ``d``."""
    rng = np.random.default_rng(11)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    want = fn(z)
    compiled = gradc.compile(fn, z, mode="vjp")
    ct = rng.standard_normal(want.shape) + (1j * rng.standard_normal(want.shape) if np.iscomplexobj(want) else 0)
    value, z_bar = compiled.vjp(z, ct)
    np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-10)
    for d in (rng.standard_normal(shape), 1j * rng.standard_normal(shape)):
        np.testing.assert_allclose(np.real(np.sum(z_bar * d)), np.real(np.sum(ct * _central(fn, z, d))),
                                   rtol=1e-6, atol=1e-7)


PARSEVAL = [
    ("rfft_energy", lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2), (6,)),
    ("rfft_energy_odd_axis0", lambda x: np.sum(np.abs(np.fft.rfft(x, axis=0, norm="ortho")) ** 2), (5, 3)),
    ("fft_energy_ortho", lambda x: np.sum(np.abs(np.fft.fft(x, norm="ortho")) ** 2), (2, 7)),
    ("fft2_real_part", lambda x: np.sum(np.fft.fft2(x).real * np.arange(12.0).reshape(3, 4)), (3, 4)),
    ("power_spectrum_log", lambda x: np.sum(np.log1p(np.abs(np.fft.rfftn(x)) ** 2)), (4, 4)),
]


@pytest.mark.parametrize("label, loss, shape", PARSEVAL, ids=[c[0] for c in PARSEVAL])
def test_real_losses_of_spectra(label, loss, shape):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    g = gradc.grad(loss)(x)
    d = rng.standard_normal(shape)
    np.testing.assert_allclose(np.sum(g * d), _central(loss, x, d), rtol=1e-6, atol=1e-7)
    grad_loss = gradc.grad(loss)
    hvp = gradc.grad(lambda x: np.sum(grad_loss(x) * d))(x)
    np.testing.assert_allclose(hvp, _central(grad_loss, x, d, 1e-5), rtol=1e-5, atol=1e-6)


def test_parseval_gradient_is_exact():
    """Parseval with ``norm="ortho"``: ``sum |fft x|^2 = sum x^2``, so the gradient is exactly ``2 x``."""
    x = np.random.default_rng(5).standard_normal(7)
    g = gradc.grad(lambda x: np.sum(np.abs(np.fft.fft(x, norm="ortho")) ** 2))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-12, atol=1e-12)


HERMITIAN = [
    ("hfft", lambda z: np.fft.hfft(z, n=6), "complex", (3, 4)),
    ("hfft_ortho_odd", lambda z: np.fft.hfft(z, n=5, axis=0, norm="ortho"), "complex", (3, 2)),
    ("ihfft_forward", lambda x: np.fft.ihfft(x, norm="forward"), "real", (2, 5)),
    ("ihfft_n_axis0", lambda x: np.fft.ihfft(x, n=4, axis=0), "real", (3, 2)),
]


@pytest.mark.parametrize("label, fn, kind, shape", HERMITIAN, ids=[c[0] for c in HERMITIAN])
def test_hermitian_transforms(label, fn, kind, shape):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if kind == "complex" else 0)
    want = fn(x)
    ct = rng.standard_normal(want.shape) + (1j * rng.standard_normal(want.shape) if np.iscomplexobj(want) else 0)
    value, x_bar = gradc.compile(fn, x, mode="vjp").vjp(x, ct)
    np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-10)
    for d in (rng.standard_normal(shape), 1j * rng.standard_normal(shape))[: 2 if kind == "complex" else 1]:
        np.testing.assert_allclose(np.real(np.sum(x_bar * d)), np.real(np.sum(ct * _central(fn, x, d))),
                                   rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [lambda a: np.fft.rfft(a, n=6), lambda a: np.fft.ifft(a, axis=0, norm="ortho"),
                                lambda a: np.fft.irfft(np.fft.rfft(a) * 2.0, n=5)], ids=["rfft", "ifft", "irfft"])
def test_float32_stays_single_precision(fn):
    x = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    got = gradc.compile(fn, x, mode="vjp").forward(x)
    assert got.dtype == fn(x).dtype
    np.testing.assert_allclose(got, fn(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("label, fn, shape", COMPLEX_IN, ids=[c[0] for c in COMPLEX_IN])
def test_complex_inputs_jvp_real_and_imaginary_directions(label, fn, shape):
    rng = np.random.default_rng(12)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    compiled = gradc.compile(fn, z, mode="jvp")
    for d in (rng.standard_normal(shape) + 0j, 1j * rng.standard_normal(shape)):
        value, tangent = compiled.jvp(z, d)
        np.testing.assert_allclose(value, fn(z), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(tangent, _central(fn, z, d), rtol=1e-6, atol=1e-7)


def test_integer_operands_transform_as_float():
    k = np.arange(4)

    def f(x, k):
        return np.sum(np.abs(np.fft.fft(k) * x) ** 2) + np.sum(np.fft.rfft(k).real * x[:3])

    x = np.random.default_rng(9).standard_normal(4)
    d = np.random.default_rng(10).standard_normal(4)
    g = gradc.grad(f)(x, k)
    np.testing.assert_allclose(np.sum(g * d), _central(lambda x: f(x, k), x, d), rtol=1e-6)
