"""Compiled objects as objects: ``.source`` on every kind, pickling (in this process), notebook display.

Every kind: ``gradc.compile`` on the NumPy, array-API and C targets, in every mode; the
``Compiled`` objects of ``gradc.dask``; and the transforms ``gradc.grad(f)`` returns. Results
of unpickled objects are compared with the user's function and central differences, not
only with the object before pickling. Fresh processes: ``test_compiled_processes.py``.
"""
from __future__ import annotations

import html
import pickle
import sys

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.api import compile as gradc_compile
from gradc.backends.c.build import CCompiled, find_compiler
from gradc.backends.c.unit import CUnit
from gradc.derivatives.modes import Unit
from gradc.errors import EmitError

MODES = ("vjp", "jvp", "jacobian", "hessian", "hvp")
needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def loss(x, w):
    """A module-level loss: pickles by reference."""
    return np.sum(np.tanh(x @ w) ** 2) + 0.5 * np.sum(w * w)


def vector_fn(x):
    return np.sin(x) * x[0]


def scalar_fn(x):
    return np.sum(np.exp(0.3 * x) * x ** 2)


@gradc.grad
def decorated(x):
    return np.sum(np.cos(x))


ARGS = (np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.3, -0.7]))


def fd_gradient(f, args, k):
    """Central differences of scalar ``f`` with respect to argument ``k`` (the others fixed)."""
    return central_gradient(lambda v: f(*args[:k], v, *args[k + 1:]), args[k])


# ---------------------------------------------------------------- .source on every kind
def test_numpy_and_array_api_objects_have_source():
    for target in ("numpy", "array_api"):
        c = gradc_compile(loss, *ARGS, wrt=(0, 1), target=target)
        assert isinstance(c.source, str) and "def loss_grad(" in c.source


@pytest.mark.parametrize("mode", MODES)
def test_mode_objects_have_source(mode):
    f = scalar_fn if mode in ("hessian", "hvp") else vector_fn
    u = gradc_compile(f, np.ones(3), mode=mode)
    assert isinstance(u, Unit) and f"def {f.__name__}_{mode}(" in u.source


@needs_cc
def test_c_object_has_source_beside_header_and_c_source_alias():
    c = gradc_compile(loss, *ARGS, wrt=1, target="c")
    assert isinstance(c, CCompiled)
    assert "void gradc_fn_loss_grad(" in c.source and c.c_source == c.source
    assert c.header != c.source and "gradc_fn_loss_grad(" in c.header
    assert "older name" in type(c).c_source.__doc__  # documented as the alias


@needs_cc
@pytest.mark.parametrize("mode", ("jvp", "hessian"))
def test_c_mode_objects_have_source(mode):
    f = scalar_fn if mode == "hessian" else vector_fn
    u = gradc_compile(f, np.ones(3), mode=mode, target="c")
    assert isinstance(u, CUnit) and f"gradc_fn_{f.__name__}_{mode}(" in u.source
    assert u.c_source == u.source and u.header != u.source


def test_dask_compiled_objects_have_source():
    pytest.importorskip("dask.array")
    import gradc.dask

    vg = gradc.dask.value_and_grad(lambda w, X: np.sum((X @ w) ** 2), rows="X")
    vg(np.ones(2), np.ones((4, 2)))
    (compiled, _), = vg.compiled.values()
    assert "def lambda__value_and_grad(" in compiled.source or "_value_and_grad(" in compiled.source
    again = pickle.loads(pickle.dumps(compiled))
    X = np.arange(8.0).reshape(4, 2)
    assert np.allclose(again.grad(np.ones(2), X), compiled.grad(np.ones(2), X))


