"""Every kind of Python signature works in grad, value_and_grad, compile and the CLI (issue 11, must-have 8).

Keyword-only and positional-only parameters, defaults, ``functools.partial``, lambdas,
methods and callable objects; generators, coroutines and ``None`` returns are errors at
the user's line (never at gradc's own files or the installed ``bin/gradc``).
Gradients are compared against central finite differences.
"""
import functools
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradc
from gradc.errors import ArgumentError, GradcError, TraceError

HERE = "test_api_signatures.py"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fd_grad(f, x, h=1e-6):
    """Central finite differences of scalar ``f`` at ``x``."""
    if isinstance(x, float):
        return (f(x + h) - f(x - h)) / (2 * h)
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.reshape(-1)[k] = h
        g.reshape(-1)[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def def_line(fn):
    fn = getattr(fn, "__func__", fn)
    return inspect.getsourcelines(fn)[1]


def assert_error_at(err, cls, line, *words):
    assert isinstance(err, cls), type(err)
    text = str(err)
    assert "\n" not in text, text
    assert f"{HERE}:{line}" in text, text
    assert err.hint, text
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"


X = np.array([0.3, -1.2, 0.7])
Y = np.array([1.5, 0.2, -0.4])


# ---------------------------------------------------------------- signatures that work
def kw_only(a, *, s):
    return np.sum(np.sin(a) * s)


def kw_only_default(a, *, s=2.0, n=2):
    return np.sum(a[:n] ** 2) * s


def pos_only(a, /, b):
    return np.sum(a * b * b)


def pos_only_with_kw_only(a, /, b, *, c=0.5):
    return np.sum(a * b + c * a * a)


def with_defaults(a, b=None, scale=1.5):
    if b is None:
        return np.sum(a * a) * scale
    return np.sum(a * b) * scale


def two_params(w, x):
    return np.sum(np.tanh(w * x))


class Model:
    def __init__(self):
        self.offset = 0.25

    def loss(self, x, *, p=3):
        return np.sum((x + self.offset) ** p)

    @staticmethod
    def static_loss(x):
        return np.sum(np.exp(x))

    @classmethod
    def class_loss(cls, x):
        return np.sum(x ** 4)

    def __call__(self, x):
        return np.sum(np.cos(x))


# (name -> (function, call args, call kwargs, wrt, reference: the gradient as a function of the wrt value))
WORKING = {
    "kw-only-by-keyword": (kw_only, (X,), {"s": 2.0}, 0, lambda a: kw_only(a, s=2.0)),
    "kw-only-wrt-name": (kw_only, (X,), {"s": 2.0}, "s", lambda s: kw_only(X, s=s)),
    "kw-only-default": (kw_only_default, (X,), {}, 0, lambda a: kw_only_default(a)),
    "kw-only-default-overridden": (kw_only_default, (X,), {"s": -1.0, "n": 3}, 0,
                                   lambda a: kw_only_default(a, s=-1.0, n=3)),
    "kw-only-static-int": (kw_only_default, (X,), {"n": 1}, 0, lambda a: kw_only_default(a, n=1)),
    "pos-only": (pos_only, (X, Y), {}, 1, lambda b: pos_only(X, b)),
    "pos-only-and-kw-only": (pos_only_with_kw_only, (X, Y), {"c": 2.0}, 0,
                             lambda a: pos_only_with_kw_only(a, Y, c=2.0)),
    "defaults-omitted": (with_defaults, (X,), {}, 0, lambda a: with_defaults(a)),
    "defaults-by-keyword": (with_defaults, (X,), {"b": Y}, "b", lambda b: with_defaults(X, b=b)),
    "all-by-keyword": (two_params, (), {"x": Y, "w": X}, "w", lambda w: two_params(w, Y)),
    "partial-keyword": (functools.partial(kw_only, s=3.0), (X,), {}, 0, lambda a: kw_only(a, s=3.0)),
    "partial-keyword-overridden": (functools.partial(kw_only, s=3.0), (X,), {"s": 0.5}, 0,
                                   lambda a: kw_only(a, s=0.5)),
    "partial-positional": (functools.partial(two_params, X), (Y,), {}, 0, lambda x: two_params(X, x)),
    "nested-partial": (functools.partial(functools.partial(pos_only_with_kw_only, c=1.0), X), (Y,), {}, 0,
                       lambda b: pos_only_with_kw_only(X, b, c=1.0)),
    "lambda": (lambda a: np.sum(a ** 3), (X,), {}, 0, lambda a: np.sum(a ** 3)),
    "lambda-default": (lambda a, k=2.0: np.sum(a * k), (X,), {}, 0, lambda a: np.sum(a * 2.0)),
    "lambda-kw-only": (lambda a, *, k: np.sum(a * k), (X,), {"k": 4.0}, 0, lambda a: np.sum(a * 4.0)),
    "bound-method": (Model().loss, (X,), {}, 0, lambda x: Model().loss(x)),
    "bound-method-kw-only": (Model().loss, (X,), {"p": 2}, 0, lambda x: Model().loss(x, p=2)),
    "staticmethod": (Model.static_loss, (X,), {}, 0, Model.static_loss),
    "classmethod": (Model.class_loss, (X,), {}, 0, Model.class_loss),
    "callable-object": (Model(), (X,), {}, 0, Model()),
    "partial-of-method": (functools.partial(Model().loss, p=4), (X,), {}, 0, lambda x: Model().loss(x, p=4)),
}


def _wrt_value(fn, args, kwargs, wrt):
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.arguments.values())[wrt] if isinstance(wrt, int) else bound.arguments[wrt]


