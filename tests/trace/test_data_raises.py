"""A ``raise`` or ``assert`` that depends on traced values is a run-time check of the compiled code.

The reference is always the user's own function run by NumPy: where it raises, every compiled path
(value, gradient, forward mode, Hessian, Jacobians; NumPy and C targets) raises the same exception class
with the same arguments; where it does not, they give its value (and the gradient agrees with central
differences of it). What a compiled check cannot say is refused at the ``raise``'s line.
"""
from __future__ import annotations

import importlib
import itertools
import linecache

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.transforms.batching import vmap_graph
from gradc.transforms.reverse import grad_graph

api = importlib.import_module("gradc.api")
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")
_COUNTER = itertools.count()


def _compile(source, name="f"):
    path = f"<data-raise-{next(_COUNTER)}>"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    namespace = {"np": np}
    exec(compile(source, path, "exec"), namespace)
    return namespace[name], path


def _line_of(source, marker):
    return next(k for k, text in enumerate(source.splitlines(), 1) if marker in text)


def outcome(fn, *args):
    """``("ok", value)`` or ``(exception class, its args)``: what calling ``fn`` gives."""
    try:
        return "ok", fn(*args)
    except gradc.GradcError:
        raise
    except Exception as e:  # noqa: BLE001  (the user's exception is the thing compared)
        return type(e), e.args


def assert_same(reference, got, what=""):
    if reference[0] != "ok":
        assert got[0] == reference[0] and repr(got[1]) == repr(reference[1]), (what, reference, got)  # nan too
        return
    assert got[0] == "ok", (what, reference, got)
    np.testing.assert_allclose(np.asarray(got[1], dtype=float), np.asarray(reference[1], dtype=float), rtol=1e-9,
                               atol=1e-12, err_msg=str(what))


def check_everywhere(f, inputs, c_target=False):
    """``f`` and each compiled form of it agree on each of ``inputs`` (value, exception, gradient)."""
    example = inputs[0]
    grad, value_and_grad = gradc.grad(f), gradc.value_and_grad(f)
    numpy_module = api.compile(f, example)
    c_module = api.compile(f, example, target="c") if c_target else None
    raised = 0
    for x in inputs:
        ref = outcome(f, x)
        raised += ref[0] != "ok"
        got = outcome(value_and_grad, x)
        assert_same(ref, (got[0], got[1][0]) if got[0] == "ok" else got, ("value_and_grad", x))
        assert_same(ref, outcome(numpy_module.forward, x), ("compiled forward", x))
        for module in [numpy_module] + ([c_module] if c_target else []):
            vg = outcome(module.value_and_grad, x)
            assert_same(ref, (vg[0], vg[1][0]) if vg[0] == "ok" else vg, ("compiled value_and_grad", x))
        g = outcome(grad, x)
        if ref[0] != "ok":
            assert_same(ref, g, ("grad", x))
        else:
            np.testing.assert_allclose(g[1], central_gradient(f, x), rtol=1e-5, atol=1e-6)
        if c_target:
            assert_same(ref, outcome(c_module.forward, x), ("C forward", x))
            slow = outcome(c_module._slow_value_and_grad, x)  # the ctypes path raises the same exception
            assert_same(ref, (slow[0], slow[1][0]) if slow[0] == "ok" else slow, ("C through ctypes", x))
            cg = outcome(c_module.grad, x)
            assert cg[0] == g[0] and (cg[0] != "ok" or np.allclose(cg[1], g[1])), (x, cg, g)
    assert 0 < raised < len(inputs), "the inputs must fall on both sides of the checks"


GOOD, NEGATIVE, LARGE = np.array([1.0, 4.0, 2.0]), np.array([1.0, -4.0, 2.0]), np.array([30.0, 40.0, 50.0])

ISSUE = "def f(x):\n    if np.any(x < 0):\n        raise ValueError('x must be >= 0')\n    return np.sum(np.sqrt(x))\n"


# ---------------------------------------------------------------- the issue's examples
def test_the_issues_raise_is_a_run_time_check():
    f, _ = _compile(ISSUE)
    np.testing.assert_allclose(gradc.grad(f)(GOOD), 0.5 / np.sqrt(GOOD))
    with pytest.raises(ValueError, match="^x must be >= 0$"):
        gradc.grad(f)(NEGATIVE)
    check_everywhere(f, [GOOD, NEGATIVE, LARGE, np.array([0.5, 0.5, -1e-9])])
    graph = optimize(gradc.trace(f, GOOD))
    assert "check_raise" in str(graph) and "exception='ValueError'" in str(graph)


