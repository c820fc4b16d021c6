"""``gradc compile --static NAME=VALUE``: a parameter baked into the emitted code (JAX's static_argnames).

VALUE is a Python literal read by ``ast.literal_eval``: never run as code (injection attempts below are
refused and run nothing). The emitted functions do not take the parameter; the header records its value
and the regenerate command repeats the option. A default that is a function is static by itself.
"""
from __future__ import annotations

import numpy as np
import pytest
from cli_harness import run_cli

from tests.finite_differences import central_gradient

MODEL = '''\
import numpy as np


def loss(x: "f64[3]", n, mode="sum"):
    y = x
    for _ in range(n - 1):
        y = y * x
    return np.sum(y) if mode == "sum" else np.mean(y)


def activated(x: "f64[3]", act=np.tanh):
    return np.sum(act(x))


def chain(x: "f64[3]", parents):
    values = [x[0]]
    for i in range(1, len(parents)):
        values.append(values[parents[i]] * x[i])
    return values[-1]
'''

X = np.array([0.4, 1.3, -0.8])


def loss(x, n, mode="sum"):
    y = x
    for _ in range(n - 1):
        y = y * x
    return np.sum(y) if mode == "sum" else np.mean(y)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def emitted(work, target, *options):
    result = run_cli("compile", f"model.py:{target}", *options, "-o", "out.py", cwd=work)
    assert result.status == 0, result
    source = (work / "out.py").read_text()
    namespace: dict = {}
    exec(compile(source, "out.py", "exec"), namespace)  # noqa: S102 - the module gradc wrote
    return source, namespace


@pytest.mark.parametrize("n, mode", [(1, "sum"), (3, "sum"), (2, "mean"), (4, "mean")])
def test_static_values_are_baked_in_and_recorded(work, n, mode):
    source, ns = emitted(work, "loss", "--static", f"n={n}", "--static", f"mode={mode!r}")
    lines = source.splitlines()
    assert f"(static n={n}, mode={mode!r})" in lines[0]
    assert "--static" in lines[1] and f"n={n}" in lines[1]
    assert "def loss(x):" in source and "def loss_grad(x):" in source
    assert np.isclose(ns["loss"](X), loss(X, n, mode))
    np.testing.assert_allclose(ns["loss_grad"](X), central_gradient(lambda x: loss(x, n, mode), X), atol=1e-8)


def test_the_regenerate_command_makes_the_same_file(work):
    source, _ = emitted(work, "loss", "--static", "n=3", "--static", "mode='mean'")
    import shlex

    command = shlex.split(source.splitlines()[1].split("Regenerate: ", 1)[1])
    assert command[:2] == ["gradc", "compile"]
    again = run_cli(*command[1:], cwd=work)
    assert again.status == 0, again
    assert (work / "out.py").read_text() == source


def test_a_static_tuple_indexes_a_python_list(work):
    _, ns = emitted(work, "chain", "--static", "parents=(0, 0, 1)")
    want = central_gradient(lambda x: x[0] * x[1] * x[2], X)  # values: x0, x0 x1, (x0 x1) x2
    np.testing.assert_allclose(ns["chain_grad"](X), want, atol=1e-8)


def test_a_default_function_is_static_by_itself(work):
    source, ns = emitted(work, "activated")
    assert "(static act=numpy.tanh)" in source.splitlines()[0]
    assert "at 0x" not in source
    np.testing.assert_allclose(ns["activated_grad"](X), 1 - np.tanh(X) ** 2, rtol=1e-12)


def test_the_check_option_agrees_with_the_user_function(work):
    result = run_cli("compile", "model.py:loss", "--static", "n=3", "--check", "-o", "out.py", cwd=work)
    assert result.status == 0, result
    assert "check: ok" in result.stderr


def test_show_and_other_modes_take_static(work):
    result = run_cli("show", "model.py:loss", "--static", "n=2", "--stage", "trace", cwd=work)
    assert result.status == 0, result
    assert result.stdout.startswith("def loss(x: f64[3], mode='sum') -> f64[]:")  # n is no parameter
    result = run_cli("compile", "model.py:loss", "--static", "n=2", "--mode", "jvp", "-o", "jvp.py", cwd=work)
    assert result.status == 0, result


@pytest.mark.parametrize("value", [
    "__import__('os').system('touch PWNED')",
    "open('PWNED', 'w')",
    "(lambda: 1)()",
    "[x for x in ()]",
    "(1).__class__",
    "exec('1')",
    "1 if True else 2",
    "f'{1}'",
])
def test_values_are_literals_and_never_run(work, value):
    result = run_cli("compile", "model.py:loss", "--static", f"n={value}", "-o", "out.py", cwd=work)
    assert result.status == 2, result
    assert "not a Python literal" in result.stderr
    assert not (work / "PWNED").exists() and not (work / "out.py").exists()


@pytest.mark.parametrize("option, message", [
    ("n", "malformed --static 'n'"),
    ("=3", "malformed --static"),
    ("1n=3", "malformed --static"),
    ("q=3", "loss has no parameter 'q'"),
    ("n=[1, 2]", "a list is not hashable"),
])
def test_bad_static_options_are_clear_errors(work, option, message):
    result = run_cli("compile", "model.py:loss", "--static", option, "-o", "out.py", cwd=work)
    assert result.status == 2, result
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_parameter_given_both_arg_and_static_is_an_error(work):
    result = run_cli("compile", "model.py:loss", "--static", "n=2", "--arg", "n=3", cwd=work)
    assert result.status == 2
    assert "given both --arg and --static" in result.stderr


def test_the_same_static_twice_is_an_error(work):
    result = run_cli("compile", "model.py:loss", "--static", "n=2", "--static", "n=3", cwd=work)
    assert result.status == 2
    assert "--static n is given more than once" in result.stderr