@pytest.mark.parametrize("name", sorted(WORKING))
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_signature_works_and_matches_finite_differences(name, transform):
    fn, args, kwargs, wrt, ref = WORKING[name]
    g = getattr(gradc, transform)(fn, wrt=wrt)
    for _ in range(2):  # the first call traces, the second runs the cached code
        got = g(*args, **kwargs)
        if transform == "value_and_grad":
            value, got = got
            np.testing.assert_allclose(value, fn(*args, **kwargs), rtol=1e-12)
        np.testing.assert_allclose(got, fd_grad(ref, _wrt_value(fn, args, kwargs, wrt)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(WORKING))
def test_signature_compiles(name):
    fn, args, kwargs, wrt, ref = WORKING[name]
    compiled = gradc.compile(fn, *args, wrt=wrt, **kwargs)
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    values = list(bound.arguments.values())
    got = compiled.grad(*values)  # the emitted functions take every parameter, in order
    np.testing.assert_allclose(got, fd_grad(ref, _wrt_value(fn, args, kwargs, wrt)), rtol=1e-6, atol=1e-9)


def test_kw_only_graph_keeps_parameter_names_and_order():
    graph = gradc.trace(pos_only_with_kw_only, X, Y, c=2.0)
    assert graph.params == ["a", "b", "c"]
    assert str(graph).startswith("def pos_only_with_kw_only(a: f64[3], b: f64[3], c: f64[]) -> f64[]:")


def test_partial_is_named_after_its_function():
    graph = gradc.trace(functools.partial(kw_only, s=3.0), X)
    assert graph.name == "kw_only"
    assert gradc.compile(functools.partial(two_params, X), Y).name == "two_params"


def test_kw_only_passed_positionally_is_an_error_at_the_call():
    g = gradc.grad(kw_only)
    with pytest.raises(ArgumentError) as info:
        g(X, 2.0)  # CALL
    line = inspect.getsourcelines(test_kw_only_passed_positionally_is_an_error_at_the_call)[1] + 3
    assert_error_at(info.value, ArgumentError, line, "positional")


def test_missing_kw_only_argument_is_an_error_at_the_call():
    with pytest.raises(ArgumentError) as info:
        gradc.grad(kw_only)(X)
    line = inspect.getsourcelines(test_missing_kw_only_argument_is_an_error_at_the_call)[1] + 2
    assert_error_at(info.value, ArgumentError, line, "'s'")


# ---------------------------------------------------------------- functions that cannot be differentiated
def generator(x):
    yield np.sum(x)


def returns_generator_expression(x):
    return (np.sum(v) for v in x)


async def coroutine(x):
    return np.sum(x)


def returns_none(x):
    np.sum(x * x)


def returns_none_explicitly(x):
    if x.shape[0] > 1:
        return None
    return np.sum(x)


def star_args(*xs):
    return np.sum(xs[0])


def star_kwargs(x, **extra):
    return np.sum(x)


BAD_FUNCTIONS = {
    "generator": (generator, TraceError, ("generator", "yield"), ("return",)),
    "generator-expression": (returns_generator_expression, TraceError, ("generator",), ("return",)),
    "coroutine": (coroutine, TraceError, ("async",), ("def",)),
    "returns-none": (returns_none, TraceError, ("None",), ("return",)),
    "returns-none-explicitly": (returns_none_explicitly, TraceError, ("None",), ("return",)),
    "partial-of-generator": (functools.partial(generator), TraceError, ("generator",), ("return",)),
}


@pytest.mark.parametrize("name", sorted(BAD_FUNCTIONS))
@pytest.mark.parametrize("entry", ["grad", "value_and_grad", "compile", "trace"])
def test_bad_function_is_an_error_at_its_definition(name, entry):
    fn, cls, words, hint_words = BAD_FUNCTIONS[name]
    run = {"grad": lambda: gradc.grad(fn)(X), "value_and_grad": lambda: gradc.value_and_grad(fn)(X),
           "compile": lambda: gradc.compile(fn, X), "trace": lambda: gradc.trace(fn, X)}[entry]
    with pytest.raises(GradcError) as info:
        run()
    assert_error_at(info.value, cls, def_line(getattr(fn, "func", fn)), *words)
    for word in hint_words:
        assert word in info.value.hint, info.value.hint


@pytest.mark.parametrize("entry", ["grad", "value_and_grad", "compile", "trace"])
def test_star_parameters_take_the_calls_arguments(entry):
    """JAX's rule: each positional of the call is an argument (tests/transforms/test_variadic.py has the rest)."""
    for fn in (star_args, star_kwargs):
        got = {"grad": lambda f: gradc.grad(f)(X), "value_and_grad": lambda f: gradc.value_and_grad(f)(X)[1],
               "compile": lambda f: gradc.compile(f, X).grad(X), "trace": lambda f: gradc.trace(f, X)}[entry](fn)
        if entry == "trace":
            assert "_0: f64[3]" in str(got) or "x: f64[3]" in str(got)
        else:
            np.testing.assert_array_equal(got, np.ones_like(X))


# ---------------------------------------------------------------- the CLI
USER_FILE = textwrap.dedent('''\
    import functools

    import numpy as np


    def kw(x: "f64[3]", *, s: "f64[]"):
        return np.sum(np.sin(x) * s)


    def kw_default(x: "f64[3]", *, n=2, s=1.5):
        return np.sum(x[:n] ** 2) * s


    def pos_only(x: "f64[3]", /, w: "f64[3]"):
        return np.sum(x * w * w)


    def base(x, w, *, s=1.0):
        return np.sum(np.tanh(x * w)) * s


    bound = functools.partial(base, s=2.0)


    def gen(x: "f64[3]"):
        yield np.sum(x)


    def none(x: "f64[3]"):
        np.sum(x)


    def star(*xs):
        return np.sum(xs[0])
    ''')


def line_in_user_file(text):
    return next(k for k, line in enumerate(USER_FILE.splitlines(), 1) if text in line)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(USER_FILE)
    script = tmp_path / "bin" / "gradc"  # what pip installs as the console script
    script.parent.mkdir()
    script.write_text("import sys\nfrom gradc.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n")
    return tmp_path


def run_cli(work, how, *args):
    env = dict(os.environ, PYTHONPATH=REPO)
    command = [sys.executable, "-m", "gradc"] if how == "module" else [sys.executable, str(work / "bin" / "gradc")]
    return subprocess.run([*command, *args], cwd=work, env=env, capture_output=True, text=True, timeout=120)


CLI_WORKING = {
    "kw-only": ["model.py:kw", "--wrt", "x,s"],
    "kw-only-defaults": ["model.py:kw_default", "--arg", "n=3"],
    "pos-only": ["model.py:pos_only"],
    "partial": ["model.py:bound", "--arg", "x=f64[3]", "--arg", "w=f64[3]", "--wrt", "w"],
}


@pytest.mark.parametrize("name", sorted(CLI_WORKING))
def test_cli_compiles_and_checks_every_signature(work, name):
    proc = run_cli(work, "module", "compile", *CLI_WORKING[name], "-o", "out.py", "--check")
    assert proc.returncode == 0, proc.stderr
    assert "check: ok" in proc.stderr, proc.stderr
    namespace = {}
    exec(compile((work / "out.py").read_text(), "out.py", "exec"), namespace)
    assert callable(namespace[[k for k in namespace if k.endswith("_value_and_grad")][0]])


CLI_BAD = {
    "generator": ("model.py:gen", "def gen", "generator"),
    "none": ("model.py:none", "def none", "None"),
    "star-args": ("model.py:star", "def star", "*xs"),
}


@pytest.mark.parametrize("how", ["module", "script"])
@pytest.mark.parametrize("name", sorted(CLI_BAD))
def test_cli_errors_point_at_the_users_file(work, name, how):
    target, def_text, word = CLI_BAD[name]
    proc = run_cli(work, how, "compile", target, "-o", "out.py")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gradc: error: "), proc.stderr
    assert f"model.py:{line_in_user_file(def_text)}" in lines[0], lines[0]
    assert word in lines[0] and "bin/gradc" not in lines[0] and "Traceback" not in proc.stderr, lines[0]
    assert not (work / "out.py").exists()


@pytest.mark.parametrize("name", ["if", "1abc", "None", "class", "héllo", "a-b", ""])
def test_function_names_that_are_not_identifiers_still_emit_valid_code(name):
    """The emitted def takes a valid identifier whatever ``__name__`` holds (gradients checked against 2x)."""
    def f(x):
        return np.sum(x ** 2)

    f.__name__ = name
    compiled = gradc.compile(f, np.ones(2))
    compile(compiled.source, "<emitted>", "exec")
    np.testing.assert_array_equal(compiled.grad(np.array([1.0, -3.0])), [2.0, -6.0])


def test_compiled_functions_keep_the_defaults_of_the_users_def():
    def f(x, s=2.0, n=3):
        return np.sum(x ** 2) * s + n

    c = gradc.compile(f, np.ones(2))
    assert c.source.count("(x, s=2.0, n=3):") == 3
    value, grad = c.value_and_grad(np.ones(2))
    assert value == 7.0 and list(grad) == [4.0, 4.0]
    assert list(c.grad(np.ones(2), 1.0)) == [2.0, 2.0]
