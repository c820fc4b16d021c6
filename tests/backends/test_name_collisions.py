"""Generated names never collide with the user's, in either backend.

A parameter or function may be called ``np``, ``float``, ``_check_array``, ``C0``, ``int``,
``NULL``, ``value`` next to ``value_``, ``x`` next to ``x_bar``...: the emitted module or C unit
keeps the user's names (where the language allows them) and still computes the right value
and gradient, checked against NumPy and central finite differences.
"""
import ast
import os
import shutil
import subprocess

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import emit_sources_for, find_compiler

# names the NumPy module itself uses: imports, helpers, dtype objects, constants, builtins, math functions
NUMPY_NAMES = ["np", "math", "_check_array", "_bad_argument", "_scalar_argument", "_bad_static", "_float64",
               "_float32", "C0", "C1", "t0", "t1", "type", "float", "ValueError", "TypeError", "getattr",
               "isinstance", "tuple", "bool", "str", "slice", "max", "min", "sin", "cos", "sqrt", "exp",
               "x_bar", "value", "lambda_", "print", "f_grad", "f_value_and_grad", "array"]
# names C, C++, the C library or the C emitter take
C_NAMES = ["int", "double", "float", "restrict", "NULL", "INFINITY", "NAN", "value", "work", "n", "i0", "i1", "k",
           "q0", "a0", "G0", "C0", "acc", "best", "aik", "sin", "exp", "isnan", "fabs", "fma", "size_t",
           "int64_t", "errno", "NDEBUG", "main", "template", "new", "this", "gradc_sin", "gradc_select", "EDOM",
           "HUGE_VAL", "INT32_MAX", "_x", "x__y", "memcpy", "y1", "j0", "gamma", "setup", "objects", "PyObject",
           "module", "methods", "forward", "s", "p", "o", "result", "nargs", "args", "unix", "bool", "true",
           "complex", "\u03b4", "x\u00e9"]
# pairs whose derived names meet: an input called like another's gradient, or like a renamed one
PAIRS = [("x", "x_bar"), ("value", "value_"), ("int", "int_"), ("x_bar", "x"), ("t0", "t0_bar"),
         ("value", "value_bar"), ("NULL", "NULL_"), ("k", "k_"), ("work", "work_"), ("i0", "i0_")]
FUNCTION_NAMES = ["np", "_check_array", "float", "type", "C0", "sin", "main", "setup", "PyObject", "value",
                  "int", "max", "math", "_float64"]


def make(params, body, name="f"):
    """A function defined from source text, so that any parameter name can be used."""
    namespace: dict = {}
    exec(f"def {name}({', '.join(params)}):\n    return {body}\n", namespace)
    return namespace[name]


def array_function(a, b, name="f"):
    # operators and methods only: a parameter called np must not break the user's own code
    return make([a, b], f"(({a} * {b}) ** 2).sum() + ({a}[0] * {b}).sum() + ({a} @ {b}) * 0.5", name)


def scalar_function(a, b, name="f"):
    return make([a, b], f"{a} * {b} + {a} ** 2 - {b} / 3.0", name)


def central_differences(f, args, h=1e-6):
    grads = []
    for i, x in enumerate(args):
        x = np.asarray(x, dtype=np.float64)
        g = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            lo = list(args)
            hi = list(args)
            hi[i] = up if x.shape else float(up)
            lo[i] = down if x.shape else float(down)
            g[j] = (f(*hi) - f(*lo)) / (2 * h)
        grads.append(g if x.shape else float(g))
    return grads


ARRAYS = (np.array([0.3, -0.7, 1.1]), np.array([1.2, 0.4, -0.5]))
SCALARS = (0.7, -1.3)


def check(f, args, target):
    compiled = gradc.compile(f, *args, wrt=(0, 1), target=target)
    value, grads = compiled(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, central_differences(f, args)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert compiled.forward(*args) == pytest.approx(f(*args), rel=1e-12, abs=1e-12)
    return compiled


@pytest.mark.parametrize("name", NUMPY_NAMES + C_NAMES[:12])
@pytest.mark.parametrize("kind", ["array", "scalar"])
def test_parameter_name_numpy(name, kind):
    if not name.isidentifier():
        pytest.skip("not a Python identifier")
    other = "y" if name != "y" else "z"
    f = (array_function if kind == "array" else scalar_function)(name, other)
    compiled = check(f, ARRAYS if kind == "array" else SCALARS, "numpy")
    tree = ast.parse(compiled.source)
    fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "f_grad")
    assert [a.arg for a in fn.args.args] == [name, other]  # the user's names, kept as written


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_function_name_numpy(name):
    check(array_function("x", "y", name), ARRAYS, "numpy")
    compiled = check(scalar_function("x", "y", name), SCALARS, "numpy")
    assert compiled.name == name


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_name_pairs_numpy(pair):
    check(array_function(*pair), ARRAYS, "numpy")


def test_ordinary_names_unchanged():
    """With ordinary names nothing is renamed: the import is ``np`` and there is no alias line."""
    source = gradc.compile(array_function("x", "w"), *ARRAYS, wrt=(0, 1)).source
    assert "import numpy as np\n" in source
    assert "np_" not in source and "_ = " not in source


