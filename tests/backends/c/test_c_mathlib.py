"""gradc's vectorisable C math (gradc/backends/c/mathlib.py) against mpmath, NumPy and libm.

Each function is compiled into a small shared library (the C target's own flags)
as a loop over an array, the way the emitted code calls it, and checked:

* over dense sweeps of its range against mpmath at 120 bits: maximum error in ulps
  of the correctly rounded result, float64 and float32 (``python tests/test_c_mathlib.py``
  prints the table);
* against NumPy on the same sweeps to 1e-12 relative (float64), as the C target's
  agreement tests need;
* on special values (NaN, ±inf, ±0, subnormals, overflow and underflow thresholds,
  the poles and the edges of the domain) exactly as NumPy: same value, same sign of
  zero, NaN where NumPy gives NaN;
* and that the compiler really vectorises the loops (gcc only).
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import platform
import subprocess
import sys

import mpmath
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))

from gradc.backends.c import build as c_build
from gradc.backends.c import mathlib as c_mathlib  # noqa: E402

CC = c_build.find_compiler()
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler found ($CC, cc or gcc)")

# sin and cos: the branch-free versions over their range |x| <= c_mathlib.LIMITS, the scalar ones everywhere
FUNCS = ("exp", "log", "log1p", "expm1", "tanh", "sinh", "cosh", "sin", "cos", "tan", "sin_scalar", "cos_scalar",
         "tan_scalar")
VECTOR_FUNCS = FUNCS[:-3]
TRIG = ("sin", "cos", "tan", "sin_scalar", "cos_scalar", "tan_scalar")
DTYPES = {"f64": np.float64, "f32": np.float32}
CTYPE = {"f64": "double", "f32": "float"}
NAMES = {dtype: {**c_mathlib.VECTOR_NAMES[dtype], **c_mathlib.LIMITED_NAMES[dtype],
                 **{fn + "_scalar": name for fn, name in c_mathlib.SCALAR_NAMES[dtype].items()}} for dtype in DTYPES}
MP = {"exp": mpmath.exp, "log": mpmath.log, "log1p": mpmath.log1p, "expm1": mpmath.expm1, "tanh": mpmath.tanh,
      "sinh": mpmath.sinh, "cosh": mpmath.cosh, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
      "sin_scalar": mpmath.sin, "cos_scalar": mpmath.cos, "tan_scalar": mpmath.tan}
NP = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh, "sinh": np.sinh,
      "cosh": np.cosh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "sin_scalar": np.sin,
      "cos_scalar": np.cos, "tan_scalar": np.tan}
# largest error allowed, in ulps of the correctly rounded result (measured maxima are a little below)
MAX_ULP = {("f64", "exp"): 1.0, ("f64", "log"): 1.0, ("f64", "log1p"): 1.0, ("f64", "expm1"): 2.0,
           ("f64", "tanh"): 2.5, ("f32", "exp"): 1.0, ("f32", "log"): 1.0, ("f32", "log1p"): 1.0,
           ("f32", "expm1"): 2.0, ("f32", "tanh"): 2.5, ("f64", "sinh"): 2.5, ("f64", "cosh"): 2.5,
           ("f32", "sinh"): 2.5, ("f32", "cosh"): 2.5, ("f64", "sin"): 1.0, ("f64", "cos"): 1.0,
           ("f32", "sin"): 1.0, ("f32", "cos"): 1.0, ("f64", "sin_scalar"): 1.0, ("f64", "cos_scalar"): 1.0,
           ("f32", "sin_scalar"): 1.0, ("f32", "cos_scalar"): 1.0, ("f64", "tan"): 2.0, ("f32", "tan"): 1.0,
           ("f64", "tan_scalar"): 2.0, ("f32", "tan_scalar"): 1.0}


def _source() -> str:
    names = [name for table in NAMES.values() for name in table.values()] + list(c_mathlib.SINCOS_NAMES.values())
    parts = [c_mathlib.source(names)]
    for dtype, name in c_mathlib.SINCOS_NAMES.items():
        t = CTYPE[dtype]
        parts.append(f"void loop_{name}(const {t} *restrict x, {t} *restrict s, {t} *restrict c, long n)\n{{\n"
                     f"    for (long i = 0; i < n; ++i) {{\n        {name}(x[i], &s[i], &c[i]);\n    }}\n}}\n")
    for dtype, table in NAMES.items():
        t = CTYPE[dtype]
        for name in table.values():
            parts.append(f"void loop_{name}(const {t} *restrict x, {t} *restrict y, long n)\n{{\n"
                         f"    for (long i = 0; i < n; ++i) {{\n        y[i] = {name}(x[i]);\n    }}\n}}\n")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler")
    return _build(str(tmp_path_factory.mktemp("mathlib")))


def _build(tmp):
    src = os.path.join(tmp, "mathlib.c")
    with open(src, "w") as fh:
        fh.write(_source())
    so = os.path.join(tmp, "mathlib.so")
    flags = list(c_build.FLAGS) + list(c_build.tuning_flags(CC))
    subprocess.run([CC, *flags, src, "-o", so, "-lm"], check=True, capture_output=True)
    return ctypes.CDLL(so)


def call(lib, dtype, fn, x):
    x = np.ascontiguousarray(x, dtype=DTYPES[dtype])
    y = np.empty_like(x)
    getattr(lib, "loop_" + NAMES[dtype][fn])(
        x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(x.size))
    return y


def sweep(dtype, fn, n=4000):
    """Dense points over the function's whole finite range, both signs, all magnitudes."""
    rng = np.random.default_rng(7)
    f32 = dtype == "f32"
    big = {"exp": (104.0 if f32 else 746.0), "expm1": (104.0 if f32 else 746.0), "tanh": (12.0 if f32 else 25.0),
           "sinh": (90.0 if f32 else 711.0), "cosh": (90.0 if f32 else 711.0),
           "sin": c_mathlib.LIMITS[dtype], "cos": c_mathlib.LIMITS[dtype], "sin_scalar": (3e38 if f32 else 1e300),
           "cos_scalar": (3e38 if f32 else 1e300), "tan": c_mathlib.LIMITS[dtype],
           "tan_scalar": (3e38 if f32 else 1e300)}
    if fn in ("log", "log1p"):
        tiny, huge = (1e-45, 3e38) if f32 else (5e-324, 1.7e308)
        mags = np.exp(rng.uniform(np.log(tiny), np.log(huge), n))
        x = np.concatenate([mags, rng.uniform(0.3, 3.0, n)])
        if fn == "log1p":
            x = np.concatenate([x, -np.exp(rng.uniform(np.log(tiny), 0.0, n)), rng.uniform(-0.7, 0.5, n)])
            x = x[x > -1]
    else:
        lim = big[fn]
        mags = np.exp(rng.uniform(np.log(1e-40 if f32 else 1e-300), np.log(lim), n))
        x = np.concatenate([mags, -mags, rng.uniform(-lim, lim, n), rng.uniform(-1.5, 1.5, n)])
        if fn in TRIG:  # around the multiples of pi/2, where reduction cancels
            k = rng.integers(1, int(min(lim, c_mathlib.LIMITS[dtype])), n)
            near = (k * (np.pi / 2)).astype(DTYPES[dtype])
            at_limit = 4 * c_mathlib.LIMITS[dtype] * rng.uniform(-1, 1, n if "scalar" in fn else 0)
            x = np.concatenate([x, near, -near, at_limit])
    return np.unique(x.astype(DTYPES[dtype]))


