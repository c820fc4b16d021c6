"""The C target: agreement with the NumPy target, determinism, warnings, golden output, errors."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import lowering as c_ops
from gradc.errors import EmitError

HAVE_CC = c_build.find_compiler() is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler found ($CC, cc or gcc)")
GOLDEN = os.path.join(os.path.dirname(__file__), "golden_c")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def tutorial_loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


rng = np.random.default_rng(1)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
V = rng.normal(size=4)
P = rng.uniform(0.5, 2.0, size=(3, 4))
W = rng.normal(size=(2, 3, 4))
IDX = np.array([2, 0, 2, 1])

CASES = {
    "tutorial": (tutorial_loss, (A, (rng.random(3) > 0.5).astype(float), V, np.float64(0.2)), (2, 3)),
    "add_sub_mul_div": (lambda x, y: np.sum((x + y) * x - y / (x * x + 1.0)), (A, P), (0, 1)),
    "pow": (lambda x, y: np.sum(x ** y + x ** 2 + x ** 0.5), (P, A), (0, 1)),
    "max_min": (lambda x, y: np.sum(np.maximum(x, y) * np.minimum(x, 0.1)), (A, P), (0, 1)),
    "logaddexp": (lambda x, y: np.sum(np.logaddexp(x, y)), (A, P), (0, 1)),
    "unary": (lambda x: np.sum(np.sin(x) + np.cos(x) + np.tan(x) + np.tanh(x) + np.arctan(x) + np.sinh(x)
                               + np.cosh(x) + np.expm1(x) - np.abs(x) + np.exp(-x)), (A,), 0),
    "logs": (lambda x: np.sum(np.log(x) * np.sqrt(x) + np.log1p(x)), (P,), 0),
    "where_compare": (lambda x, y: np.sum(np.where(x > y, x * y, np.where(x <= 0.0, -x, y))), (A, P), (0, 1)),
    "clip": (lambda x: np.sum(np.clip(x, -0.5, 0.5) ** 2), (A,), 0),
    "sign_floor": (lambda x: np.sum(x * np.sign(x) + np.floor(x) * x), (A,), 0),
    "matmul_2x2": (lambda a, b: np.sum(np.tanh(a @ b)), (A, B), (0, 1)),
    "matmul_1x2": (lambda v, b: np.sum(np.sin(v @ b)), (V, B), (0, 1)),
    "matmul_2x1": (lambda a, v: np.sum((a @ v) ** 2), (A, V), (0, 1)),
    "matmul_1x1": (lambda v, u: v @ u, (V, V * 2.0), (0, 1)),
    "matmul_batched": (lambda w, b: np.sum(np.exp(w @ b)), (W, B), (0, 1)),
    "transpose": (lambda a: np.sum(a.T @ a * np.arange(4.0)), (A,), 0),
    "transpose3": (lambda w: np.sum(np.transpose(w, (2, 0, 1)) * np.arange(3.0)), (W,), 0),
    "broadcast": (lambda a, v: np.sum((a * v + v[None, :]) ** 2), (A, V), (0, 1)),
    "reductions": (lambda a: np.sum(a, axis=0) @ np.mean(a, axis=1, keepdims=True).sum(axis=0).repeat(4)
                   if False else np.sum(np.sum(a, axis=0) * np.mean(a, axis=1).sum()), (A,), 0),
    "max_reduce": (lambda a: np.sum(np.max(a, axis=1)) + np.min(a), (A,), 0),
    "prod": (lambda a: np.sum(np.prod(a, axis=0)), (P,), 0),
    "keepdims": (lambda a: np.sum(a / np.sum(a, axis=1, keepdims=True)), (P,), 0),
    "softmax": (lambda a: np.sum(np.log(np.sum(np.exp(a - np.max(a, axis=1, keepdims=True)), axis=1))), (A,), 0),
    "reshape": (lambda a: np.sum(np.sin(a.reshape(4, 3)) @ np.ones(3)), (A,), 0),
    "reshape_view": (lambda a: np.sum(np.cos(a.T.reshape(12))), (A,), 0),
    "slicing": (lambda a: np.sum(a[1:, ::2] ** 2) + a[0, 3] * a[2, 1], (A,), 0),
    "concatenate": (lambda a, b: np.sum(np.concatenate([a, b * 2.0], axis=0) ** 3), (A, P), (0, 1)),
    "gather_const": (lambda a: np.sum(a[:, IDX] ** 2) + np.sum(a[IDX[:3], 1]), (A,), 0),
    "gather_input": (lambda a, i: np.sum(a[i] * a[i]), (V, IDX), 0),
    "scalar_only": (lambda x, y: np.sin(x) * y + np.exp(x * y), (0.3, 1.7), (0, 1)),
    "argmax": (lambda a: np.sum(a * np.argmax(a, axis=1)[:, None]), (A,), 0),
    "rosenbrock": (lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2), (V,), 0),
    "scalar_chains": (lambda v, u: np.sin(v @ u) * np.exp(u @ u) + np.sum(v) * np.cos(np.sum(u)), (V, V * 0.5),
                      (0, 1)),
    "argmax_flat": (lambda a: np.sum(a) * np.argmax(a) + np.argmin(a) * np.max(a), (A,), 0),
    "float_int": (lambda a, i: np.sum(a * i), (A, np.arange(12).reshape(3, 4)), 0),
}


def _close(c, n):
    if isinstance(n, tuple):
        assert isinstance(c, tuple) and len(c) == len(n)
        for a, b in zip(c, n):
            _close(a, b)
        return
    assert np.shape(c) == np.shape(n) and np.asarray(c).dtype == np.asarray(n).dtype
    np.testing.assert_allclose(c, n, rtol=1e-12, atol=1e-13)


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_agrees_with_numpy(case):
    f, args, wrt = CASES[case]
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    n = gradc.compile(f, *args, wrt=wrt)
    _close(c.forward(*args), n.forward(*args))
    _close(c.grad(*args), n.grad(*args))
    _close(c(*args), n(*args))


def test_every_op_says_its_c_lowering_at_the_op():
    from gradc.backends.c.emit import FunctionEmitter
    from gradc.ir.registry import OPS
    from gradc.ops import c_spell

    assert [name for name, op in OPS.items() if op.c == c_spell.MISSING] == []
    for name, op in OPS.items():  # a loop kind is a lowering method of the emitter
        assert op.c is None or op.c[0] == "scalar" or hasattr(FunctionEmitter, "op_" + op.c[0]), name
        if op.c is not None:  # an elementwise op may still declare no C lowering (c=None)
            assert op.elementwise == (op.c[0] == "scalar"), name


def test_an_op_registered_without_its_c_facet_counts_as_unsupported(monkeypatch):
    from gradc.ir.registry import OPS

    monkeypatch.setattr(OPS["sin"], "c", "missing")
    assert c_ops.C_LOWERING["sin"] is None


def test_unsupported_ops_reported_at_once(monkeypatch):
    from gradc.ir.registry import OPS

    monkeypatch.setattr(OPS["sin"], "c", None)
    monkeypatch.setattr(OPS["exp"], "c", None)
    with pytest.raises(EmitError, match="no C lowering for ops exp, sin"):
        gradc.compile(lambda x: np.sum(np.sin(x) + np.exp(x)), np.ones(2), target="c")


def test_no_compiler_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CC", "")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(EmitError, match="no C compiler"):
        gradc.compile(lambda x: np.sum(x * x), np.ones(2), target="c")
    f, args, wrt = CASES["tutorial"]
    source, header = c_build.emit_sources_for(f, *args, wrt=wrt)
    assert "void gradc_fn_tutorial_loss_grad(" in source and "void gradc_fn_tutorial_loss_grad(" in header


def _tutorial_sources():
    f, args, wrt = CASES["tutorial"]
    x, y, w, b = np.zeros((5, 3)), np.zeros(5), np.zeros(3), 0.0
    return c_build.emit_sources_for(f, x, y, w, b, wrt=("w", "b"))


def test_golden_tutorial(update_golden):
    source, header = _tutorial_sources()
    for name, text in (("tutorial_loss.c", source), ("tutorial_loss.h", header)):
        path = os.path.join(GOLDEN, name)
        if update_golden or not os.path.exists(path):
            with open(path, "w") as fh:
                fh.write(text)
        with open(path) as fh:
            assert text == fh.read(), f"{name} differs from the golden file"


def test_deterministic_across_hash_seeds():
    code = ("import numpy as np, sys; sys.path.insert(0, 'tests/backends/c'); import test_c_backend as t; "
            "s, h = t._tutorial_sources(); print(s + h); "
            "[print(''.join(t.c_build.emit_sources_for(f, *a, wrt=w))) for f, a, w in t.CASES.values()]")
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        root = str(pathlib.Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        outs.append(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert outs[0] == outs[1] and "void gradc_fn_tutorial_loss_grad(" in outs[0]


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiles_without_warnings(case, tmp_path):
    cc = shutil.which("gcc") or c_build.find_compiler()
    f, args, wrt = CASES[case]
    source, _ = c_build.emit_sources_for(f, *args, wrt=wrt)
    path = tmp_path / "m.c"
    path.write_text(source)
    proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", str(path), "-o",
                           str(tmp_path / "m.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@needs_cc
def test_large_arrays_use_a_work_buffer():
    x = rng.normal(size=(100, 100))
    f = lambda a: np.sum(np.tanh(a @ a) * a)  # noqa: E731
    c = gradc.compile(f, x, target="c")
    assert "double *work" in c.header
    _close(c(x), gradc.compile(f, x)(x))


@needs_cc
def test_float32_and_bad_arguments():
    x = rng.normal(size=5).astype(np.float32)
    f = lambda a: np.sum(np.exp(a) * a)  # noqa: E731
    c = gradc.compile(f, x, target="c")
    assert "const float *restrict a" in c.c_source
    np.testing.assert_allclose(c.grad(x), gradc.compile(f, x).grad(x), rtol=1e-5)
    with pytest.raises(ValueError, match="argument 'a'"):
        c.grad(np.ones(4, np.float32))


@needs_cc
def test_fast_entry_points_and_fallbacks():
    f, args, wrt = CASES["tutorial"]
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    n = gradc.compile(f, *args, wrt=wrt)
    from gradc.backends.c import pyglue as c_pyglue

    assert c.fast == (c_pyglue.python_include() is not None)
    x = np.asfortranarray(args[0])  # not C-contiguous: the ctypes path copies it
    _close(c(x, *args[1:]), n(*args))
    _close(c(*args[:3], 0.2), n(*args))  # Python float for the scalar b
    _close(c(*args[:3], np.array(0.2)), n(*args))
    with pytest.raises(ValueError, match="argument 'x'"):
        c(args[0][:2], *args[1:])
    with pytest.raises(TypeError):
        c(*args[:3])
    for _ in range(3):  # results are fresh arrays owned by the caller
        _, (g1, _) = c(*args)
        _, (g2, _) = c(*args)
        assert g1 is not g2 and np.array_equal(g1, g2)


@needs_cc
def test_float32_scalars_take_the_fast_entry_points():
    from gradc.backends.c import pyglue as c_pyglue

    def f(x, s):
        return np.sum(np.exp(x)) * s

    x, s = np.linspace(-1, 1, 5).astype(np.float32), np.float32(2.0)
    c = gradc.compile(f, x, s, wrt=(0, 1), target="c")
    n = gradc.compile(f, x, s, wrt=(0, 1))
    assert c.fast == (c_pyglue.python_include() is not None)
    if c.fast:
        assert type(c.value_and_grad).__name__ == "builtin_function_or_method"
    for got in (c.value_and_grad(x, s), c._slow_value_and_grad(x, s), c.value_and_grad(x, 2.0)):
        (value, (x_bar, s_bar)), (ev, (ex, es)) = got, n.value_and_grad(x, s)
        assert type(value) is np.float32 and type(s_bar) is np.float32 and x_bar.dtype == np.float32
        np.testing.assert_allclose([value, s_bar], [ev, es], rtol=1e-6)
        np.testing.assert_allclose(x_bar, ex, rtol=1e-6)


@needs_cc
def test_header_abi_from_plain_c(tmp_path):
    """A C program includes the header, links the unit, and gets the NumPy target's numbers."""
    f, args, wrt = CASES["tutorial"]
    source, header = c_build.emit_sources_for(f, *args, wrt=wrt)
    (tmp_path / "loss.c").write_text(source)
    (tmp_path / "loss.h").write_text(header)
    x, y, w, b = args

    def arr(name, values):
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in np.ravel(values))}}};"

    main = "\n".join(['#include <stdio.h>', '#include "loss.h"', arr("x", x), arr("y", y), arr("w", w),
                      arr("b", [b]), "int main(void)", "{", "    double value, w_bar[4], b_bar;",
                      "    gradc_fn_tutorial_loss_grad(x, y, w, b, &value, w_bar, &b_bar);",
                      '    printf("%.17g %.17g %.17g %.17g %.17g %.17g\\n", value, w_bar[0], w_bar[1], w_bar[2], '
                      "w_bar[3], b_bar);", "    return 0;", "}", ""])
    (tmp_path / "main.c").write_text(main)
    cc = c_build.find_compiler()
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-o", str(exe), str(tmp_path / "main.c"),
                    str(tmp_path / "loss.c"), "-lm"], check=True, capture_output=True)
    got = [float(v) for v in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]
    value, (w_bar, b_bar) = gradc.compile(f, *args, wrt=wrt)(*args)
    np.testing.assert_allclose(got, [value, *w_bar, b_bar], rtol=1e-12, atol=1e-14)
    assert "size_t gradc_fn_tutorial_loss_grad_work_size(void);" in header