def test_renamed_import_and_builtin_alias():
    source = gradc.compile(scalar_function("np", "float"), *SCALARS, wrt=(0, 1)).source
    tree = ast.parse(source)
    fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "f")
    assert [a.arg for a in fn.args.args] == ["np", "float"]
    assert "float_ = float" in source  # the check `type(x) is not float` still means the builtin


needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


C_CASES = [(name, "y" if name != "y" else "z") for name in C_NAMES if name.isidentifier()] + PAIRS


@pytest.fixture(scope="module")
def c_unit():
    """Every parameter-name case as one C unit (one build; the Python glue never sees parameter names)."""
    import ctypes
    import re

    from gradc.backends.c.build import _CFunction, build, function_names, output_names
    from gradc.backends.c.emit import emit_c
    from gradc.passes import optimize
    from gradc.trace import trace
    from gradc.transforms import reverse as ad

    functions, entries = [], []
    for n, pair in enumerate(C_CASES):
        f = array_function(*pair, name=f"case{n}")
        graph = trace(f, *ARRAYS)
        wrt = [v.name for v in graph.inputs]
        vg = optimize(ad.value_and_grad_graph(graph, wrt, name=f"case{n}_value_and_grad"))
        value, bars = output_names(graph, wrt)
        name, grad_name = function_names(graph.name)
        functions.append((vg, grad_name, [value] + bars, "case"))
        entries.append((f, grad_name, vg))
    source, _ = emit_c(functions, ["name collisions"], "GRADC_NAMES_H")
    lib = ctypes.CDLL(build(source, "names"))
    out = {}
    for pair, (f, grad_name, vg) in zip(C_CASES, entries):
        work = int(re.search(rf"size_t {grad_name}_work_size\(void\)\n{{\n    return (\d+);", source).group(1))
        out[pair] = (f, _CFunction(lib, grad_name, vg, work))
    return out


@needs_cc
@pytest.mark.parametrize("pair", C_CASES, ids="+".join)
def test_parameter_name_c(c_unit, pair):
    f, value_and_grad = c_unit[pair]
    value, *grads = value_and_grad(*ARRAYS)
    np.testing.assert_allclose(value, f(*ARRAYS), rtol=1e-12)
    for got, want in zip(grads, central_differences(f, ARRAYS)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@needs_cc
@pytest.mark.parametrize("pair", PAIRS[:4], ids="+".join)
def test_name_pairs_c(pair):
    check(array_function(*pair), ARRAYS, "c")  # the whole path: CCompiled and its Python glue


@needs_cc
@pytest.mark.parametrize("name", ["sin", "main", "setup", "PyObject", "int", "C0", "gradc_exp", "value"])
def test_function_name_c(name):
    check(scalar_function("x", "y", name), SCALARS, "c")


@needs_cc
def test_every_name_compiles_as_c_and_cpp(tmp_path):
    """All names at once: each unit compiles as C99 without warnings; all headers together as C++."""
    cxx = shutil.which("g++") or shutil.which("c++")
    units = [(array_function(name, "y" if name != "y" else "z", f"f{n}"), ARRAYS)
             for n, name in enumerate(dict.fromkeys(C_NAMES + NUMPY_NAMES)) if name.isidentifier()]
    units += [(scalar_function("x", "y", name), SCALARS) for name in FUNCTION_NAMES + ["NULL", "errno", "new"]]
    sources, includes = [], []
    for n, (f, args) in enumerate(units):
        source, header = emit_sources_for(f, *args, wrt=(0, 1))
        (tmp_path / f"u{n}.c").write_text(source)
        (tmp_path / f"u{n}.h").write_text(header)
        sources.append(str(tmp_path / f"u{n}.c"))
        includes.append(f'#include "u{n}.h"')
    proc = subprocess.run([find_compiler(), "-std=c99", "-Wall", "-Werror", "-fsyntax-only", *sources],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
    if cxx:  # C++ callers include the header: no C++ keyword, no clash between the units' names
        (tmp_path / "main.cpp").write_text("\n".join(includes) + "\nint main() { return 0; }\n")
        proc = subprocess.run([cxx, "-fsyntax-only", "-Wall", "-Werror", "main.cpp"], capture_output=True,
                              text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[:3000]


def test_c_names_are_plain_and_distinct():
    from gradc.backends.c.names import assign, is_plain

    names = C_NAMES + NUMPY_NAMES + [a for pair in PAIRS for a in pair]
    out = assign(list(dict.fromkeys(names)))
    assert len(set(out.values())) == len(out)
    assert all(is_plain(v) for v in out.values())
    assert out["x"] == "x" and out["value"] == "value" and out["n"] == "n"  # plain names are kept


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([os.path.abspath(__file__), "-q"]))


@pytest.mark.parametrize("name", ["class", "None", "1abc", "x\u00b2", "caf\u00e9", "lambda"])
def test_function_dunder_name_that_is_no_identifier(name):
    """A ``__name__`` set to a keyword or a non-identifier is renamed or refused clearly, never a SyntaxError."""
    f = scalar_function("x", "y")
    f.__name__ = name
    try:
        compiled = gradc.compile(f, *SCALARS, wrt=(0, 1))
    except gradc.GradcError as err:
        assert "\n" not in str(err) and "identifier" in str(err)
        return
    value, _ = compiled(*SCALARS)
    assert value == pytest.approx(f(*SCALARS))
