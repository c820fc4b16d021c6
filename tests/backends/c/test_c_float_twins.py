"""The float versions of the C mathlib's special functions ("computed in double, rounded once").

Every such wrapper in the library is written by one generator (``mathlib.in_double.float_twin``), and each
compiled one returns exactly its double function's value at the widened arguments, rounded once to float,
over seeded random arguments and special values (0, negative, inf, NaN). The double functions' own accuracy
against SciPy is tested in tests/ops/test_special_functions_c.py.
"""
from __future__ import annotations

import ctypes
import re
import subprocess

import numpy as np
import pytest

from gradc.backends.c import build as c_build
from gradc.backends.c import mathlib as c_mathlib
from gradc.backends.c.mathlib.in_double import float_twin

_SIGNATURE = re.compile(r"static inline float gradc_(\w+)f\(([^)]*)\)")
# a float function whose whole body returns a double function's value
_WRAPS = re.compile(r"\bfloat gradc_\w+\([^)]*\)\n\{\n    return \(float\)gradc_\w+\([^;]*\);\n\}$")
_TWINS = {name[len("gradc_"):-1]: text for name, (text, _) in c_mathlib._LIBRARY.items() if _WRAPS.search(text)}


def _params(text):
    return [p.strip() for p in _SIGNATURE.search(text).group(2).split(",")]


def test_every_rounded_once_wrapper_comes_from_the_one_generator():
    assert len(_TWINS) >= 13
    for name, text in _TWINS.items():
        params = ", ".join(p.split()[-1] if p.startswith("float ") else p for p in _params(text))
        assert text == float_twin(name, params)[0], name


def test_float_twin_passes_typed_parameters_and_widens_float_ones():
    text, calls = float_twin("jv", "int v, x")
    assert "static inline float gradc_jvf(int v, float x)" in text
    assert "return (float)gradc_jv(v, (double)x);" in text and calls == ("gradc_jv",)


@pytest.fixture(scope="module")
def twins_library(tmp_path_factory):
    cc = c_build.find_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    loops = []
    for name, text in _TWINS.items():
        params = _params(text)
        args_f, args_d = [], []
        for k, p in enumerate(params):
            kind = p.split()[0]
            cast = {"int": "(int)", "double": "", "float": "(float)"}[kind]
            args_f.append(f"{cast}in{k}[i]")
            args_d.append(f"{cast}in{k}[i]" if kind != "float" else f"(double)(float)in{k}[i]")
        ins = ", ".join(f"const double *in{k}" for k in range(len(params)))
        loops.append(f"void loop_{name}({ins}, float *y, double *yd, long n)\n{{\n"
                     f"    for (long i = 0; i < n; ++i) {{\n        y[i] = gradc_{name}f({', '.join(args_f)});\n"
                     f"        yd[i] = gradc_{name}({', '.join(args_d)});\n    }}\n}}\n")
    tmp = tmp_path_factory.mktemp("float_twins")
    src = tmp / "twins.c"
    src.write_text(c_mathlib.source([f"gradc_{n}f" for n in _TWINS]) + "\n" + "\n".join(loops))
    so = tmp / "twins.so"
    flags = list(c_build.FLAGS) + list(c_build.tuning_flags(cc))
    subprocess.run([cc, *flags, "-Wall", "-Werror", str(src), "-o", str(so), "-lm"], check=True, capture_output=True)
    return ctypes.CDLL(str(so))


def _arguments(params, rng, count):
    columns = []
    for p in params:
        if p.startswith("int "):
            columns.append(rng.integers(0, 5, count).astype(np.float64))
        else:
            x = rng.uniform(-3.0, 12.0, count)
            x[:6] = [0.0, 1.0, 0.5, np.inf, -np.inf, np.nan]
            columns.append(x.astype(np.float32).astype(np.float64))  # float-representable, so the widening is exact
    return columns


_UNIT_LAST = {"erfinv", "erfcinv", "ndtri", "gammaincinv", "gammainccinv", "betainc", "betaincinv", "betainc_da",
              "betainc_db"}


@pytest.mark.parametrize("name", sorted(_TWINS))
def test_float_twin_is_the_double_value_rounded_once(twins_library, name):
    params = _params(_TWINS[name])
    rng = np.random.default_rng(sum(map(ord, name)))
    columns = _arguments(params, rng, 400)
    last = len(params) - 1
    for k in range(len(params)):  # into the domain: positive shapes, probabilities and ratios in [0, 1]
        if name.startswith(("gamma", "beta")):
            columns[k] = np.abs(columns[k]) + (0.0 if k == last else 0.125)
        if name in _UNIT_LAST and k == last:
            with np.errstate(invalid="ignore"):  # sin(inf) is NaN: kept, a NaN argument
                columns[k] = np.abs(np.sin(columns[k])).astype(np.float32).astype(np.float64)
    y = np.empty(400, np.float32)
    yd = np.empty(400, np.float64)
    getattr(twins_library, f"loop_{name}")(*[c.ctypes.data_as(ctypes.c_void_p) for c in columns],
                                           y.ctypes.data_as(ctypes.c_void_p), yd.ctypes.data_as(ctypes.c_void_p),
                                           ctypes.c_long(400))
    with np.errstate(over="ignore", invalid="ignore"):
        expected = yd.astype(np.float32)
    same = (y == expected) | (np.isnan(y) & np.isnan(expected))
    assert same.all(), (name, [c[~same][:3] for c in columns], y[~same][:3], yd[~same][:3])
    assert np.isfinite(y).sum() > 150, name  # the arguments reach the functions' finite range