@needs_cc
@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (g++) found")
def test_header_from_cplusplus(tmp_path):
    """A C++ program includes the header (C linkage, no `restrict`) and links the C unit."""
    f, args, wrt = CASES["tutorial"]
    source, header = c_build.emit_sources_for(f, *args, wrt=wrt)
    (tmp_path / "loss.c").write_text(source)
    (tmp_path / "loss.h").write_text(header)
    x, y, w, b = (np.ravel(a).tolist() for a in args)
    main = "\n".join(['#include <cstdio>', '#include <vector>', '#include "loss.h"', "int main()", "{",
                      f"    std::vector<double> x{{{', '.join(map(repr, x))}}}, y{{{', '.join(map(repr, y))}}};",
                      f"    std::vector<double> w{{{', '.join(map(repr, w))}}}, b{{{', '.join(map(repr, b))}}};",
                      "    double value, w_bar[4], b_bar;",
                      "    gradc_fn_tutorial_loss_grad(x.data(), y.data(), w.data(), b.data(), &value, w_bar, &b_bar);",
                      '    std::printf("%.17g %.17g\\n", value, b_bar);', "    return 0;", "}", ""])
    (tmp_path / "main.cpp").write_text(main)
    cc = c_build.find_compiler()
    subprocess.run([cc, "-std=c99", "-O2", "-c", "-o", str(tmp_path / "loss.o"), str(tmp_path / "loss.c")],
                   check=True, capture_output=True)
    exe = tmp_path / "main"
    subprocess.run(["g++", "-Wall", "-Wextra", "-Werror", "-O2", "-o", str(exe), str(tmp_path / "main.cpp"),
                    str(tmp_path / "loss.o"), "-lm"], check=True, capture_output=True)
    got = [float(v) for v in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]
    value, (_, b_bar) = gradc.compile(f, *args, wrt=wrt)(*args)
    np.testing.assert_allclose(got, [value, b_bar], rtol=1e-12, atol=1e-14)
    assert 'extern "C"' in header and "restrict" not in header


