"""No user name can collide with a name the emitted NumPy module uses: a generator.

The names are read off emitted modules themselves (every ``Name``, parameter and
``def`` of an all-scalar module with its NumPy twins, an array module with named sizes,
a loop, a static argument), together with every builtin and a few dunder and soft-keyword
names. Each becomes a parameter (scalar and array code) and, where a size may be named
so, a named size; the compiled value must equal the user's function and the gradient its
central differences.
"""
from __future__ import annotations

import ast
import builtins
import keyword

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc

NUMPY_FOR_TEST = np  # the user's functions below reach NumPy through this name, which no list holds


def _emitted_modules() -> list:
    def f(x, y):  # all-scalar code (Python floats, math) and its NumPy twins, named after f as the tests' are
        return np.sqrt(x * x + y) / y + np.sin(x) ** 1.5

    scalar = gradc.compile(f, 0.5, 2.0, wrt=(0, 1))
    assert "from math import" in scalar.source

    def sized(a, w, k):
        out = np.tanh(a @ (w * np.array([1.0, 2.0, 3.0])))
        for i in range(k):
            out = out * 0.5 + np.sin(out) * i
        return np.sum(out ** 2) + np.std(a) + k

    arrays = gradc.compile(sized, gradc.spec("f64[n,3]"), np.ones(3), 2, wrt=1)
    loop = gradc.compile(lambda x: gradc.fori_loop(0, 3, lambda i, v: np.sin(v) * x, x), 0.5)
    return [scalar.source, arrays.source, loop.source]


def _names_in(source: str) -> set:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def _hostile_names() -> list:
    names = set().union(*map(_names_in, _emitted_modules()))
    names |= set(dir(builtins)) | {"__builtins__", "__name__", "__file__", "__doc__", "__spec__", "match", "case",
                                   "type", "_", "self", "cls", "with_value", "with_value_", "numpy", "scipy", "math",
                                   "linecache", "sys", "os"}
    names -= {"NUMPY_FOR_TEST", "__debug__"}  # __debug__ cannot be assigned
    return sorted(n for n in names if n.isidentifier() and not keyword.iskeyword(n))


HOSTILE = _hostile_names()
CHUNK = 24


def _chunks():
    return [HOSTILE[k:k + CHUNK] for k in range(0, len(HOSTILE), CHUNK)]


def _make(params: list, body: str):
    namespace = {"NUMPY_FOR_TEST": np}
    exec(f"def f({', '.join(params)}):\n    return {body}\n", namespace)
    return namespace["f"]


def _scalar_body(params):
    pairs = zip(params, params[1:] + params[:1])
    terms = [f"NUMPY_FOR_TEST.sin({p}) * {q} + {p} / (1.0 + {q} * {q})" for p, q in pairs]
    return " + ".join(terms)


def _array_body(params):
    return " + ".join(f"(NUMPY_FOR_TEST.tanh({p}) * {p}).sum() + {p}.std()" for p in params)


def _central_differences(f, args):
    def along(k):
        return lambda v: f(*args[:k], v, *args[k + 1:])
    return [central_gradient(along(k), x) for k, x in enumerate(args)]


def _check(f, args, specs=None):
    compiled = gradc.compile(f, *(specs or args), wrt=tuple(range(len(args))))
    value, grads = compiled(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-11)
    np.testing.assert_allclose(compiled.forward(*args), f(*args), rtol=1e-11)
    for got, want in zip(grads, _central_differences(f, args)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    return compiled


def test_the_list_holds_what_modules_use():
    for name in ["np", "math", "float", "type", "_scalar_argument", "_check_sized", "_bad_argument", "len",
                 "range", "print", "with_value", "sqrt", "sin", "_f_numpy", "_f_grad_numpy", "C0", "_float64"]:
        assert name in HOSTILE


@pytest.mark.parametrize("params", _chunks(), ids=lambda c: f"{c[0]}..{c[-1]}")
def test_every_name_as_a_scalar_parameter(params):
    rng = np.random.default_rng(len(params))
    args = [float(v) for v in rng.uniform(0.2, 1.5, len(params))]
    _check(_make(params, _scalar_body(params)), args)


@pytest.mark.parametrize("params", _chunks(), ids=lambda c: f"{c[0]}..{c[-1]}")
def test_every_name_as_an_array_parameter(params):
    rng = np.random.default_rng(len(params))
    args = [rng.uniform(0.2, 1.5, 2) for _ in params]
    _check(_make(params, _array_body(params)), args)


SIZE_NAMES = [n for n in HOSTILE if not n.startswith("_")]  # gradc.spec takes letters, digits and _ after the first


@pytest.mark.parametrize("sizes", [SIZE_NAMES[k:k + 12] for k in range(0, len(SIZE_NAMES), 12)],
                         ids=lambda c: f"{c[0]}..{c[-1]}")
def test_every_name_as_a_named_size(sizes):
    params = [f"p{k}" for k in range(len(sizes))]
    rng = np.random.default_rng(len(sizes))
    args = [rng.uniform(0.2, 1.5, 2) for _ in params]
    specs = [gradc.spec(f"f64[{s}]") for s in sizes]
    compiled = _check(_make(params, _array_body(params)), args, specs)
    # another length runs too: the sizes are read from the arguments, under the user's names
    longer = [rng.uniform(0.2, 1.5, 3) for _ in params]
    np.testing.assert_allclose(compiled.forward(*longer), _make(params, _array_body(params))(*longer), rtol=1e-11)


def test_a_named_size_called_like_the_value_flag():
    # a gradient that computes the value as well returns it when called with_value=True (value_and_grad
    # delegates to it): a size named so must stay the user's, and the flag steps aside
    f = _make(["x"], "NUMPY_FOR_TEST.log(NUMPY_FOR_TEST.sum(NUMPY_FOR_TEST.exp(x)))")
    compiled = _check(f, [np.array([1.0, 2.0])], [gradc.spec("f64[with_value]")])
    assert "with_value_=True" in compiled.source