def ulp_errors(y, x, dtype, fn):
    """|y - f(x)| in ulps of f(x) correctly rounded to ``dtype`` (0 where both are the same infinity)."""
    dt = DTYPES[dtype]
    with mpmath.workprec(120):
        out = np.empty(len(x))
        for i, (xi, yi) in enumerate(zip(x.tolist(), y.tolist())):
            ref = MP[fn](mpmath.mpf(xi))
            with np.errstate(over="ignore"):
                rounded = dt(float(ref))
            if not np.isfinite(rounded) or not np.isfinite(yi):
                out[i] = 0.0 if yi == rounded else np.inf
                continue
            ulp = float(np.spacing(np.abs(rounded)))
            out[i] = float(abs(mpmath.mpf(yi) - ref) / ulp)
    return out


def error_table(lib):
    """``{(dtype, fn): (max ulp, argmax x)}`` over the sweeps."""
    table = {}
    for dtype in DTYPES:
        for fn in FUNCS:
            x = sweep(dtype, fn)
            e = ulp_errors(call(lib, dtype, fn, x), x, dtype, fn)
            table[dtype, fn] = (float(e.max()), x[int(np.argmax(e))])
    return table


@needs_cc
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("fn", FUNCS)
def test_within_ulps_of_mpmath(lib, dtype, fn):
    x = sweep(dtype, fn)
    e = ulp_errors(call(lib, dtype, fn, x), x, dtype, fn)
    worst = int(np.argmax(e))
    assert e[worst] <= MAX_ULP[dtype, fn], f"{dtype} {fn}({x[worst]!r}): {e[worst]:.3f} ulp"


