"""What ``gradc.compile(..., static_argnums/static_argnames=...)`` returns, called with the static arguments too:
at the compiled values they are accepted (positionally or by name, both targets), another value or a call that
fits neither signature is an ArgumentError at the caller's line, never a bare TypeError."""
import itertools
import pickle
import random
import traceback

import numpy as np
import pytest

import gradc
from gradc.errors import ArgumentError


def power_sum(x, n, scale=1.0):
    return np.sum(x ** n) * scale


X = np.array([0.5, 1.5, -2.0])


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_static_argument_at_its_compiled_value_is_accepted(target):
    c = gradc.compile(power_sum, X, 3, static_argnums=1, target=target)
    expected = power_sum(X, 3)
    for call in (lambda: c.forward(X), lambda: c.forward(X, n=3), lambda: c.forward(X, 3, 1.0),
                 lambda: c.forward(x=X, n=3, scale=1.0)):
        assert call() == pytest.approx(expected)
    np.testing.assert_allclose(c.grad(X, 3, scale=2.0), 2 * 3 * X ** 2)
    value, grad = c.value_and_grad(X, n=3)
    assert value == pytest.approx(expected)
    np.testing.assert_allclose(grad, 3 * X ** 2)
    assert c(X, 3, 1.0)[0] == pytest.approx(expected)


def test_a_call_the_emitted_signature_takes_is_that_signature_s():
    c = gradc.compile(power_sum, X, 2, static_argnums=1)
    assert c.forward(X, 3.0) == pytest.approx(power_sum(X, 2, 3.0))  # the emitted forward takes (x, scale)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_another_static_value_is_refused_with_both_values_and_the_fix(target):
    c = gradc.compile(power_sum, X, 3, static_argnums=1, target=target)
    with pytest.raises(ArgumentError) as err:
        c.forward(X, 4, 1.0)
    text = str(err.value)
    assert "n=3" in text and "n=4" in text and "test_static_compiled_calls.py" in text
    assert "compile again" in text and "static_argnames" in text
    with pytest.raises(ArgumentError, match="n=5"):
        c.grad(X, n=5)


def test_a_call_fitting_neither_signature_names_the_compiled_in_values():
    c = gradc.compile(power_sum, X, 3, static_argnums=1)
    with pytest.raises(ArgumentError) as err:
        c.forward(X, 3, 1.0, 7.0)
    assert "n=3 is compiled in" in str(err.value) and "(x, scale=1.0)" in str(err.value)


def test_the_error_shows_no_frames_inside_gradc_beyond_the_call():
    c = gradc.compile(power_sum, X, 3, static_argnums=1)
    with pytest.raises(ArgumentError) as err:
        c.forward(X, n=4)
    frames = [f.name for f in traceback.extract_tb(err.value.__traceback__)]
    assert frames[-1] == "call" and len(frames) <= 3


def test_pickled_compiled_object_still_loads():
    c = gradc.compile(power_sum, X, 3, static_argnums=1)
    again = pickle.loads(pickle.dumps(c))
    assert again.forward(X) == pytest.approx(power_sum(X, 3))


def test_modes_take_static_arguments_by_name():
    u = gradc.compile(power_sum, X, 2, static_argnames="n", mode="jvp")
    value, tangent = u.jvp(X, 1.0, np.ones(3), n=2)
    assert value == pytest.approx(power_sum(X, 2)) and tangent == pytest.approx(np.sum(2 * X))
    with pytest.raises(ArgumentError, match="n=2.*n=3"):
        u.jvp(X, 1.0, np.ones(3), n=3)


def _three(x, a, b, c=2):
    return np.sum(np.sin(x * a) + b * x ** c)


def _static_cases():
    rng = random.Random(26)
    names = ("a", "b", "c")
    cases = []
    for size in (1, 2):
        for chosen in itertools.combinations(names, size):
            values = {"a": rng.choice((1, 2)), "b": rng.choice((0.5, 3)), "c": rng.choice((1, 2, 3))}
            style = rng.choice(("positional", "keyword"))
            cases.append((chosen, values, style))
    return cases


@pytest.mark.parametrize("chosen,values,style", _static_cases())
def test_random_static_subsets_called_like_the_function(chosen, values, style):
    x = np.array([0.3, -0.7])
    c = gradc.compile(_three, x, values["a"], values["b"], values["c"], static_argnames=chosen)
    expected = _three(x, **values)
    if style == "positional":
        got = c.forward(x, values["a"], values["b"], values["c"])
    else:
        got = c.forward(x, **values)
    assert got == pytest.approx(expected)
    eps = 1e-6
    fd = np.array([(_three(x + eps * e, **values) - _three(x - eps * e, **values)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(c.grad(x, **values), fd, rtol=1e-6, atol=1e-8)
    other = dict(values, **{chosen[0]: values[chosen[0]] + 1})
    with pytest.raises(ArgumentError, match=f"{chosen[0]}="):
        c.forward(x, **other)