NAN_CASES = {
    # (not maximum + minimum: SymPy simplifies the gradient 1 - h + h to 1, which differs only at NaN)
    "maximum": lambda x, y: np.sum(np.maximum(x, y) * 2.0 + np.minimum(y, x) * 3.0),
    "clip": lambda x, y: np.sum(np.clip(x, -0.5, 0.5) * y),
    "max_reduce": lambda x, y: np.max(x * y, axis=0) @ np.min(x, axis=0),
    "argmax": lambda x, y: np.sum(np.argmax(x, axis=0) * np.sign(y[0])),
    "logaddexp": lambda x, y: np.sum(np.logaddexp(x, y)),
}


@needs_cc
@pytest.mark.parametrize("case", sorted(NAN_CASES))
def test_nan_and_inf_as_numpy(case):
    x = np.array([[1.0, np.nan, -np.inf], [2.0, 0.0, np.inf]])
    y = np.array([[np.nan, 1.0, -np.inf], [0.0, 3.0, np.inf]])
    f = NAN_CASES[case]
    with np.errstate(all="ignore"):
        expected = gradc.compile(f, x, y, wrt=(0, 1))(x, y)
        got = gradc.compile(f, x, y, wrt=(0, 1), target="c")(x, y)
    _close(got, expected)


def _example(name):
    import importlib.util

    path = os.path.join(str(pathlib.Path(__file__).resolve().parents[3]), "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_c_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _example_cases():
    r = np.random.default_rng(7)
    t = np.linspace(0.0, 3.0, 20)
    x2 = r.normal(size=(12, 2))
    return {
        "curve_fit.sse": ("curve_fit", "sse", (t, np.exp(-t), 1.2, 0.7, 0.1), ("a", "k", "c")),
        "logistic.loss": ("logistic", "loss", (A, (r.random(3) > 0.5).astype(float), V, 0.1), ("w", "b")),
        "mlp_train.loss": ("mlp_train", "loss", (x2, r.integers(0, 3, 12), r.normal(size=(2, 5)), r.normal(size=5),
                                                 r.normal(size=(5, 3)), r.normal(size=3)), ("w1", "b1", "w2", "b2")),
        "rosenbrock_scipy.rosenbrock": ("rosenbrock_scipy", "rosenbrock", (r.normal(size=6),), 0),
    }


@needs_cc
@pytest.mark.parametrize("case", sorted(_example_cases()))
def test_examples_agree_with_numpy(case):
    module, fn, args, wrt = _example_cases()[case]
    f = getattr(_example(module), fn)
    _close(gradc.compile(f, *args, wrt=wrt, target="c")(*args), gradc.compile(f, *args, wrt=wrt)(*args))


@needs_cc
def test_intermediate_named_like_an_output_parameter():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda x: np.sum(np.sin(x.reshape(3, 2).T.reshape(2, 3)))  # noqa: E731
    _close(gradc.compile(f, x, target="c")(x), gradc.compile(f, x)(x))


@pytest.mark.parametrize("case", sorted(CASES))
def test_reentrant_no_heap_no_mutable_statics(case):
    import re

    f, args, wrt = CASES[case]
    source, header = c_build.emit_sources_for(f, *args, wrt=wrt)
    assert not re.search(r"\b(malloc|calloc|realloc|free|alloca)\s*\(", source)
    statics = [line for line in source.splitlines() if line.startswith("static")]
    # static data must be const; static functions (the emitted math helpers) hold no state
    data = [line for line in statics if not re.match(r"static (inline )?[\w ]+\*?\s*\w+\(", line)]
    assert all(line.startswith("static const ") for line in data), data
    assert "#include" in header and all(inc in source for inc in ("<math.h>", "<stdint.h>"))


@needs_cc
def test_dead_arrays_are_reused_and_threads_agree():
    import re
    from concurrent.futures import ThreadPoolExecutor

    m = rng.normal(size=(6, 6)) / 3.0

    def chain(a):
        for _ in range(5):
            a = np.tanh(a @ m)
        return np.sum(a)

    x = rng.normal(size=(6, 6))
    c = gradc.compile(chain, x, target="c")
    body = c.c_source[c.c_source.index("void gradc_fn_chain_grad("):]
    assert len(re.findall(r"^    double \w+\[36\];", body, re.M)) < 10 and "is dead from here" in body
    n = gradc.compile(chain, x)
    inputs = [x + 0.01 * k for k in range(16)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda a: c(a), inputs))
    for a, got in zip(inputs, results):
        _close(got, n(a))