# ---------------------------------------------------------------- pickling in this process
def test_numpy_compiled_round_trip_matches_the_function_and_differences():
    c = gradc_compile(loss, *ARGS, wrt=(0, 1))
    again = pickle.loads(pickle.dumps(c))
    assert type(again) is type(c) and again.source == c.source and again.wrt == c.wrt
    assert str(again.graph) == str(c.graph) and str(again.value_and_grad_graph) == str(c.value_and_grad_graph)
    value, (gx, gw) = again(*ARGS)
    assert np.isclose(again.forward(*ARGS), loss(*ARGS)) and np.isclose(value, loss(*ARGS))
    assert np.allclose(gx, fd_gradient(loss, ARGS, 0), atol=1e-6)
    assert np.allclose(gw, fd_gradient(loss, ARGS, 1), atol=1e-6)
    twice = pickle.loads(pickle.dumps(again))  # an unpickled object pickles again
    assert twice.source == c.source and np.allclose(twice.grad(*ARGS)[1], gw)


def test_unpickled_code_keeps_its_argument_checks():
    again = pickle.loads(pickle.dumps(gradc_compile(loss, *ARGS)))
    with pytest.raises(ValueError, match="x"):
        again.grad(np.ones((4, 2)), ARGS[1])


def test_round_trip_on_random_programs():
    """Seeded random compositions of elementwise ops and reductions, several shapes and wrt choices."""
    rng = np.random.default_rng(20261128)
    unary = [np.sin, np.cos, np.tanh, np.exp, lambda v: v * v, lambda v: np.log1p(v * v)]
    for trial in range(12):
        ops = [unary[k] for k in rng.integers(0, len(unary), size=3)]
        shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(1, 3))))

        f = _program(*ops)

        args = (rng.normal(size=shape), rng.normal(size=shape))
        wrt = [0, 1, (0, 1)][trial % 3]
        c = gradc_compile(f, *args, wrt=wrt)
        again = pickle.loads(pickle.dumps(c))
        grads = again.grad(*args)
        for k, g in zip(wrt if isinstance(wrt, tuple) else (wrt,), grads if isinstance(wrt, tuple) else (grads,)):
            assert np.allclose(g, fd_gradient(f, args, k), rtol=1e-5, atol=1e-6), (trial, k)
        assert np.isclose(again.forward(*args), f(*args))


def _program(u, v, w):
    def f(a, b):
        return np.sum(u(a) * v(b) + w(a + b))
    return f


def test_named_sizes_round_trip():
    c = gradc_compile(lambda x: np.mean(x ** 2), gradc.spec("f64[n]"))
    again = pickle.loads(pickle.dumps(c))
    for n in (1, 4):
        x = np.arange(float(n))
        assert np.allclose(again.grad(x), 2 * x / n)


def test_loops_round_trip():
    def f(x):
        return np.sum(gradc.fori_loop(0, 4, lambda i, c: np.sin(c) * x, x))

    x = np.array([0.2, -0.4])
    again = pickle.loads(pickle.dumps(gradc_compile(f, x)))
    assert np.allclose(again.grad(x), fd_gradient(f, (x,), 0), atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_mode_objects_round_trip(mode):
    f = scalar_fn if mode in ("hessian", "hvp") else vector_fn
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, -0.25])
    u = gradc_compile(f, x, mode=mode)
    again = pickle.loads(pickle.dumps(u))
    assert again.source == u.source and set(again.graphs) == set(u.graphs)
    args = {"vjp": (x, np.ones(3)), "jvp": (x, t), "jacobian": (x,), "hessian": (x,), "hvp": (x, t)}[mode]
    expected, got = getattr(u, mode)(*args), getattr(again, mode)(*args)
    for e, g in zip(np.atleast_1d(np.asarray(expected, dtype=object)), np.atleast_1d(np.asarray(got, dtype=object))):
        assert np.allclose(np.asarray(e, dtype=float), np.asarray(g, dtype=float))
    assert np.allclose(again.forward(x), f(x))
    if mode == "jacobian":  # against differences of the user's function itself
        fd = np.stack([fd_gradient(lambda v, i=i: f(v)[i], (x,), 0) for i in range(3)])
        assert np.allclose(got, fd, atol=1e-6)


