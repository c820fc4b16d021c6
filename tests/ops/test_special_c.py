"""The C target's special functions: gradc's C math library (digamma, erfinv, erfcinv, ndtri, log_ndtr) against
SciPy (and mpmath), and the C spellings of NumPy's and SciPy's functions on special values."""
from __future__ import annotations

import functools

import numpy as np
import op_cases  # noqa: F401  (first: it merges op_cases_special)
import pytest
import scipy.special

import gradc

# ---------------------------------------------------------------- C: gradc's digamma, erfinv, ... (in its C mathlib)
C_MATHLIB = ("digamma", "erfinv", "erfcinv", "ndtri", "log_ndtr")


def _c_mathlib(tmp_path):
    """``call(x, name)``: gradc's C function ``gradc_<name>`` (``<name>f`` for float32 ``x``) on each element."""
    import ctypes
    import subprocess

    from gradc.backends.c import build as c_build
    from gradc.backends.c import mathlib as c_mathlib

    cc = c_build.find_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    names = [f"gradc_{n}{suffix}" for n in C_MATHLIB for suffix in ("", "f")]
    loop = "void loop_{0}(const {1} *x, {1} *y, long n)\n{{\n    for (long i = 0; i < n; ++i) y[i] = {0}(x[i]);\n}}\n"
    loops = [loop.format(name, "float" if name.endswith("f") else "double") for name in names]
    src = tmp_path / "special.c"
    src.write_text(c_mathlib.source(names) + "\n" + "\n".join(loops))
    so = tmp_path / "special.so"
    flags = list(c_build.FLAGS) + list(c_build.tuning_flags(cc))
    subprocess.run([cc, *flags, "-Wall", "-Werror", str(src), "-o", str(so), "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(so))

    def call(x, name):
        x = np.ascontiguousarray(x)
        y = np.empty_like(x)
        suffix = "f" if x.dtype == np.float32 else ""
        getattr(lib, f"loop_gradc_{name}{suffix}")(x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p),
                                                   ctypes.c_long(x.size))
        return y
    return call


def test_c_digamma_agrees_with_scipy(tmp_path):
    call = functools.partial(_c_mathlib(tmp_path), name="digamma")
    positive = np.concatenate([np.geomspace(1e-300, 1e300, 3000), np.linspace(0.01, 30.0, 3000),
                               [1.4616321449683622, 1.0, 2.0, 0.5]])
    negative = -np.linspace(0.013, 40.0, 3001)
    negative = negative[np.abs(negative - np.round(negative)) > 1e-3]
    # 1e-15 of the terms the recurrence sums, relative elsewhere (digamma crosses zero near 1.46)
    np.testing.assert_allclose(call(positive), scipy.special.digamma(positive), rtol=2e-14, atol=1e-14)
    # near the poles SciPy's own reflection loses digits (5e-14 relative): there mpmath (SymPy's) is the reference
    np.testing.assert_allclose(call(negative), scipy.special.digamma(negative), rtol=1e-13, atol=1e-14)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(30):
        exact = np.array([float(mpmath.digamma(mpmath.mpf(float(v)))) for v in negative[::7]])
    np.testing.assert_allclose(call(negative[::7]), exact, rtol=4e-15, atol=1e-15)
    special = np.array([0.0, -0.0, -1.0, -7.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(call(special), scipy.special.digamma(special))
    x32 = np.linspace(0.05, 20.0, 999, dtype=np.float32)
    np.testing.assert_allclose(call(x32), scipy.special.digamma(x32), rtol=2e-7, atol=1e-7)


def test_c_erfinv_erfcinv_ndtri_log_ndtr_agree_with_scipy(tmp_path):
    call = _c_mathlib(tmp_path)
    y = np.concatenate([np.linspace(-0.999999, 0.999999, 4001), 1 - np.geomspace(1e-16, 1e-3, 400), [1e-300, -1e-12]])
    z = np.concatenate([np.geomspace(1e-300, 1.0, 3000), 2.0 - np.geomspace(1e-16, 1.0, 500)])
    p = np.concatenate([np.geomspace(1e-300, 0.5, 2000), 1.0 - np.geomspace(1e-16, 0.5, 500)])
    a = np.concatenate([-np.geomspace(1.0, 1e150, 2000), np.linspace(-40.0, 12.0, 5201)])
    for name, x in (("erfinv", y), ("erfcinv", z), ("ndtri", p), ("log_ndtr", a)):
        expected = getattr(scipy.special, name)(x)
        np.testing.assert_allclose(call(x, name), expected, rtol=1e-14, atol=1e-300, err_msg=name)
        special = np.array([-np.inf, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 2.5, np.inf, np.nan])
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(call(special, name), getattr(scipy.special, name)(special), rtol=1e-15,
                                       err_msg=name)
        x32 = x[(np.abs(x) > 1e-30) & (np.abs(x) < 1e30)].astype(np.float32)
        np.testing.assert_allclose(call(x32, name), getattr(scipy.special, name)(x32), rtol=3e-7, err_msg=name)


def _c_forward(fn, *args):
    from gradc.backends.c import build as c_build

    if c_build.find_compiler() is None:
        pytest.skip("no C compiler")
    return gradc.compile(fn, *args, target="c", mode="vjp").forward(*args)


C_UNARY = [np.arcsin, np.arccos, np.arcsinh, np.arccosh, np.arctanh, np.log2, np.log10, np.exp2, np.cbrt, np.sinc,
           np.rint, np.ceil, np.trunc, lambda a: np.round(a, 2), lambda a: np.round(a, -1), scipy.special.erf,
           scipy.special.erfc, scipy.special.ndtr, scipy.special.gammaln, scipy.special.gamma, scipy.special.expit,
           scipy.special.logit, scipy.special.log_expit, scipy.special.entr, np.nan_to_num,
           lambda a: np.isinf(a) * 1.0, lambda a: np.isfinite(a) * 1.0, lambda a: np.signbit(a) * 1.0]
C_BINARY = [np.arctan2, np.hypot, np.logaddexp2, np.fmax, np.fmin, np.copysign, np.mod, np.fmod, np.floor_divide,
            scipy.special.xlogy, scipy.special.xlog1py, scipy.special.rel_entr, scipy.special.kl_div]


def test_c_target_matches_numpy_and_scipy_on_special_values():
    values = np.array([-np.inf, -2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 0.6, 1.0, 1.5, 2.5, 7.0, np.inf, np.nan])
    x, y = (a.ravel().copy() for a in np.meshgrid(values, values))
    with np.errstate(all="ignore"):
        unary = _c_forward(lambda a: np.stack([f(a) for f in C_UNARY]), values)
        binary = _c_forward(lambda a, b: np.stack([f(a, b) for f in C_BINARY]), x, y)
        np.testing.assert_allclose(unary, np.stack([f(values) for f in C_UNARY]), rtol=1e-13, atol=0)
        np.testing.assert_allclose(binary, np.stack([f(x, y) for f in C_BINARY]), rtol=1e-13, atol=0)


def test_c_target_integer_mod_and_floor_divide_follow_python():
    i, j, w = np.array([-7, -3, 0, 3, 7, 8, -8]), np.array([3, -3, 5, 2, -2, 3, 3]), np.ones(7)

    def f(w, a, b):
        return w * np.stack([np.mod(a, b), np.floor_divide(a, b), np.fmod(a, b), np.fmax(a, b), np.fmin(a, b)])

    np.testing.assert_array_equal(_c_forward(f, w, i, j), f(w, i, j))