@needs_cc
def test_ctypes_path_without_python_headers(monkeypatch):
    from gradc.backends.c import pyglue as c_pyglue

    monkeypatch.setattr(c_pyglue, "python_include", lambda: None)
    f, args, wrt = CASES["tutorial"]
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    assert not c.fast
    n = gradc.compile(f, *args, wrt=wrt)
    _close(c(*args), n(*args))
    _close(c.forward(*args), n.forward(*args))
    _close(c.grad(*args), n.grad(*args))


@needs_cc
def test_astype_to_float32_rounds_inside_a_double_loop():
    # x -> float32 -> float64 in one fused loop: NumPy rounds at the astype, so must the C code
    def f(x, k):
        return np.sum(x.astype(np.float32).astype(np.float64) * 3.0 + k.astype(np.float32) * 0.5)

    x = np.array([1.0 + 2.0 ** -30, 2.0, 1.0 / 3.0])
    k = np.array([2 ** 24 + 1, 3, 2 ** 25 + 3], dtype=np.int64)
    n = gradc.compile(f, x, k)
    c = gradc.compile(f, x, k, target="c")
    assert c.forward(x, k) == n.forward(x, k)
    np.testing.assert_array_equal(c.grad(x, k), n.grad(x, k))


@needs_cc
def test_cache_key_of_an_extension_includes_the_python(monkeypatch):
    import sys

    source = "int gradc_cache_probe(void) { return 1; }\n"
    glue = "#include <Python.h>\nint gradc_cache_probe_glue;\n"
    plain, with_glue = c_build.build(source, "probe"), c_build.build(source, "probe", glue)
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert c_build.build(source, "probe") == plain  # plain C does not depend on the Python
    assert c_build.build(source, "probe", glue) != with_glue


