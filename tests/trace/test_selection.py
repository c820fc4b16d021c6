"""One way to choose arguments: ``argnums=`` and ``wrt=`` on every transform, with one meaning (issue 23, item 3).

Each transform is called with ``argnums`` and with ``wrt`` spelled every way (positions, negative
positions, names, a mix), and must give the same result as the other spellings and as central
finite differences of the user's function; a seeded generator draws the choices. Errors (both
given, an unknown name, a position out of range, a duplicate, ``*args``) are refused at this
file's line with the parameter list in the hint.
"""
from __future__ import annotations

import os
import random
import re

import numpy as np
import pytest

import gradc
from gradc.trace.selection import Selection, select_arguments

HERE = os.path.basename(__file__)
RNG = np.random.default_rng(7)
A, B, C = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)


def loss(a, b, c):
    return np.sum(np.sin(a) * b ** 2 + np.cos(c) * a * b)


def vector(a, b, c):
    return np.tanh(a * b) + c ** 3


def fd_gradient(f, args, k, h=1e-6):
    """Central finite differences of scalar ``f`` with respect to argument ``k``."""
    g = np.zeros_like(args[k])
    for i in range(args[k].size):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[k].reshape(-1)[i] += h
        minus[k].reshape(-1)[i] -= h
        g.reshape(-1)[i] = (f(*plus) - f(*minus)) / (2 * h)
    return g


def fd_jacobian(f, args, k, h=1e-6):
    """Central finite differences of array-valued ``f``: output shape + the shape of argument ``k``."""
    cols = []
    for i in range(args[k].size):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[k].reshape(-1)[i] += h
        minus[k].reshape(-1)[i] -= h
        cols.append((f(*plus) - f(*minus)) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(f(*args)) + args[k].shape)


NAMES = ("a", "b", "c")


def spellings(k: int):
    """Every way to say parameter ``k`` of a three-parameter function: as argnums, and as wrt."""
    return [("argnums", k), ("argnums", k - 3), ("wrt", k), ("wrt", k - 3), ("wrt", NAMES[k])]


def random_choices(n: int, seed: int = 0):
    """``n`` random tuples of distinct parameters (in a random order), each with a random spelling per entry."""
    rng = random.Random(seed)
    for _ in range(n):
        ks = rng.sample(range(3), rng.randint(1, 3))
        label = rng.choice(["argnums", "wrt"])
        items = []
        for k in ks:
            options = [k, k - 3] + ([NAMES[k]] if label == "wrt" else [])
            items.append(rng.choice(options))
        yield ks, label, tuple(items)


# ---------------------------------------------------------------- one derivative, spelled every way
@pytest.mark.parametrize("k", range(3))
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_grad_every_spelling_is_the_same_derivative(transform, k):
    want = fd_gradient(loss, [A, B, C], k)
    for label, value in spellings(k):
        got = getattr(gradc, transform)(loss, **{label: value})(A, B, C)
        got = got[1] if transform == "value_and_grad" else got
        assert isinstance(got, np.ndarray), (label, value)  # an int or a name: the bare derivative
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=f"{label}={value!r}")


@pytest.mark.parametrize("k", range(3))
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_every_spelling(transform, k):
    want = fd_jacobian(vector, [A, B, C], k)
    for label, value in spellings(k):
        got = getattr(gradc, transform)(vector, **{label: value})(A, B, C)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=f"{label}={value!r}")


