"""Every transform takes every kind of callable: each (transform, kind) pair of the product below is a test.

Each kind of callable computes the same function in its own way (a def, a lambda, a ``functools.partial``
binding by position or by keyword, a ``functools.wraps`` wrapper whose signature differs from the wrapped
function's or one passing ``*args, **kwargs`` on, a callable object, a bound method, a parameter whose
default is a function); NumPy ufuncs, NumPy functions and builtins are callables of their own. The
references are the user's function run by NumPy and central finite differences of it.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

import gradc
from tests.finite_differences import central_gradient

X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 0.5, -2.0])


def scalar_base(x):
    return np.sum(np.sin(x) * x)


def vector_base(x):
    return np.sin(x) * x


# ---------------------------------------------------------------- kinds of callable, each of one argument x
def as_def(base):
    def f(x):
        return base(x)
    return f


def as_lambda(base):
    return lambda x: base(x)


def as_partial_positional(base):
    return functools.partial(lambda scale, x: scale * base(x), 1.0)


def as_partial_keyword(base):
    return functools.partial(lambda x, scale: scale * base(x), scale=1.0)


def as_wrapper_narrower(base):
    def scaled(x, scale):
        return scale * base(x)

    @functools.wraps(scaled)  # the wrapper takes x alone; inspect.signature would report (x, scale)
    def wrapper(x):
        return scaled(x, 1.0)
    return wrapper


def as_wrapper_passing_on(base):
    def f(x):
        return base(x)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


def as_callable_object(base):
    class Model:
        def __call__(self, x):
            return base(x)
    return Model()


def as_bound_method(base):
    class Model:
        def __init__(self):
            self.scale = 1.0

        def loss(self, x):
            return self.scale * base(x)
    return Model().loss


def as_default_function(base):
    def f(x, fn=base):
        return fn(x)
    return f


def as_static_method(base):
    class Holder:
        run = staticmethod(lambda x: base(x))
    return Holder.run


KINDS = {"def": as_def, "lambda": as_lambda, "partial_positional": as_partial_positional,
         "partial_keyword": as_partial_keyword, "wraps_narrower": as_wrapper_narrower,
         "wraps_passing_on": as_wrapper_passing_on, "callable_object": as_callable_object,
         "bound_method": as_bound_method, "default_function": as_default_function,
         "static_method": as_static_method}

# NumPy's and Python's own callables: (callable, its NumPy reference, scalar output?)
LIBRARY = {"ufunc_sin": (np.sin, np.sin, False), "ufunc_exp": (np.exp, np.exp, False),
           "np_sum": (np.sum, np.sum, True), "np_mean": (np.mean, np.mean, True),
           "np_cumsum": (np.cumsum, np.cumsum, False), "np_power_partial": (functools.partial(np.power, 2.0),
                                                                             lambda x: np.power(2.0, x), False)}


def callables(scalar: bool):
    """``(id, callable, reference)`` for every kind, scalar-valued or vector-valued."""
    base = scalar_base if scalar else vector_base
    out = [(name, make(base), base) for name, make in KINDS.items()]
    for name, (fn, ref, is_scalar) in LIBRARY.items():
        if is_scalar == scalar:
            out.append((name, fn, ref))
    if scalar:
        out.append(("np_sum_partial_axis", functools.partial(np.sum, axis=0), np.sum))
    return out


def numeric_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def check_close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=tol, atol=tol)


# ---------------------------------------------------------------- the transforms, each checked against references
def run_grad(f, ref):
    check_close(gradc.grad(f)(X), central_gradient(ref, X))


def run_value_and_grad(f, ref):
    value, g = gradc.value_and_grad(f)(X)
    check_close(value, ref(X))
    check_close(g, central_gradient(ref, X))


def run_hessian(f, ref):
    def numeric_grad(x):
        return central_gradient(ref, x, h=1e-4)
    check_close(gradc.hessian(f)(X), numeric_jacobian(numeric_grad, X, h=1e-4), tol=1e-4)


def run_hvp(f, ref):
    def numeric_grad(x):
        return central_gradient(ref, x, h=1e-4)
    check_close(gradc.hvp(f, (X,), (V,)), numeric_jacobian(numeric_grad, X, h=1e-4) @ V, tol=1e-4)


def run_compile(f, ref):
    c = gradc.compile(f, X)
    check_close(c.forward(X), ref(X))
    check_close(c.grad(X), central_gradient(ref, X))


def run_jacfwd(f, ref):
    check_close(gradc.jacfwd(f)(X), numeric_jacobian(ref, X))


def run_jacrev(f, ref):
    check_close(gradc.jacrev(f)(X), numeric_jacobian(ref, X))


def run_jacobian(f, ref):
    check_close(gradc.jacobian(f)(X), numeric_jacobian(ref, X))


def run_jvp(f, ref):
    out, tangent = gradc.jvp(f, (X,), (V,))
    check_close(out, ref(X))
    check_close(tangent, numeric_jacobian(ref, X) @ V)


def run_vjp(f, ref):
    out, pullback = gradc.vjp(f, X)
    check_close(out, ref(X))
    ct = np.ones_like(np.asarray(ref(X)))
    (g,) = pullback(ct)
    check_close(g, np.tensordot(ct, numeric_jacobian(ref, X), axes=np.ndim(ct)))


def run_vmap(f, ref):
    batch = np.stack([X, 2 * X, -X])
    check_close(gradc.vmap(f)(batch), np.stack([ref(row) for row in batch]))


def run_jit(f, ref):
    check_close(gradc.jit(f)(X), ref(X))


SCALAR_TRANSFORMS = {"grad": run_grad, "value_and_grad": run_value_and_grad, "hessian": run_hessian,
                     "hvp": run_hvp, "compile": run_compile}
ANY_TRANSFORMS = {"jacfwd": run_jacfwd, "jacrev": run_jacrev, "jacobian": run_jacobian, "jvp": run_jvp,
                  "vjp": run_vjp, "vmap": run_vmap, "jit": run_jit}

CASES = [pytest.param(run, f, ref, id=f"{t}-{name}")
         for (t, run), (name, f, ref) in itertools.product(SCALAR_TRANSFORMS.items(), callables(scalar=True))]
CASES += [pytest.param(run, f, ref, id=f"{t}-{name}-{shape}")
          for (t, run), scalar in itertools.product(ANY_TRANSFORMS.items(), (True, False))
          for shape in ["scalar" if scalar else "vector"]
          for name, f, ref in callables(scalar)]


@pytest.mark.parametrize("run, f, ref", CASES)
def test_every_transform_takes_every_kind_of_callable(run, f, ref):
    run(f, ref)


# ---------------------------------------------------------------- the signature gradc reads
def test_a_wraps_wrapper_is_called_with_its_own_parameters():
    def two(x, y):
        return x * y

    @functools.wraps(two)
    def doubled(x):
        return two(x, 2.0)

    assert gradc.grad(doubled)(3.0) == 2.0
    assert str(gradc.trace(doubled, 3.0)).startswith("def two(x: f64[])")


def test_a_partial_binding_a_keyword_then_a_later_parameter_by_keyword():
    def f(x, axis, scale):
        return np.sum(x, axis=axis) * scale

    g = functools.partial(f, axis=0)  # scale then is keyword-only, as Python binds it
    out, pullback = gradc.vjp(functools.partial(g, scale=2.0), X)
    assert np.isclose(out, 2 * np.sum(X))
    check_close(pullback(1.0)[0], np.full(3, 2.0))


def test_numpy_functions_with_no_value_defaults_keep_their_defaults():
    c = gradc.compile(np.sum, X)
    check_close(c.grad(X), np.ones(3))
    assert "def sum(a, axis=None, dtype=None, out=None):" in c.source  # keepdims=, initial=, where=: baked in
    assert "at 0x" not in c.source  # no address of an object in the emitted file


def test_a_builtin_given_to_grad():
    assert gradc.grad(abs)(-2.5) == -1.0
    assert gradc.grad(abs)(1.5) == 1.0


def test_a_default_function_passed_explicitly_retraces():
    def f(x, act=np.tanh):
        return np.sum(act(x))

    g = gradc.grad(f)
    check_close(g(X), 1 - np.tanh(X) ** 2)
    check_close(g(X, np.sin), np.cos(X))
    check_close(g(X, act=np.exp), np.exp(X))
    check_close(g(X), 1 - np.tanh(X) ** 2)


def test_a_function_passed_where_the_default_is_not_one():
    def f(x, act):
        return np.sum(act(x))

    check_close(gradc.grad(f)(X, np.sin), np.cos(X))
    check_close(gradc.grad(f)(X, np.cos), -np.sin(X))


def test_the_header_names_a_default_function_without_its_address():
    def f(x, act=np.tanh):
        return np.sum(act(x))

    source = gradc.compile(f, X).source
    assert "static act=numpy.tanh" in source.splitlines()[0]
    assert "at 0x" not in source


def test_an_unreadable_callable_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match="cannot read the parameters"):
        gradc.grad(max)


# ---------------------------------------------------------------- callable_signature: the one place that decides
def test_callable_signature_agrees_with_python_for_partials():
    import inspect

    from gradc.trace.signature import callable_signature

    def f(a, b, /, c, d=1.0, *, e=2.0):
        return a

    for p in (functools.partial(f, 1.0), functools.partial(f, 1.0, 2.0), functools.partial(f, c=3.0),
              functools.partial(f, 1.0, d=4.0), functools.partial(f, e=5.0), functools.partial(
                  functools.partial(f, 1.0), 2.0, c=0.5)):
        assert callable_signature(p) == inspect.signature(p), p


def test_callable_signature_reads_a_wrapper_by_its_own_parameters():
    from gradc.trace.signature import callable_signature

    def f(x, y):
        return x * y

    @functools.wraps(f)
    def narrower(x):
        return f(x, 2.0)

    @functools.wraps(f)
    def passing_on(*args, **kwargs):
        return f(*args, **kwargs)

    assert str(callable_signature(narrower)) == "(x)"
    assert str(callable_signature(passing_on)) == "(x, y)"
    assert str(callable_signature(functools.partial(narrower))) == "(x)"
    assert str(callable_signature(np.sum)).startswith("(a, axis=None")
    assert str(callable_signature(np.add)) == "(x1, x2)"
    assert gradc.grad(functools.partial(narrower))(3.0) == 2.0


def test_argnums_and_has_aux_by_position_as_jax_and_autograd_write_them():
    assert gradc.grad(lambda a, b: a * b ** 2, 1)(2.0, 3.0) == 12.0  # autograd's grad(fun, argnum)
    assert gradc.value_and_grad(lambda a, b: a * b, (0, 1))(2.0, 3.0) == (6.0, (3.0, 2.0))
    assert gradc.grad(lambda a: (a * a, {"a": a}), 0, True)(3.0) == (6.0, {"a": 3.0})  # JAX's (f, argnums, has_aux)