@needs_cc
@pytest.mark.parametrize("fn", FUNCS)
def test_agrees_with_numpy_to_1e_12(lib, fn):
    x = sweep("f64", fn, n=20000)
    with np.errstate(over="ignore"):
        y, ref = call(lib, "f64", fn, x), NP[fn](x)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=0)


@needs_cc
@pytest.mark.parametrize("fn", FUNCS)
def test_float32_agrees_with_numpy(lib, fn):
    x = sweep("f32", fn, n=20000)
    with np.errstate(over="ignore"):
        y, ref = call(lib, "f32", fn, x), NP[fn](x)
    tiny = np.finfo(np.float32).smallest_subnormal  # subnormal results: a few steps
    np.testing.assert_allclose(y, ref, rtol=4 * np.finfo(np.float32).eps, atol=4 * tiny)


def special_values(dtype, fn=""):
    dt = DTYPES[dtype]
    fi = np.finfo(dt)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, 0.5, -0.5,
            float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) / 3, -float(fi.tiny) / 3, float(fi.max), -float(fi.max), float(fi.eps), -float(fi.eps),
            float(np.nextafter(dt(-1), dt(0))), float(np.nextafter(dt(-1), dt(-2))), -2.0, -1e300, 1e-300,
            1e-30, -1e-30, 1e-8, -1e-8, 20.0, -20.0, 25.0, -25.0, 40.0, -40.0, 50.0, -50.0]
    if dtype == "f64":
        vals += [709.782712893384, 709.7827128933841, 709.78, 709.79, 710.0, -708.39641853226408, -708.4,
                 -745.1332191019411, -745.1332191019412, -745.2, -746.0, -744.0, -720.0, -37.5, -38.0, 22.0, -22.0,
                 710.4758600739439, 710.475860073944, -710.4758600739439, -710.475860073944, 711.0, 1.0, -1.0,
                 0.34657359027997264, 0.3465735902799727, 21.999999999999996]
    else:
        vals += [88.72283, 88.72284, 88.8, 89.0, -87.33654, -87.4, -103.27893, -103.97208, -104.0, -100.0,
                 -95.0, -17.0, -18.0, 9.0, -9.0, 10.0, -10.0, 89.41598, 89.41599, -89.41598, -89.41599, 90.0,
                 0.34657359, 8.999999]
    if fn in TRIG:  # multiples of pi/2, the range limits, large arguments
        lim = c_mathlib.LIMITS[dtype]
        vals += [np.pi / 4, np.nextafter(np.pi / 4, 1), np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi, 1e5, 1e10, 1e20,
                 1e300, -1e10, 355.0, 103993.0, 710.0, 1e6, lim, -lim, float(np.nextafter(dt(lim), dt(np.inf))),
                 float(np.nextafter(dt(lim), dt(0))), 2.0 ** 1023, 6381956970095103 * 2.0 ** 797, 5.0e22]
        vals += [k * np.pi / 2 for k in (3, 5, 7, 100, 1000, 12345, 123456, 654321)]
    with np.errstate(over="ignore"):
        x = np.array(vals, dtype=dt)
    return np.concatenate([x, fi.smallest_subnormal * np.arange(1, 40, dtype=dt),
                           -fi.smallest_subnormal * np.arange(1, 40, dtype=dt)])


