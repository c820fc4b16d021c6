"""The C FFT library (``gradc.backends.c.mathlib.fft``) compiled on its own and compared with ``np.fft``.

Lengths cover powers of two (radix 2), primes and other lengths (Bluestein), 1 and 2; lines along the
first, middle and last axis; double and float arrays.
"""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from gradc.backends.c import build as c_build
from gradc.backends.c.mathlib import fft as cfft

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64, 100, 127]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fftlib")
    names = [name for name in cfft.LIBRARY if "_lines_" in name]
    wrappers = []
    for name in names:  # non-static entry points for ctypes
        text = cfft.LIBRARY[name][0]
        params = text.split(name + "(")[1].split(")")[0]
        args = ", ".join(p.split()[-1].lstrip("*") for p in params.split(","))
        wrappers.append(f"int export_{name}({params}) {{ return {name}({args}); }}")
    body = "\n\n".join(text for text, _ in cfft.LIBRARY.values())
    src = "\n".join(["#include <math.h>", *cfft.INCLUDES, "", body, *wrappers, ""])
    (folder / "fft.c").write_text(src)
    so = folder / "fft.so"
    subprocess.run([c_build.find_compiler(), "-std=c99", "-O2", "-Wall", "-Werror", "-fPIC", "-shared",
                    str(folder / "fft.c"), "-o", str(so), "-lm"], check=True)
    return ctypes.CDLL(str(so))


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def _split(shape, axis):
    return int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("sign", [-1, 1])
def test_complex_lines_match_numpy(lib, n, sign):
    rng = np.random.default_rng(n * 7 + sign)
    for shape, axis in [((n,), 0), ((3, n), 1), ((n, 2), 0), ((2, n, 3), 1)]:
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        out = np.empty_like(x)
        outer, length, inner = _split(shape, axis)
        fn = lib.export_gradc_fft_lines_c128
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int]
        assert fn(_ptr(x), _ptr(out), outer, length, inner, sign) == 0
        want = np.fft.fft(x, axis=axis) if sign < 0 else np.fft.ifft(x, axis=axis, norm="forward")
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12 * n)


@pytest.mark.parametrize("n", LENGTHS)
def test_real_lines_match_numpy(lib, n):
    rng = np.random.default_rng(1000 + n)
    for shape, axis in [((n,), 0), ((3, n), 1), ((n, 2), 0)]:
        outer, length, inner = _split(shape, axis)
        x = rng.standard_normal(shape)
        spectrum = np.empty(shape[:axis] + (n // 2 + 1,) + shape[axis + 1:], complex)
        rf = lib.export_gradc_rfft_lines_c128
        rf.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long]
        assert rf(_ptr(x), _ptr(spectrum), outer, length, inner) == 0
        np.testing.assert_allclose(spectrum, np.fft.rfft(x, axis=axis), rtol=1e-12, atol=1e-12 * n)
        # irfft ignores the imaginary parts of bin 0 and (n even) bin n/2, as NumPy does
        c = rng.standard_normal(spectrum.shape) + 1j * rng.standard_normal(spectrum.shape)
        back = np.empty(shape)
        ir = lib.export_gradc_irfft_lines_c128
        ir.argtypes = rf.argtypes
        assert ir(_ptr(c), _ptr(back), outer, length, inner) == 0
        np.testing.assert_allclose(back, np.fft.irfft(c, n, axis=axis, norm="forward"), rtol=1e-12, atol=1e-12 * n)


@pytest.mark.parametrize("n", [5, 8, 12])
def test_float_lines_match_numpy(lib, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))).astype(np.complex64)
    out = np.empty_like(x)
    fn = lib.export_gradc_fft_lines_c64
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int]
    assert fn(_ptr(x), _ptr(out), 2, n, 1, -1) == 0
    np.testing.assert_allclose(out, np.fft.fft(x.astype(complex)), rtol=1e-5, atol=1e-5 * n)
    r = rng.standard_normal((n, 3)).astype(np.float32)
    spectrum = np.empty((n // 2 + 1, 3), np.complex64)
    rf = lib.export_gradc_rfft_lines_c64
    rf.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long]
    assert rf(_ptr(r), _ptr(spectrum), 1, n, 3) == 0
    np.testing.assert_allclose(spectrum, np.fft.rfft(r.astype(float), axis=0), rtol=1e-5, atol=1e-5 * n)