@pytest.mark.parametrize("k", range(3))
def test_hessian_every_spelling(k):
    want = fd_jacobian(lambda *args: gradc.grad(loss, argnums=k)(*args), [A, B, C], k)
    for label, value in spellings(k):
        np.testing.assert_allclose(gradc.hessian(loss, **{label: value})(A, B, C), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("k", range(3))
def test_compile_every_spelling(k):
    want = fd_gradient(loss, [A, B, C], k)
    for label, value in spellings(k):
        for target in ("numpy", "c"):
            compiled = gradc.compile(loss, A, B, C, target=target, **{label: value})
            assert compiled.wrt == (NAMES[k],)
            np.testing.assert_allclose(compiled.grad(A, B, C), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", range(3))
def test_vjp_jvp_hvp_choose_too(k):
    args = [A, B, C]
    direction = RNG.normal(size=3)
    for label, value in spellings(k):
        out, pullback = gradc.vjp(vector, *args, **{label: value})
        np.testing.assert_allclose(pullback(direction), direction @ fd_jacobian(vector, args, k), rtol=1e-6,
                                   atol=1e-8)
        tangents = [None, None, None]
        tangents[k] = direction
        _, tangent = gradc.jvp(vector, tuple(args), tuple(tangents), **{label: value})
        np.testing.assert_allclose(tangent, fd_jacobian(vector, args, k) @ direction, rtol=1e-6, atol=1e-8)
        hv = gradc.hvp(loss, tuple(args), tuple(tangents), **{label: value})
        hessian = fd_jacobian(lambda *xs: gradc.grad(loss, argnums=k)(*xs), args, k)
        np.testing.assert_allclose(hv, hessian @ direction, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- tuples: in the order asked, every transform
@pytest.mark.parametrize("ks, label, items", list(random_choices(12, seed=1)))
def test_tuples_come_back_in_the_order_asked(ks, label, items):
    args = [A, B, C]
    grads = gradc.grad(loss, **{label: items})(*args)
    assert isinstance(grads, tuple) and len(grads) == len(ks)
    for g, k in zip(grads, ks):
        np.testing.assert_allclose(g, fd_gradient(loss, args, k), rtol=1e-6, atol=1e-8)
    jac = gradc.jacrev(vector, **{label: items})(*args)
    for j, k in zip(jac, ks):
        np.testing.assert_allclose(j, fd_jacobian(vector, args, k), rtol=1e-6, atol=1e-8)
    compiled = gradc.compile(loss, *args, **{label: items})
    assert compiled.wrt == tuple(NAMES[k] for k in ks)
    for g, k in zip(compiled.grad(*args), ks):
        np.testing.assert_allclose(g, fd_gradient(loss, args, k), rtol=1e-6, atol=1e-8)
    _, pullback = gradc.vjp(loss, *args, **{label: items})
    for g, k in zip(pullback(1.0), ks):
        np.testing.assert_allclose(g, fd_gradient(loss, args, k), rtol=1e-6, atol=1e-8)
    hess = gradc.hessian(loss, **{label: items})(*args)
    for row, i in zip(hess, ks):
        for block, j in zip(row, ks):
            want = fd_jacobian(lambda *xs, i=i: gradc.grad(loss, argnums=i)(*xs), args, j)
            np.testing.assert_allclose(block, want, rtol=1e-5, atol=1e-7)


def test_a_one_element_tuple_gives_a_tuple():
    assert isinstance(gradc.grad(loss, argnums=(1,))(A, B, C), tuple)
    assert isinstance(gradc.jacfwd(vector, wrt=["b"])(A, B, C), tuple)
    assert isinstance(gradc.compile(loss, A, B, C, wrt=("b",)).grad(A, B, C), tuple)


def test_keyword_only_parameters_are_chosen_by_name():
    def f(x, *, s):
        return np.sum(np.sin(x) * s)
    np.testing.assert_allclose(gradc.grad(f, wrt="s")(A, s=1.5), np.sum(np.sin(A)))
    with pytest.raises(gradc.ArgumentError, match="keyword-only parameter has no position"):
        gradc.grad(f, argnums=1)


def test_defaults_are_the_first_parameter_and_every_float_for_jvp_vjp_hvp():
    assert select_arguments(loss, what="t") == Selection(("a",), False)
    np.testing.assert_allclose(gradc.grad(loss)(A, B, C), fd_gradient(loss, [A, B, C], 0), rtol=1e-6, atol=1e-8)
    assert gradc.compile(loss, A, B, C).wrt == ("a",)
    assert len(gradc.vjp(loss, A, B, C)[1](1.0)) == 3  # one cotangent per primal, as JAX's vjp


# ---------------------------------------------------------------- errors at the user's line, parameters in the hint
def star(*xs):
    return np.sum(xs[0])


ERRORS = {
    "both": (lambda: gradc.grad(loss, argnums=0, wrt="a"), "both argnums=0 and wrt='a'"),
    "unknown name": (lambda: gradc.jacfwd(loss, wrt="z"), "wrt='z' is not a parameter of loss"),
    "name in argnums": (lambda: gradc.hessian(loss, argnums="a"), "argnums takes positions"),
    "out of range": (lambda: gradc.compile(loss, A, B, C, argnums=3), "argnums=3 is not a parameter position"),
    "negative out of range": (lambda: gradc.jacrev(loss, wrt=-4), "wrt=-4 is not a parameter position"),
    "duplicate": (lambda: gradc.value_and_grad(loss, wrt=(0, "a")), "chooses 'a' twice"),
    "negative duplicate": (lambda: gradc.jacobian(loss, argnums=(2, -1)), "chooses 'c' twice"),
    "empty": (lambda: gradc.grad(loss, argnums=()), "chooses no parameter"),
    "bool": (lambda: gradc.grad(loss, argnums=True), "neither a parameter's position nor its name"),
    "float": (lambda: gradc.vjp(loss, A, B, C, wrt=1.0), "neither a parameter's position nor its name"),
    "*args by name": (lambda: gradc.grad(star, wrt="xs"), "*xs parameter"),
    "*args past the call": (lambda: gradc.jvp(star, (A,), (A,), argnums=1), "argnums=1 is not a parameter position"),
    "hvp both": (lambda: gradc.hvp(loss, (A, B, C), (A, B, C), 0, wrt="a"), "both"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_choices_are_refused_at_the_users_line(name):
    thunk, words = ERRORS[name]
    with pytest.raises(gradc.ArgumentError) as info:
        thunk()
    text = str(info.value)
    assert words in text, text
    line = int(re.search(rf"{re.escape(HERE)}:(\d+)", text).group(1))
    assert "lambda" in open(__file__).read().splitlines()[line - 1], text  # the line of the call
    assert "parameters: " in info.value.hint, info.value.hint
    assert "\n" not in text


def test_a_static_argument_is_refused_when_traced_at_the_def():
    def scaled(x, n):
        return np.sum(x) * n
    with pytest.raises(gradc.ArgumentError, match="static Python int") as info:
        gradc.grad(scaled, wrt="n")(A, 3)
    assert f"{HERE}:{scaled.__code__.co_firstlineno}" in str(info.value)


# ---------------------------------------------------------------- gradc.check compares the arguments chosen
def test_check_compares_the_derivatives_chosen_only():
    def f(a, b):
        return np.sum(np.sin(a) * b)

    def frozen_a(a, b):  # the same value, and the same derivative in b; a wrong one in a
        return np.sum(np.sin(gradc.stop_gradient(a)) * b)
    for target in ("numpy", "c"):
        wrong = gradc.compile(frozen_a, A, B, wrt=(0, 1), target=target)
        assert not gradc.check(wrong, f, A, B, raise_on_failure=False).passed
        assert not gradc.check(wrong, f, A, B, argnums=0, raise_on_failure=False).passed
        report = gradc.check(wrong, f, A, B, wrt="b")
        assert report.wrt == ("b",) and not any("d/da" in c.what for c in report.comparisons)
        assert any("d/db" in c.what for c in report.comparisons)
    for mode in ("jvp", "vjp", "jacobian", "hessian", "hvp"):
        wrong = gradc.compile(frozen_a, A, B, wrt=(0, 1), mode=mode)
        assert gradc.check(wrong, f, A, B, wrt=-1).passed, mode
        assert not gradc.check(wrong, f, A, B, wrt="a", raise_on_failure=False).passed, mode


def test_check_refuses_an_argument_the_code_does_not_differentiate():
    compiled = gradc.compile(loss, A, B, C, argnums=1)
    with pytest.raises(gradc.ArgumentError, match="does not differentiate with respect to c") as info:
        gradc.check(compiled, loss, A, B, C, wrt="c")
    assert f"{HERE}:" in str(info.value)
    with pytest.raises(gradc.ArgumentError, match="both"):
        gradc.check(compiled, loss, A, B, C, wrt="b", argnums=1)


def test_the_default_of_a_function_of_keyword_only_parameters_is_its_first():
    def f(*, s, t):
        return np.sum(s * t)
    np.testing.assert_allclose(gradc.grad(f)(s=A, t=B), B)
    with pytest.raises(gradc.ArgumentError, match="keyword-only parameter has no position"):
        gradc.grad(f, argnums=0)