@needs_cc
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("fn", FUNCS)
def test_special_values_as_numpy(lib, dtype, fn):
    x = special_values(dtype, fn)
    if fn in ("sin", "cos", "tan"):  # the branch-free versions: NaN and infinities, and finite values in range
        x = x[~np.isfinite(x) | (np.abs(x) <= c_mathlib.LIMITS[dtype])]
    y = call(lib, dtype, fn, x)
    with np.errstate(all="ignore"):
        ref = NP[fn](x)
    assert np.array_equal(np.isnan(y), np.isnan(ref)), x[np.isnan(y) != np.isnan(ref)]
    ok = ~np.isnan(ref)
    assert np.array_equal(np.signbit(y[ok]), np.signbit(ref[ok])), x[ok][np.signbit(y[ok]) != np.signbit(ref[ok])]
    assert np.array_equal(np.isinf(y), np.isinf(ref)), x[np.isinf(y) != np.isinf(ref)]
    fin = ok & np.isfinite(ref)
    # subnormal results: within one subnormal step; otherwise within the ulp bound of the sweeps
    scale = np.maximum(np.spacing(np.abs(ref[fin])), np.finfo(DTYPES[dtype]).smallest_subnormal)
    err = np.abs(y[fin].astype(np.float64) - ref[fin].astype(np.float64)) / scale.astype(np.float64)
    if fn in TRIG:  # beyond the limit the scalar versions are libm's: glibc's tan is 14 ulp from NumPy's at one
        libm = np.abs(x[fin]) > c_mathlib.LIMITS[dtype]
        yl, rl = y[fin][libm].astype(np.float64), ref[fin][libm].astype(np.float64)
        rel = np.abs(yl - rl) / np.abs(rl)
        assert rel.max(initial=0) <= (1e-12 if dtype == "f64" else 1e-6), x[fin][libm][np.argmax(rel)]
        err = err[~libm]
    assert err.max(initial=0) <= MAX_ULP[dtype, fn] + 1, x[fin][np.argmax(err)]


@needs_cc
def test_exact_identities(lib):
    for dtype, dt in DTYPES.items():
        one = np.array([0.0, -0.0, 1.0], dtype=dt)
        assert call(lib, dtype, "exp", one[:2]).tolist() == [1.0, 1.0]
        assert call(lib, dtype, "log", one[2:]).tolist() == [0.0]
        assert call(lib, dtype, "cosh", one[:2]).tolist() == [1.0, 1.0]
        assert call(lib, dtype, "cos", one[:2]).tolist() == [1.0, 1.0]
        assert call(lib, dtype, "cos_scalar", one[:2]).tolist() == [1.0, 1.0]
        # odd at zero: the sign of zero kept, tiny x returned as is
        for fn in ("log1p", "expm1", "tanh", "sinh", "sin", "sin_scalar", "tan", "tan_scalar"):
            y = call(lib, dtype, fn, one[:2])
            assert y.tolist() == [0.0, 0.0] and np.signbit(y).tolist() == [False, True]


def _skip_unless_gcc_vectorises(machine):
    """The vectoriser checks read gcc's report, for this machine's tuning or plain AVX2 on x86-64."""
    if "gcc" not in os.path.basename(CC) and b"Free Software Foundation" not in subprocess.run(
            [CC, "--version"], capture_output=True).stdout:
        pytest.skip("the vectoriser report is gcc's")
    if machine == "avx2" and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86-64 only")
    if machine == "tuned" and "GRADC_CFLAGS" in os.environ:
        pytest.skip("$GRADC_CFLAGS replaces the tuning (plain x86-64, SSE2 only, keeps the float64 loops scalar)")


@needs_cc
@pytest.mark.parametrize("machine", ["tuned", "avx2"])
def test_loops_vectorise(tmp_path, machine):
    """Without AVX-512's masks too: a branch around a computation would stop gcc (-ftrapping-math)."""
    _skip_unless_gcc_vectorises(machine)
    src = tmp_path / "m.c"
    src.write_text(_source())
    tuning = ["-mavx2", "-mfma", "-fno-math-errno"] if machine == "avx2" else list(c_build.tuning_flags(CC))
    flags = list(c_build.FLAGS) + tuning
    out = subprocess.run([CC, *flags, "-fopt-info-vec-optimized", str(src), "-o", str(tmp_path / "m.so")],
                         capture_output=True, text=True, check=True).stderr
    loops = [n for n, line in enumerate(src.read_text().splitlines(), 1) if line.startswith("    for (long i")]
    vectorised = {int(line.split(":")[1]) for line in out.splitlines() if "loop vectorized" in line}
    lines = src.read_text().splitlines()
    loops = [n for n in loops if "_scalar(" not in lines[n]]  # the scalar versions branch: they stay scalar
    assert len(loops) == 2 * len(VECTOR_FUNCS) and set(loops) <= vectorised, (loops, sorted(vectorised))


@needs_cc
def test_emitted_warning_free(tmp_path):
    src = tmp_path / "m.c"
    src.write_text(_source())
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", str(src),
                    "-o", str(tmp_path / "m.o")], check=True)


