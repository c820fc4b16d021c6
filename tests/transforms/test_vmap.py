"""``gradc.vmap`` on NumPy functions (issue 23, item 4), against Python loops over the examples.

References are independent of gradc: the user's function called on each example by a Python
loop (results stacked along out_axes), and central finite differences per example for
gradients. Compositions in both orders: vmap of grad / value_and_grad / jacfwd / hessian,
grad / jacfwd / jacrev / hessian of a vmapped function, vmap of vmap; pytree arguments,
outputs and in_axes; loops and branches (sub-graphs); bad input at the user's line.
"""
from __future__ import annotations

import inspect
import os
import re
import sys
from typing import NamedTuple

import numpy as np
import pytest

import gradc
from gradc.errors import ArgumentError, GradcError

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from finite_differences import central_gradient  # noqa: E402

HERE = os.path.basename(__file__)
RNG = np.random.default_rng(2323)


def loop_reference(f, in_axes, args, out_axes=0):
    """``f`` called on each example by a Python loop, results stacked along ``out_axes`` (tuples per output)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    results = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)]) for i in range(n)]
    if isinstance(results[0], tuple):
        outs = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(results[0])
        return tuple(np.stack([r[k] for r in results], axis=o) for k, o in enumerate(outs))
    return np.stack(results, axis=out_axes)


def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2


W = RNG.normal(size=3)
X = RNG.normal(size=(6, 3))
Y = RNG.normal(size=6)


def test_per_example_gradients_match_finite_differences():
    per_example = gradc.vmap(gradc.grad(loss), in_axes=(None, 0, 0))
    got = per_example(W, X, Y)
    expected = np.stack([central_gradient(lambda w, i=i: loss(w, X[i], Y[i]), W) for i in range(len(X))])
    assert got.shape == (6, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_the_emitted_code_is_vectorised_not_a_loop():
    source = gradc.vmap(gradc.grad(loss), in_axes=(None, 0, 0)).lower(W, X, Y).source
    assert not re.search(r"^\s*(for|while) ", source, re.M), source
    assert "def loss_vmap(w, x, y):" in source  # the user's parameter names


def test_vmap_of_value_and_grad_gives_tuple_outputs():
    values, grads = gradc.vmap(gradc.value_and_grad(loss), in_axes=(None, 0, 0))(W, X, Y)
    np.testing.assert_allclose(values, [loss(W, X[i], Y[i]) for i in range(len(X))], rtol=1e-12)
    expected = np.stack([central_gradient(lambda w, i=i: loss(w, X[i], Y[i]), W) for i in range(len(X))])
    np.testing.assert_allclose(grads, expected, rtol=1e-6, atol=1e-8)


def test_grad_of_a_function_calling_vmap_inside():
    def total(w, X, Y):
        return np.sum(gradc.vmap(loss, in_axes=(None, 0, 0))(w, X, Y))

    got = gradc.grad(total)(W, X, Y)
    np.testing.assert_allclose(got, central_gradient(lambda w: np.sum(loop_reference(loss, (None, 0, 0), (w, X, Y))),
                                                     W), rtol=1e-6, atol=1e-8)
    # with respect to the batched argument too
    got_x = gradc.grad(total, wrt=1)(W, X, Y)
    reference = central_gradient(lambda x: np.sum(loop_reference(loss, (None, 0, 0), (W, x, Y))), X)
    np.testing.assert_allclose(got_x, reference, rtol=1e-6, atol=1e-8)


def test_vmap_of_vmap_is_a_double_loop():
    f = gradc.vmap(gradc.vmap(lambda a, b: np.sin(a) * b + a @ b, in_axes=(0, None)), in_axes=(None, 0))
    a, b = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 3))
    got = f(a, b)
    expected = np.array([[np.sin(a[i]) * b[j] + a[i] @ b[j] for i in range(4)] for j in range(5)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_jacobians_of_a_vmapped_function(jac):
    f = gradc.vmap(lambda x, w: np.tanh(x * w).sum() * x, in_axes=(0, None))
    x, w = RNG.normal(size=(3, 2)), RNG.normal(size=2)
    got = getattr(gradc, jac)(f)(x, w)
    one = lambda a: np.tanh(a * w).sum() * a  # noqa: E731
    assert got.shape == (3, 2, 3, 2)
    for i in range(3):
        for j in range(2):
            expected = central_gradient(lambda v, i=i, j=j: loop_reference(one, 0, (v,))[i, j], x)
            np.testing.assert_allclose(got[i, j], expected, rtol=1e-6, atol=1e-8)


def test_hessian_of_a_vmapped_function():
    f = lambda x: np.sum(gradc.vmap(lambda t: np.sin(t) * t ** 2)(x))  # noqa: E731
    x = RNG.normal(size=4)
    got = gradc.hessian(f)(x)
    expected = np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_vmap_of_jacfwd_is_a_batch_of_jacobians():
    f = lambda x: np.sin(x) * x.sum()  # noqa: E731
    xs = RNG.normal(size=(4, 3))
    got = gradc.vmap(gradc.jacfwd(f))(xs)
    for i in range(4):
        expected = np.stack([central_gradient(lambda v, k=k: f(v)[k], xs[i]) for k in range(3)])
        np.testing.assert_allclose(got[i], expected, rtol=1e-6, atol=1e-8)


def test_vmap_of_hessian():
    f = lambda x: np.sum(x ** 3) * x[0]  # noqa: E731
    xs = RNG.normal(size=(3, 2))
    got = gradc.vmap(gradc.hessian(f))(xs)
    g = gradc.grad(f)
    for i in range(3):
        expected = np.stack([central_gradient(lambda v, k=k: g(v)[k], xs[i]) for k in range(2)])
        np.testing.assert_allclose(got[i], expected, rtol=1e-6, atol=1e-7)


def test_vmap_of_jvp_vjp_and_hvp_is_a_loop_of_them():
    f = lambda x: np.sin(x) * x.sum()  # noqa: E731
    xs, ts = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    out, tangent = gradc.vmap(lambda x, t: gradc.jvp(f, (x,), (t,)))(xs, ts)
    pulled = gradc.vmap(lambda x, c: gradc.vjp(f, x)[1](c)[0])(xs, ts)
    hv = gradc.vmap(lambda x, t: gradc.hvp(lambda v: np.sum(np.sin(v) * v), (x,), (t,)))(xs, ts)
    for i in range(4):
        jac = np.stack([central_gradient(lambda v, k=k: f(v)[k], xs[i]) for k in range(3)])
        np.testing.assert_allclose(out[i], f(xs[i]), rtol=1e-12)
        np.testing.assert_allclose(tangent[i], jac @ ts[i], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(pulled[i], ts[i] @ jac, rtol=1e-6, atol=1e-8)
        hess = np.diag(2 * np.cos(xs[i]) - xs[i] * np.sin(xs[i]))
        np.testing.assert_allclose(hv[i], hess @ ts[i], rtol=1e-10, atol=1e-12)


def test_vmap_of_custom_vjp_and_checkpoint():
    @gradc.custom_vjp
    def doubled_grad_sin(x):
        return np.sin(x)

    doubled_grad_sin.defvjp(lambda x: (np.sin(x), (x,)), lambda res, g: (2.0 * np.cos(res[0]) * g,))
    xs = RNG.normal(size=(4, 3))
    got = gradc.vmap(gradc.grad(lambda x: np.sum(doubled_grad_sin(x))))(xs)
    np.testing.assert_allclose(got, 2.0 * np.cos(xs), rtol=1e-12)  # the user's rule, per example
    np.testing.assert_allclose(gradc.vmap(gradc.checkpoint(lambda x: np.sin(x) ** 2))(xs), np.sin(xs) ** 2)


@pytest.mark.parametrize("in_axes, shapes", [
    (0, [(4, 3), (4, 3)]),
    (1, [(3, 4), (2, 4)]),
    (-1, [(3, 4), (2, 4)]),
    ((None, 0), [(3,), (5, 3)]),
    ((-2, 1), [(5, 3), (3, 5)]),
])
def test_in_axes_against_a_loop(in_axes, shapes):
    f = lambda a, b: np.sum(a) * b[:1] + np.exp(b).mean()  # noqa: E731
    args = [RNG.normal(size=s) for s in shapes]
    np.testing.assert_allclose(gradc.vmap(f, in_axes=in_axes)(*args), loop_reference(f, in_axes, args), rtol=1e-12)


@pytest.mark.parametrize("out_axes", [0, 1, -1, 2])
def test_out_axes_against_a_loop(out_axes):
    f = lambda a: np.outer(a, a) + 1.0  # noqa: E731
    x = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(gradc.vmap(f, out_axes=out_axes)(x), loop_reference(f, 0, (x,), out_axes), rtol=1e-12)


def test_out_axes_none_for_an_output_that_does_not_depend_on_the_batch():
    got = gradc.vmap(lambda x, w: (x * w, w.sum()), in_axes=(0, None), out_axes=(0, None))(np.ones((3, 2)), np.ones(2))
    np.testing.assert_allclose(got[0], np.ones((3, 2)))
    assert np.shape(got[1]) == () and float(got[1]) == 2.0


def test_axis_size_when_no_argument_is_batched():
    got = gradc.vmap(lambda w: np.sin(w), in_axes=None, axis_size=4)(np.arange(3.0))
    np.testing.assert_allclose(got, np.tile(np.sin(np.arange(3.0)), (4, 1)))


def test_an_unbatched_output_is_broadcast_along_the_batch():
    got = gradc.vmap(lambda x, w: w * 2.0, in_axes=(0, None))(np.ones((3, 2)), np.arange(2.0))
    np.testing.assert_allclose(got, np.tile(np.arange(2.0) * 2.0, (3, 1)))


def test_static_and_keyword_arguments():
    def f(x, n, *, scale=1.0):
        return np.sum(x[:n]) * scale

    xs = RNG.normal(size=(5, 4))
    np.testing.assert_allclose(gradc.vmap(f, in_axes=(0, None))(xs, 2), xs[:, :2].sum(1))
    scales = RNG.normal(size=5)  # keyword arrays are batched along axis 0, as in JAX
    np.testing.assert_allclose(gradc.vmap(f, in_axes=(0, None))(xs, 3, scale=scales), xs[:, :3].sum(1) * scales)


def test_integer_arrays_and_index_arithmetic():
    def f(x, k):
        return x[k] * 2.0 + k

    xs, ks = RNG.normal(size=(4, 5)), np.array([0, 3, 1, 4])
    got = gradc.vmap(f)(xs, ks)
    np.testing.assert_allclose(got, loop_reference(f, 0, (xs, ks)))


def test_a_zero_size_batch_gives_empty_outputs():
    got = gradc.vmap(lambda x: np.sin(x) * 2.0)(np.zeros((0, 3)))
    assert got.shape == (0, 3)


# ---------------------------------------------------------------- pytrees
class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def test_pytree_arguments_outputs_and_in_axes():
    def model(params, x):
        h = np.tanh(x @ params["w"] + params["b"])
        return {"h": h, "norm": np.sum(h ** 2)}

    params = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    xs = RNG.normal(size=(4, 3))
    got = gradc.vmap(model, in_axes=(None, 0))(params, xs)
    assert set(got) == {"h", "norm"}
    for i in range(4):
        one = model(params, xs[i])
        np.testing.assert_allclose(got["h"][i], one["h"], rtol=1e-12)
        np.testing.assert_allclose(got["norm"][i], one["norm"], rtol=1e-12)
    # a prefix tree: the bias batched, the weights shared
    bs = RNG.normal(size=(4, 2))
    got = gradc.vmap(model, in_axes=({"w": None, "b": 0}, None))({"w": params["w"], "b": bs}, xs[0])
    for i in range(4):
        np.testing.assert_allclose(got["h"][i], model({"w": params["w"], "b": bs[i]}, xs[0])["h"], rtol=1e-12)


def test_per_example_gradients_of_pytree_parameters():
    def pt_loss(p, x, y):
        return (np.tanh(x @ p.w + p.b) - y) ** 2

    p = Params(RNG.normal(size=3), np.array(0.3))
    got = gradc.vmap(gradc.grad(pt_loss), in_axes=(None, 0, 0))(p, X, Y) if _grad_takes_pytrees() else None
    if got is None:
        pytest.skip("gradc.grad does not take pytrees on this branch")
    assert isinstance(got, Params)
    for i in range(len(X)):
        np.testing.assert_allclose(got.w[i], central_gradient(lambda w, i=i: pt_loss(Params(w, p.b), X[i], Y[i]), p.w),
                                   rtol=1e-6, atol=1e-8)


def _grad_takes_pytrees() -> bool:
    try:
        gradc.grad(lambda p: p["a"] * 2.0)({"a": 1.0})
    except GradcError:
        return False
    return True


def test_out_axes_prefix_tree():
    got = gradc.vmap(lambda x: {"a": x * 2.0, "b": (x, x.sum())}, out_axes={"a": 1, "b": 0})(np.ones((3, 2)))
    assert got["a"].shape == (2, 3) and got["b"][0].shape == (3, 2) and got["b"][1].shape == (3,)


# ---------------------------------------------------------------- loops and branches (sub-graphs)
def loop_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x * s) + x[i]
    return s


def traced_branch(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def traced_while(x):
    t = x.sum()
    k = 0.0
    while t < 10.0:
        t = t * 2.0 + 1.0
        k = k + 1.0
    return k * x


@pytest.mark.parametrize("f, args, in_axes", [
    (loop_sum, (RNG.normal(size=(4, 3)), 3), (0, None)),
    (traced_branch, (RNG.normal(size=(6, 2)),), 0),
    (traced_while, (RNG.uniform(0.1, 2.0, size=(5, 2)),), 0),
    (lambda x: gradc.fori_loop(0, 4, lambda i, c: c * np.cos(x) + 0.5, x), (RNG.normal(size=(3, 2)),), 0),
    (lambda x: gradc.cond(x[0] > 0, lambda: x * 3.0, lambda: x ** 2), (RNG.normal(size=(6, 2)),), 0),
])
def test_functions_with_loops_and_branches(f, args, in_axes):
    np.testing.assert_allclose(gradc.vmap(f, in_axes=in_axes)(*args), loop_reference(f, in_axes, args), rtol=1e-12)


def loop_total(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        if y[i] > 0:
            s = s + np.sin(x[i] * s) * y[i]
        else:
            s = s - x[i] ** 2
    return s


def test_per_example_gradients_through_a_loop_with_a_branch():
    g = gradc.vmap(gradc.grad(loop_total), in_axes=(0, 0))
    xs, ys = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4))
    got = g(xs, ys)
    for i in range(5):
        np.testing.assert_allclose(got[i], central_gradient(lambda v, i=i: loop_total(v, ys[i]), xs[i]), rtol=1e-6,
                                   atol=1e-8)


# ---------------------------------------------------------------- caching
def test_cached_per_signature():
    f = gradc.vmap(lambda x: x * 2.0)
    f(np.ones((3, 2)))
    f(np.zeros((3, 2)))
    assert len(f.cache) == 1
    f(np.ones((4, 2)))
    assert len(f.cache) == 2
    assert f.__name__ == "<lambda>" and str(inspect.signature(f)) == "(x)"
    assert repr(f) == "<gradc.vmap of lambda_, in_axes=0, out_axes=0>"


# ---------------------------------------------------------------- bad input: clear errors at the user's line
def _line():
    return sys._getframe(1).f_lineno


def _error_at(call, line, *words):
    with pytest.raises(GradcError) as info:
        call()
    text = str(info.value)
    assert f"{HERE}:{line}" in text, text
    assert info.value.hint, text
    for word in words:
        assert word in text, text
    return info.value


def test_errors_at_the_users_line():
    f = lambda x, y: x * y  # noqa: E731
    a, b = np.ones(3), np.ones((2, 4))
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=(0,))(a, a), line, "in_axes has 1 entry", "2 positional")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=(0, 2))(a, a), line, "in_axes for y is 2", "1 axis")
    line = _line() + 1
    err = _error_at(lambda: gradc.vmap(f, in_axes=(0, 1))(a, b), line, "x has size 3", "y has size 4")
    assert isinstance(err, ArgumentError)
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f)(a, 3), line, "int 3", "not an array")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f)(a, 2.0), line, "0 axes")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=None)(a, a), line, "axis_size")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=None, axis_size=2)(a, a) + gradc.vmap(f, axis_size=2)(a, a), line,
              "axis_size is 2")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=[0, 0]), line, "list")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, in_axes=(0, "a")), line, "str")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(f, axis_size=-1), line, "axis_size")
    line = _line() + 1
    _error_at(lambda: gradc.vmap("f"), line, "takes a function")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(lambda x: (x, x.sum()), out_axes=(0, None))(b), line, "out_axes is None")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": a}), line, "expected dict")
    line = _line() + 1
    _error_at(lambda: gradc.vmap(lambda x: x, out_axes=3)(b), line, "out_axes 3")


def test_errors_inside_the_function_point_at_its_line():
    def f(x):
        return x @ np.ones(5)  # shapes do not match: reported here
    line = f.__code__.co_firstlineno + 1
    _error_at(lambda: gradc.vmap(f)(np.ones((2, 3))), line)


def test_vmap_of_value_and_grad_with_aux_and_dict_parameters():
    def model_loss(p, x, y):
        pred = np.tanh(x @ p["w"] + p["b"])
        return (pred - y) ** 2, {"pred": pred}

    p = {"w": RNG.normal(size=3), "b": np.array(0.1)}
    (values, aux), grads = gradc.vmap(gradc.value_and_grad(model_loss, has_aux=True), in_axes=(None, 0, 0))(p, X, Y)
    assert set(grads) == {"w", "b"} and grads["w"].shape == (6, 3) and grads["b"].shape == (6,)
    for i in range(len(X)):
        np.testing.assert_allclose(values[i], model_loss(p, X[i], Y[i])[0], rtol=1e-12)
        np.testing.assert_allclose(aux["pred"][i], model_loss(p, X[i], Y[i])[1]["pred"], rtol=1e-12)
        expected = central_gradient(lambda w, i=i: model_loss({"w": w, "b": p["b"]}, X[i], Y[i])[0], p["w"])
        np.testing.assert_allclose(grads["w"][i], expected, rtol=1e-6, atol=1e-8)


def test_jit_of_grad_of_a_mean_over_vmap():
    def mean_loss(w, x, y):
        return np.mean(gradc.vmap(loss, in_axes=(None, 0, 0))(w, x, y))

    got = gradc.jit(gradc.grad(mean_loss))(W, X, Y)
    np.testing.assert_allclose(got, central_gradient(lambda w: np.mean(loop_reference(loss, (None, 0, 0), (w, X, Y))),
                                                     W), rtol=1e-6, atol=1e-8)