@needs_cc
def test_the_issues_raise_is_checked_by_the_c_target():
    f, _ = _compile(ISSUE)
    check_everywhere(f, [GOOD, NEGATIVE, LARGE], c_target=True)


def test_assert_with_and_without_a_message():
    src = ("def f(x):\n    assert np.all(x > 0), 'need positive x'\n    assert np.sum(x) < 100.0\n"
           "    return np.sum(np.log(x) * x)\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, NEGATIVE, LARGE, np.array([1.0, 2.0, 200.0])])
    with pytest.raises(AssertionError) as info:
        gradc.grad(f)(np.array([1.0, 2.0, 200.0]))
    assert info.value.args == ()  # Python's own AssertionError of an assert without a message
    with pytest.raises(AssertionError, match="^need positive x$"):
        api.compile(f, GOOD).value_and_grad(NEGATIVE)


def test_a_raise_in_the_else_branch_and_under_not():
    for src in ["def f(x):\n    s = np.sum(x ** 2)\n    if np.max(x) < 10.0:\n        s = s * 2.0\n    else:\n"
                "        raise OverflowError('too large')\n    return s\n",
                "def f(x):\n    s = np.sum(x ** 2)\n    if not np.all(x > 0.0):\n        raise ValueError('bad')\n"
                "    return s\n",
                "def f(x):\n    if np.min(x) > 0.0:\n        return np.sum(np.log(x))\n    else:\n"
                "        raise ZeroDivisionError('log of a non-positive value')\n"]:
        f, _ = _compile(src)
        check_everywhere(f, [GOOD, NEGATIVE, LARGE, np.array([20.0, 1.0, 1.0])])


def test_a_raise_in_a_nested_branch():
    src = ("def f(x):\n    s = np.sum(x)\n    if s > 0.0:\n        if x[0] > 5.0:\n"
           "            raise RuntimeError('x0')\n        s = s * 3.0\n    else:\n"
           "        assert x[1] > -5.0, 'x1'\n        s = s - 1.0\n    return s * x[2]\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, np.array([6.0, 1.0, 1.0]), np.array([-1.0, -1.0, 1.0]), np.array([-1.0, -9.0, 1.0])])


def test_a_raise_in_a_for_loop_and_a_while_loop():
    loop = ("def f(x):\n    s = 0.0\n    for i in range(x.shape[0]):\n        if x[i] < 0.0:\n"
            "            raise ValueError('negative entry')\n        s = s + x[i] ** 2 * s + x[i]\n    return s\n")
    f, _ = _compile(loop)
    graph = optimize(gradc.trace(f, GOOD))
    assert any(e.op == "scan" for e in graph.eqns), "the loop stays a loop"
    check_everywhere(f, [GOOD, NEGATIVE, np.array([-1.0, 2.0, 3.0])])
    counted = ("def f(x, n):\n    s = np.sum(x)\n    for i in range(n):\n        assert s < 50.0, 'diverged'\n"
               "        s = s * 2.0\n    return s\n")
    g, _ = _compile(counted)
    for n in (0, 2, 6):  # a check in a loop that runs no iteration never raises (a static and a traced count)
        for count in (n, np.array(n)):
            assert_same(outcome(g, GOOD, count), outcome(lambda x, k: gradc.value_and_grad(g)(x, k)[0], GOOD, count))
    while_src = ("def f(x):\n    s = np.sum(x)\n    while s < 100.0:\n        if s < -100.0:\n"
                 "            raise ArithmeticError('diverged')\n        s = s * 2.0 + 1.0\n    return s\n")
    h, _ = _compile(while_src)
    check_everywhere(h, [GOOD, np.array([-2.0, -1.0, 1.0]), np.array([-3.0, -4.0, 1.0])])


@needs_cc
def test_loops_and_branches_are_checked_by_the_c_target():
    src = ("def f(x):\n    s = 0.0\n    for i in range(x.shape[0]):\n        if x[i] < 0.0:\n"
           "            raise ValueError('negative entry')\n        s = s + x[i] * s + x[i]\n"
           "    while s < 100.0:\n        assert s > 0.0, 'stuck'\n        s = s * 2.0 + 1.0\n"
           "    if s > 1e4:\n        raise OverflowError('large')\n    return s\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, NEGATIVE, np.array([0.0, 0.0, 0.0]), LARGE * 10], c_target=True)


def test_forward_mode_hessian_and_jacobians_keep_the_checks():
    f, _ = _compile("def f(x):\n    if np.any(x < 0):\n        raise ValueError('x must be >= 0')\n"
                    "    assert np.sum(x) < 100.0, 'sum too big'\n    return np.sum(np.sqrt(x) * x)\n")
    v, _ = _compile("def v(x):\n    if np.any(x < 0):\n        raise ValueError('x must be >= 0')\n"
                    "    return np.sqrt(x) * x\n", "v")
    transforms = [lambda x: gradc.jvp(f, (x,), (np.ones(3),)), lambda x: gradc.hessian(f)(x),
                  lambda x: gradc.hvp(f, (x,), (np.ones(3),)), lambda x: gradc.jacfwd(v)(x),
                  lambda x: gradc.jacrev(v)(x), lambda x: gradc.vjp(v, x)[1](np.ones(3))]
    for transform in transforms:
        assert outcome(transform, GOOD)[0] == "ok"
        assert_same(outcome(f, NEGATIVE), outcome(transform, NEGATIVE))
    for transform in transforms[:3]:
        assert_same(outcome(f, LARGE), outcome(transform, LARGE))
    np.testing.assert_allclose(gradc.hessian(f)(GOOD), np.diag(0.75 / np.sqrt(GOOD)))


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_every_compile_mode_keeps_the_checks(target):
    f, _ = _compile("def f(x):\n    assert np.all(x > 0), 'positive'\n    if np.sum(x) > 10.0:\n"
                    "        raise ValueError('large')\n    return np.sum(np.log(x) * x)\n")
    extra = {"vjp": (np.float64(1.0),), "jvp": (np.ones(3),), "hvp": (np.ones(3),)}
    for mode in ("vjp", "jvp", "jacobian", "hessian", "hvp"):
        unit = api.compile(f, GOOD, mode=mode, target=target)
        run = getattr(unit, mode)
        assert outcome(run, GOOD, *extra.get(mode, ()))[0] == "ok"
        for x in (NEGATIVE, LARGE):
            assert_same(outcome(f, x), outcome(run, x, *extra.get(mode, ())), (mode, x))
            assert_same(outcome(f, x), outcome(unit.forward, x), (mode, x))


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_a_check_with_named_sizes(target):
    f, _ = _compile("def f(x):\n    if np.any(x < 0.0):\n        raise ValueError('negative entry')\n"
                    "    assert np.sum(x) < 100.0, 'big'\n    return np.sum(np.sqrt(x) * x)\n")
    module = api.compile(f, gradc.spec("f64[n]"), target=target)
    for x in (np.array([1.0, 2.0]), np.array([1.0, -2.0, 3.0]), np.array([10.0, 200.0, 1.0, 1.0])):
        assert_same(outcome(f, x), first(outcome(module.value_and_grad, x)), x)
        assert_same(outcome(f, x), outcome(module.forward, x), x)


def first(result):
    return (result[0], result[1][0]) if result[0] == "ok" else result


def test_a_check_inside_a_checkpointed_block():
    src = ("import gradc\n\ndef block(x):\n    if np.any(x < 0):\n        raise ValueError('negative in block')\n"
           "    return np.sin(x) * x\n\ndef f(x):\n    return np.sum(gradc.checkpoint(block)(x) ** 2)\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, NEGATIVE, -GOOD])


def test_a_batch_raises_only_where_an_elements_own_branch_or_loop_runs():
    src = ("def f(x):\n    s = np.sum(x)\n    if s > 0.0:\n        if x[0] > 5.0:\n"
           "            raise OverflowError('x0')\n        s = s * 3.0\n    else:\n"
           "        assert x[1] > -5.0, 'x1'\n    while s < 10.0:\n        if s < -100.0:\n"
           "            raise ValueError('diverged')\n        s = s * 2.0 + 1.0\n    return s\n")
    f, _ = _compile(src)
    batched = optimize(vmap_graph(gradc.trace(f, np.ones(2)), [0], 3), check=True)
    rows = [[[1.0, 2.0], [-1.0, -1.0], [0.5, 0.5]], [[6.0, 2.0], [-1.0, 0.5], [0.5, 0.5]],
            [[1.0, 2.0], [-2.0, -9.0], [0.5, 0.5]], [[-3.0, -2.0], [0.1, -0.5], [0.5, 0.5]],
            [[-30.0, -80.0], [1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [-1.0, 1.5], [2.0, 2.0]]]
    for batch in map(np.array, rows):
        reference = outcome(lambda b: np.array([f(r) for r in b]), batch)
        assert_same(reference, outcome(lambda b: evaluate(batched, b)[0], batch), batch)


# ---------------------------------------------------------------- what the checks look like
def test_messages_reach_the_emitted_code_escaped():
    messages = ["it's \"quoted\"", "back\\slash", "new\nline\ttab", "{} {0} %s %d", 'triple """ and \'\'\'',
                "*/ /* comment ends", "caf\u00e9 \u202e bidi", "\x00nul"]
    for message in messages:
        src = f"def f(x):\n    if np.sum(x) > 10.0:\n        raise ValueError({message!r})\n    return np.sum(x * x)\n"
        f, _ = _compile(src)
        module = api.compile(f, GOOD)
        with pytest.raises(ValueError) as info:
            module.value_and_grad(LARGE)
        assert info.value.args == (message,)
        assert message not in module.source or message.isprintable()  # never raw when it is not plain text
        compile(module.source, "<emitted>", "exec")


@needs_cc
def test_messages_through_the_c_target():
    for message in ["*/ int main(void) { return 0; } /*", "new\nline \"q\" \\", "\u202e"]:
        src = f"def f(x):\n    if np.sum(x) > 10.0:\n        raise ValueError({message!r})\n    return np.sum(x * x)\n"
        f, _ = _compile(src)
        module = api.compile(f, GOOD, target="c")
        with pytest.raises(ValueError) as info:
            module.value_and_grad(LARGE)
        assert info.value.args == (message,)
        assert "int main" not in module.c_source.replace("/* ", "").split("*/")[0] or "*\\/" in module.c_source
        assert module.value_and_grad(GOOD)[0] == pytest.approx(21.0)


def test_exception_arguments_and_classes_are_kept():
    cases = ["KeyError('k')", "IndexError('index', -3)", "ValueError", "ArithmeticError(2.5, None, True)",
             "OverflowError(float('nan'), float('-inf'), -0.5)",
             "np.linalg.LinAlgError('singular')", "NotImplementedError()"]
    for exc in cases:
        f, _ = _compile(f"def f(x):\n    if x[0] < 0.0:\n        raise {exc}\n    return np.sum(x ** 3)\n")
        check_everywhere(f, [GOOD, -GOOD])


def test_the_check_survives_the_passes_and_a_gradient_that_does_not_need_its_value():
    f, _ = _compile("def f(x):\n    y = x * 2.0\n    if np.any(y < 0):\n        raise ValueError('negative')\n"
                    "    return np.sum(x)\n")
    g = optimize(grad_graph(gradc.trace(f, GOOD), ["x"]))  # the gradient is constant: only the check reads x
    assert [e.op for e in g.eqns].count("check_raise") == 1
    with pytest.raises(ValueError, match="negative"):
        evaluate(g, NEGATIVE)
    never, _ = _compile("def f(x):\n    if 1.0 > 2.0:\n        raise ValueError('never')\n    return np.sum(x)\n")
    assert "check_raise" not in str(optimize(gradc.trace(never, GOOD)))


def test_a_static_condition_is_still_pythons():
    src = "def f(x):\n    if x.shape[0] == 0:\n        raise ValueError('empty')\n    return np.sum(x ** 2)\n"
    f, _ = _compile(src)
    np.testing.assert_allclose(gradc.grad(f)(np.ones(2)), [2.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        gradc.grad(f)(np.ones(0))
    assert "check_raise" not in str(gradc.trace(f, np.ones(2)))
    static = "def f(x):\n    assert x.ndim == 1, 'a vector'\n    return np.sum(x ** 2)\n"
    g, _ = _compile(static)
    with pytest.raises(AssertionError, match="a vector"):
        gradc.grad(g)(np.ones((2, 2)))


def test_a_raise_in_a_helper_function_is_a_check_too():
    src = ("def positive(x):\n    if np.any(x <= 0):\n        raise ValueError('not positive')\n    return x\n\n"
           "def fail():\n    raise RuntimeError('unreachable')\n\n"
           "def f(x):\n    x = positive(x)\n    if np.sum(x) > 100.0:\n        fail()\n    return np.sum(np.log(x))\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, NEGATIVE, LARGE])


# ---------------------------------------------------------------- refused, at the raise's line
def _refused(src, marker, *words):
    f, path = _compile(src)
    with pytest.raises(gradc.TraceError) as info:
        gradc.grad(f)(GOOD)
    text = str(info.value)
    assert f"{path}:{_line_of(src, marker)}" in text, text
    for word in words:
        assert word in text, text
    return text


IF_NEGATIVE = "def f(x):\n    if np.any(x < 0):\n        {}  # HERE\n    return np.sum(x)\n"


def test_what_a_check_cannot_say_is_refused_clearly():
    _refused("class Mine(ValueError):\n    pass\n\ndef f(x):\n    if np.any(x < 0):\n        raise Mine('x')  # HERE\n"
             "    return np.sum(x)\n", "HERE", "Mine", "builtin", "ValueError")
    _refused(IF_NEGATIVE.format("raise ValueError(f'bad {x[0]}')"), "HERE", "traced value", "constant message")
    _refused("def f(x):\n    assert np.all(x > 0), f'bad {np.sum(x)}'  # HERE\n    return np.sum(x)\n",
             "HERE", "traced value")
    _refused(IF_NEGATIVE.format("raise ValueError('bad', [1, 2])"), "HERE", "list")
    _refused(IF_NEGATIVE.format("raise"), "HERE", "re-raise")
    _refused(IF_NEGATIVE.format("raise 3"), "HERE", "not an exception")
    _refused("def f(x):\n    if np.any(x < 0):  # HERE\n        raise ValueError('a')\n    else:\n"
             "        raise ValueError('b')\n    return np.sum(x)\n", "HERE", "every branch", "never returns")
    _refused("def f(x):\n    assert x > 0, 'array'  # HERE\n    return np.sum(x)\n", "HERE", "np.all")
    _refused("import sys\n\ndef f(x):\n    if np.any(x < 0):\n        sys.exit('bad')  # HERE\n    return np.sum(x)\n",
             "HERE", "SystemExit")
    _refused(IF_NEGATIVE.format("raise SystemExit('bad')"), "HERE", "SystemExit")


def test_an_error_that_is_not_a_raise_statement_is_still_refused():
    text = _refused("def f(x):\n    if np.any(x < 0):\n        y = {}['missing']  # HERE\n    return np.sum(x)\n",
                    "HERE", "KeyError", "fails with")
    assert "check" in text


def test_every_branch_raising_inside_a_branch_is_that_branch_raising():
    src = ("def f(x):\n    s = np.sum(x)\n    if s > 10.0:\n        if x[0] > 0.0:\n            raise ValueError('a')\n"
           "        else:\n            raise KeyError('b')\n    return s * 2.0\n")
    f, _ = _compile(src)
    check_everywhere(f, [GOOD, LARGE, np.array([-5.0, 10.0, 10.0])])


# ---------------------------------------------------------------- other targets and the CLI
def test_the_array_api_target_runs_the_checks_on_numpy_and_dask_arrays():
    da = pytest.importorskip("dask.array")
    f, _ = _compile("def f(x):\n    assert np.all(x > 0), 'need positive x'\n    if np.sum(x) > 10.0:\n"
                    "        raise RuntimeError('big')\n    return np.sum(np.log(x))\n")
    module = api.compile(f, GOOD, target="array_api")
    for x in (GOOD, NEGATIVE, LARGE):
        ref = outcome(f, x)
        for arr in (x, da.from_array(x)):
            got = outcome(module.value_and_grad, arr)
            assert_same(ref, (got[0], np.asarray(got[1][0])) if got[0] == "ok" else got, x)


def _cli(tmp_path, *extra):
    from cli_harness import run_cli
    (tmp_path / "model.py").write_text("import numpy as np\n\n\ndef loss(x: 'f64[3]'):\n    if np.any(x < 0):\n"
                                       "        raise ValueError('x must be >= 0')\n    assert np.sum(x) < 100.0, "
                                       "\"sum 'too' big\"\n    return np.sum(np.sqrt(x) * x)\n")
    return run_cli("compile", "model.py:loss", *extra, cwd=str(tmp_path))


def test_gradc_compile_on_the_command_line(tmp_path):
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "cli"))
    try:
        result = _cli(tmp_path, "-o", "out.py", "--check")
        assert result.status == 0, result
        namespace: dict = {}
        exec(compile((tmp_path / "out.py").read_text(), "out.py", "exec"), namespace)
        np.testing.assert_allclose(namespace["loss_grad"](GOOD), 1.5 * np.sqrt(GOOD))
        with pytest.raises(ValueError, match="^x must be >= 0$"):
            namespace["loss_grad"](NEGATIVE)
        with pytest.raises(AssertionError, match="^sum 'too' big$"):
            namespace["loss"](LARGE)
        if c_build.find_compiler() is not None:
            result = _cli(tmp_path, "--target", "c", "-o", "out.c", "--check")
            assert result.status == 0, result
            header = (tmp_path / "out.h").read_text()
            assert "returns 1: raise ValueError('x must be >= 0')" in header
            assert "returns 2: raise AssertionError(\"sum 'too' big\")" in header
    finally:
        sys.path.pop(0)