@needs_cc
@pytest.mark.parametrize("machine", ["tuned", "avx2"])
def test_emitted_elementwise_loops_vectorise(tmp_path, machine):
    """The loops gradc emits around its math (logistic loss and gradient, float64 and float32) vectorise."""
    import re

    import gradc

    _skip_unless_gcc_vectorises(machine)

    def loss(x, y, w, b):
        z = x @ w + b
        return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(np.exp(-np.abs(z))) + np.tanh(z) * np.expm1(-z * z)
                       + np.sin(z) * np.cos(2.0 * z))

    r = np.random.default_rng(0)
    tuning = ["-mavx2", "-mfma", "-fno-math-errno"] if machine == "avx2" else list(c_build.tuning_flags(CC))
    for dt in (np.float64, np.float32):
        args = [r.normal(size=(64, 7)), r.normal(size=(64, 3)), r.normal(size=(7, 3)), r.normal(size=3)]
        src = gradc.compile(loss, *[a.astype(dt) for a in args], wrt=(2, 3), target="c").c_source
        path = tmp_path / f"loss_{np.dtype(dt).name}.c"
        path.write_text(src)
        out = subprocess.run([CC, *c_build.FLAGS, *tuning, "-fopt-info-vec-optimized", str(path), "-o",
                              str(tmp_path / "loss.so")], capture_output=True, text=True, check=True).stderr
        lines = src.splitlines()
        # the loops calling gradc's math (not the fix-up loops after them: those run scalar, rarely)
        loops = [n for n, line in enumerate(lines, 1)
                 if line.lstrip().startswith("for (long k = 0;") and not lines[n].lstrip().startswith("if (")
                 and re.search(r"gradc_(exp|log|tanh|sin|cos)", lines[n + 1] + lines[n] + lines[n + 2])]
        vectorised = {int(line.split(":")[1]) for line in out.splitlines() if "loop vectorized" in line}
        assert len(loops) >= 2 and set(loops) <= vectorised, (dt, loops, sorted(vectorised))


def test_loops_call_gradc_math_only_where_they_vectorise():
    """A loop that also calls libm's arctan stays scalar: there libm's exp is the faster, sin gradc's scalar one (a
    branch to libm's for large arguments); scalars keep libm's exp. A loop with sin and cos vectorises: it notes
    arguments beyond gradc_sin's range, and a second loop recomputes just those elements, only if there are any."""
    from gradc.backends.c.emit import emit_c
    from gradc.trace import trace

    x = np.linspace(0.1, 1.0, 12).reshape(3, 4)
    src = emit_c([(trace(lambda x: np.exp(x) * np.log1p(x), x), "f", ["value"], "vector")], ["t"], "T_H")[0]
    assert "gradc_exp(x[k])*gradc_log1p(x[k])" in src and "static inline double gradc_exp(double x)" in src
    src = emit_c([(trace(lambda x: np.exp(x) * np.arctan(x) + np.sin(x), x), "f", ["value"], "libm")], ["t"],
                 "T_H")[0]
    assert "exp(x[k])*atan(x[k]) + gradc_sin_scalar(x[k])" in src and "gradc_exp" not in src
    src = emit_c([(trace(lambda x: np.exp(x) * 2.0, np.float64(0.5)), "f", ["value"], "scalar")], ["t"], "T_H")[0]
    assert "2.0*exp(x[0])" in src and "gradc_" not in src
    src = emit_c([(trace(lambda x: np.exp(x) * np.sin(x), x), "f", ["value"], "sin")], ["t"], "T_H")[0]
    body = src[src.index("void f("):]
    assert "int q0 = 0;" in body and "value[k] = gradc_exp(x[k])*gradc_sin(x[k]);" in body
    assert "q0 |= (fabs(x[k]) > 0x1p20);" in body and "if (q0) {" in body and "if ((fabs(x[k]) > 0x1p20)) {" in body
    assert "value[k] = exp(x[k])*gradc_sin_scalar(x[k]);" in body
    src = emit_c([(trace(lambda x: np.cos(x * x), x.astype(np.float32)), "f", ["value"], "cos")], ["t"], "T_H")[0]
    assert "(fabsf(x[k]*x[k]) > 0x1p28F)" in src and "gradc_cosf(" in src and "gradc_cosf_scalar(" in src