@needs_cc
def test_an_unloadable_cached_object_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(c_build, "build", lambda *a, **k: str(tmp_path / "broken.so"))
    (tmp_path / "broken.so").write_text("not an object file")
    with pytest.raises(EmitError, match="could not load the compiled C") as info:
        gradc.compile(lambda x: np.sum(x * x), np.ones(2), target="c")
    assert "delete" in str(info.value)


@needs_cc
def test_squares_are_products_so_loops_keep_vector_math():
    # x**2 printed as pow() would be a libm call in the loop, which keeps exp on libm's scalar version
    def f(x):
        return np.sum(np.exp(-(x - 1.0) ** 2) + x ** 2)

    x = np.linspace(-2.0, 2.0, 64)
    c = gradc.compile(f, x, target="c")
    assert "pow(" not in c.c_source and "gradc_exp(-(q0*q0))" in c.c_source  # q0 = x[k] - 1.0
    _close(c(x), gradc.compile(f, x)(x))


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler")
def test_a_compiler_crash_at_O3_is_built_again_at_O2(monkeypatch, tmp_path, caplog):
    """GCC 12.2 crashes at -O3 on some vectorised selects of booleans: an internal compiler error is the
    compiler's fault, so the same source is built at -O2 (and said so); any other failure stays an error."""
    real = c_build.find_compiler()
    crashing = tmp_path / "cc"
    crashing.write_text("#!/bin/sh\n"
                        "case \" $* \" in *\" -O3 \"*)"
                        " echo 'module.c:9:1: internal compiler error: in extract_insn' >&2; exit 1;; esac\n"
                        f"exec {real} \"$@\"\n")
    crashing.chmod(0o755)
    monkeypatch.setenv("CC", str(crashing))
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path / "cache"))
    x = np.linspace(-1.0, 1.0, 5)
    with caplog.at_level("WARNING", logger="gradc.backends.c"):
        compiled = gradc.compile(lambda x: np.sum(np.where(x > 0, x, 2 * x) ** 2), x, target="c")
    np.testing.assert_allclose(compiled.grad(x), np.where(x > 0, 2 * x, 8 * x))
    assert "crashed at -O3" in caplog.text
    crashing.write_text("#!/bin/sh\necho 'module.c:1:1: error: expected expression' >&2\nexit 1\n")
    with pytest.raises(EmitError, match="expected expression"):
        gradc.compile(lambda x: np.sum(np.cos(x)), x, target="c")