def test_array_api_round_trip():
    c = gradc_compile(scalar_fn, np.ones(3), target="array_api")
    again = pickle.loads(pickle.dumps(c))
    x = np.array([0.1, 0.2, 0.3])
    assert np.allclose(again.grad(x), fd_gradient(scalar_fn, (x,), 0), atol=1e-6)


@needs_cc
def test_c_round_trip_uses_the_cache_and_rebuilds_without_it(tmp_path, monkeypatch):
    c = gradc_compile(loss, *ARGS, wrt=(0, 1), target="c")
    data = pickle.dumps(c)
    assert len(data) < 20 * len(c.source) + 100_000  # the source and graphs, not the shared object
    again = pickle.loads(data)
    assert again.library_path == c.library_path  # the same cached object
    value, (gx, gw) = again.value_and_grad(*ARGS)
    assert np.isclose(value, loss(*ARGS)) and np.allclose(gw, fd_gradient(loss, ARGS, 1), atol=1e-6)
    empty = tmp_path / "cache"
    empty.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(empty))
    rebuilt = pickle.loads(data)  # no cache: built again
    assert rebuilt.library_path.startswith(str(empty))
    assert np.allclose(rebuilt.grad(*ARGS)[0], fd_gradient(loss, ARGS, 0), atol=1e-6)
    assert np.isclose(rebuilt(*ARGS)[0], loss(*ARGS))


@needs_cc
def test_c_mode_round_trip(tmp_path, monkeypatch):
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, -0.25])
    u = gradc_compile(scalar_fn, x, mode="hvp", target="c")
    empty = tmp_path / "cache"
    empty.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(empty))
    again = pickle.loads(pickle.dumps(u))
    assert again.library_path.startswith(str(empty)) and again.source == u.source
    hess = np.stack([fd_gradient(lambda v, i=i: gradc.grad(scalar_fn)(v)[i], (x,), 0) for i in range(3)])
    assert np.allclose(again.hvp(x, t), hess @ t, atol=1e-5)


@needs_cc
def test_c_unpickled_without_compiler_or_cache_says_why(tmp_path, monkeypatch):
    data = pickle.dumps(gradc_compile(scalar_fn, np.ones(3), target="c"))
    empty = tmp_path / "cache"
    empty.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(empty))
    monkeypatch.setattr("gradc.backends.c.build.find_compiler", lambda: None)
    with pytest.raises(EmitError, match="no C compiler found"):
        pickle.loads(data)


# ---------------------------------------------------------------- transforms: pickled by their function
def test_transform_of_a_module_level_function_pickles():
    df = gradc.grad(loss, wrt=1)
    first = df(*ARGS)
    again = pickle.loads(pickle.dumps(df))
    assert again.cache == {}  # compiled code is not pickled: compiled again on first use
    assert np.allclose(again(*ARGS), first) and np.allclose(first, fd_gradient(loss, ARGS, 1), atol=1e-6)
    vg = pickle.loads(pickle.dumps(gradc.value_and_grad(scalar_fn)))
    value, g = vg(np.ones(3))
    assert np.isclose(value, scalar_fn(np.ones(3))) and np.allclose(g, fd_gradient(scalar_fn, (np.ones(3),), 0))


def test_decorated_module_level_function_pickles_by_reference():
    decorated(np.ones(2))  # a compiled signature in its cache
    again = pickle.loads(pickle.dumps(decorated))
    assert again is decorated
    assert np.allclose(again(np.array([0.5])), -np.sin(0.5))


def test_transform_of_a_lambda_or_nested_function_is_refused_clearly():
    def nested(x):
        return np.sum(x)

    for f in (lambda x: np.sum(x * x), nested):
        with pytest.raises(pickle.PicklingError) as info:
            pickle.dumps(gradc.grad(f))
        text = str(info.value)
        assert "top level of a module" in text and "test_compiled_objects.py:" in text, text
        assert "gradc.compile" in text  # what to do instead