@needs_cc
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_sin_cos_loops_agree_with_numpy_everywhere(dt):
    """Arrays with some arguments beyond gradc_sin's range (and ±0, ±inf, NaN): the fix-up loop gives libm's."""
    import gradc

    def g(x, b):
        return np.sin(x * 2.0 + b) * np.exp(-x * x * 1e-12) + np.cos(x) * np.tanh(x) + np.tan(x * 0.5)

    def f(x, b, w):  # the gradient with respect to w is g(x, b)
        return np.sum(g(x, b) * w)

    rng = np.random.default_rng(3)
    special = [0.0, -0.0, 1e5, 1e10, -1e300 if dt == np.float64 else -1e30, -2.0 ** 20, 2.0 ** 20 + 1, 3e8,
               np.pi / 2 * 12345, np.inf, -np.inf, np.nan, 2.0 ** 28, 5e8]
    x = np.concatenate([rng.uniform(-10, 10, 64 - len(special)), special]).astype(dt).reshape(8, 8)
    b = rng.uniform(-1, 1, 8).astype(dt)
    w = np.ones((8, 8), dt)
    c = gradc.compile(f, x, b, w, wrt="w", target="c")
    sfx = "f" if dt == np.float32 else ""
    assert f"gradc_sin{sfx}(" in c.c_source and f"gradc_sin{sfx}_scalar(" in c.c_source
    with np.errstate(all="ignore"):
        ref = g(x, b)  # in float32 for float32: 2x + b rounds as the C code rounds it
        y = c.grad(x, b, w)
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(y[ok], ref[ok], rtol=1e-12 if dt == np.float64 else 1e-5,
                               atol=0 if dt == np.float64 else 1e-6)
    zero = c.grad(np.full((8, 8), -0.0, dt), np.full(8, -0.0, dt), w)  # sin(-0), cos(-0) * tanh(-0), tan(-0): -0
    assert zero.tolist() == np.zeros((8, 8)).tolist() and np.signbit(zero).all()


@needs_cc
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_sincos_is_sin_and_cos(lib, dtype):
    """gradc_sincos_scalar (sin and cos of one argument in scalar code) gives the very bits of the two calls."""
    x = np.concatenate([sweep(dtype, "sin_scalar"), special_values(dtype, "sin_scalar")])
    s, c = np.empty_like(x), np.empty_like(x)
    getattr(lib, "loop_" + c_mathlib.SINCOS_NAMES[dtype])(*(a.ctypes.data_as(ctypes.c_void_p) for a in (x, s, c)),
                                                          ctypes.c_long(x.size))
    for got, fn in ((s, "sin_scalar"), (c, "cos_scalar")):
        assert got.tobytes() == call(lib, dtype, fn, x).tobytes(), fn


@needs_cc
def test_scalar_workload_uses_gradc_sin_cos():
    """The benchmark's scalar workload (sin(x)*exp(y) + x*y**2 and its gradient) calls gradc's scalar sincos,
    which agree with NumPy's everywhere: small, reduced, past the range of the reduction (libm's), ±0, ±inf, NaN."""
    import gradc

    def f(x, y):
        return np.sin(x) * np.exp(y) + x * y ** 2

    c = gradc.compile(f, 0.7, -0.3, wrt=(0, 1), target="c")
    assert "gradc_sincos_scalar(x[0], &q3, &q4);" in c.c_source
    for x in [0.7, -0.0, 0.0, 2.5, -100.0, 1e5, 2.0 ** 20, 1048576.5, 1e10, -1e300, 1e300, np.pi / 2, np.inf, np.nan]:
        value, (gx, gy) = c.value_and_grad(x, -0.3)
        with np.errstate(invalid="ignore"):
            ref = (np.sin(x) * np.exp(-0.3) + x * 0.09, np.cos(x) * np.exp(-0.3) + 0.09)
        np.testing.assert_allclose([value, gx], ref, rtol=1e-12, atol=0)
        if x == 0.0:
            assert value == 0.0 and gx == np.exp(-0.3) + 0.09


if __name__ == "__main__":  # the table of measured errors
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        table = error_table(_build(tmp))
    print("| function | float64 max ulp | float32 max ulp |")
    print("|---|---:|---:|")
    for fn in FUNCS:
        print(f"| {fn} | {table['f64', fn][0]:.3f} (x={table['f64', fn][1]!r}) "
              f"| {table['f32', fn][0]:.3f} (x={table['f32', fn][1]!r}) |")