# ---------------------------------------------------------------- notebook display
HOSTILE = "<script>alert('x')</script>"
HOSTILE_FILE = "<img src=x onerror=alert(1)>.py"  # no slash: the emitted header keeps a file's base name


def hostile_function():
    """A function whose file name (and so the emitted header), name and docstring hold markup."""
    namespace = {"np": np}
    exec(compile("def f(x):\n    return np.sum(x * x)\n", HOSTILE_FILE, "exec"), namespace)
    f = namespace["f"]
    f.__doc__ = HOSTILE
    f.__name__ = f.__qualname__ = HOSTILE
    return f


def _no_markup_from_user(obj, page):
    assert HOSTILE_FILE in obj.source  # the emitted header names the file: it must reach the page escaped
    assert "<script" not in page.lower() and "<img" not in page.lower(), page
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in page


@pytest.mark.parametrize("pygments", [True, False])
def test_html_of_every_kind_is_escaped_source(pygments, monkeypatch):
    if not pygments:
        monkeypatch.setitem(sys.modules, "pygments", None)  # import pygments raises ImportError
    objects = [gradc_compile(hostile_function(), np.ones(2)),
               gradc_compile(hostile_function(), np.ones(2), mode="jvp")]
    if find_compiler() is not None:
        objects.append(gradc_compile(hostile_function(), np.ones(2), target="c"))
        objects.append(gradc_compile(hostile_function(), np.ones(2), target="c", mode="jvp"))
    for obj in objects:
        page = obj._repr_html_()
        _no_markup_from_user(obj, page)
        assert ("<span" in page) == pygments  # highlighted only with Pygments
        assert html.escape(repr(obj)[1:-1]) in page
        if not pygments:  # the escaped source, whole
            assert html.escape(obj.source) in page


def test_html_without_pygments_is_the_escaped_source(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygments", None)
    c = gradc_compile(loss, *ARGS)
    page = c._repr_html_()
    assert page.count("<pre") == 1 and html.escape(c.source) in page


def test_html_of_a_very_long_source_is_escaped_not_highlighted(monkeypatch):
    monkeypatch.setattr("gradc.backends.display.HIGHLIGHT_MAX_CHARS", 100)
    c = gradc_compile(hostile_function(), np.ones(2))
    page = c._repr_html_()
    assert "<span" not in page and html.escape(c.source) in page
    _no_markup_from_user(c, page)


BATCH = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.7]])


def _scalar_grad(x):
    """d scalar_fn / dx by central differences (the reference for the jit and vmap of its gradient)."""
    return np.array([(scalar_fn(x + e) - scalar_fn(x - e)) / 2e-6 for e in np.eye(len(x)) * 1e-6])


@pytest.mark.parametrize("make, batched, reference", [
    (lambda: gradc.jit(scalar_fn), False, scalar_fn),
    pytest.param(lambda: gradc.jit(scalar_fn, target="c"), False, scalar_fn, marks=needs_cc),
    (lambda: gradc.vmap(scalar_fn), True, scalar_fn),
    (lambda: gradc.jit(gradc.grad(scalar_fn)), False, _scalar_grad),
    (lambda: gradc.vmap(gradc.grad(scalar_fn)), True, _scalar_grad),
], ids=["jit", "jit_c", "vmap", "jit_of_grad", "vmap_of_grad"])
def test_jit_and_vmap_pickle_by_their_function_after_use(make, batched, reference):
    """Used (so compiled code is cached), pickled, loaded: the user's function's values."""
    obj = make()
    arg = BATCH if batched else BATCH[0]
    obj(arg)
    again = pickle.loads(pickle.dumps(obj))
    want = np.array([reference(row) for row in BATCH]) if batched else reference(BATCH[0])
    np.testing.assert_allclose(again(arg), want, rtol=1e-6, atol=1e-8)


def test_jit_of_a_lambda_says_why_it_cannot_pickle():
    with pytest.raises(pickle.PicklingError, match="top level of a module"):
        pickle.dumps(gradc.jit(lambda x: x * 2))
