"""Helpers stay functions (issue 26, part C1): however a helper is reached, a ``call`` equation with one body
per (helper, signature); derivatives checked against the user's Python function and central differences."""
from __future__ import annotations

import functools
import re

import calls_helpers
import numpy as np
import pytest
from calls_helpers import weighted_sum as imported_weighted_sum
from finite_differences import central_gradient

import gradc
from gradc.backends.numpy.calls import helper_bodies
from gradc.errors import TraceError
from gradc.trace import calls as calls_module
from gradc.trace.capture import converted_source

W = np.array([0.5, -1.0, 2.0, 0.25])
X = np.array([0.3, -0.2, 0.7, 0.1])


def weighted_sum(v, w):
    total = 0.0
    for k in range(v.shape[0]):
        total = total + w[k] * np.tanh(v[k])
    return total


def expected(x):
    return weighted_sum(x, W) * 2.0 + weighted_sum(np.sin(x), W)


def by_global(x):
    return weighted_sum(x, W) * 2.0 + weighted_sum(np.sin(x), W)


def by_module_attribute(x):
    return calls_helpers.weighted_sum(x, W) * 2.0 + calls_helpers.weighted_sum(np.sin(x), W)


def by_import(x):
    return imported_weighted_sum(x, W) * 2.0 + imported_weighted_sum(np.sin(x), W)


def _closing_over(helper):
    def by_closure(x):
        return helper(x, W) * 2.0 + helper(np.sin(x), W)
    return by_closure


by_closure = _closing_over(weighted_sum)


def defined_inside(x):
    def local_sum(v, w):
        total = 0.0
        for k in range(v.shape[0]):
            total = total + w[k] * np.tanh(v[k])
        return total
    return local_sum(x, W) * 2.0 + local_sum(np.sin(x), W)


class Model:
    def __init__(self, w):
        self.w = w

    def term(self, v):
        total = 0.0
        for k in range(v.shape[0]):
            total = total + self.w[k] * np.tanh(v[k])
        return total


MODEL = Model(W)


def by_method(x):
    return MODEL.term(x) * 2.0 + MODEL.term(np.sin(x))


PARTIAL = functools.partial(weighted_sum, w=W)


def by_partial(x):
    return PARTIAL(x) * 2.0 + PARTIAL(np.sin(x))


def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


@logged
def decorated_sum(v, w):
    total = 0.0
    for k in range(v.shape[0]):
        total = total + w[k] * np.tanh(v[k])
    return total


def by_wraps(x):
    return decorated_sum(x, W) * 2.0 + decorated_sum(np.sin(x), W)


WAYS = [by_global, by_module_attribute, by_import, by_closure, defined_inside, by_method, by_partial, by_wraps]


def _calls(graph):
    return [e for e in graph.eqns if e.op == "call"]


def _all_calls(graph):  # the call equations of the graph and of every body
    return [e for g in [graph] + helper_bodies([graph]) for e in _calls(g)]


@pytest.mark.parametrize("f", WAYS, ids=lambda f: f.__name__)
def test_each_way_of_reaching_a_helper_gives_one_body_called_twice(f):
    g = gradc.trace(f, X)
    inner = [b for b in helper_bodies([g]) if any(e.op == "scan" for e in b.eqns)]
    assert len(inner) == 1, str(g)  # the helper's loop stays a loop, however reached; one body
    assert len(_calls(g)) == 2 and _calls(g)[0].params["body"] is _calls(g)[1].params["body"], str(g)
    assert any(e.params["body"] is inner[0] for e in _all_calls(g))  # (a wraps wrapper's body calls it)


@pytest.mark.parametrize("f", WAYS, ids=lambda f: f.__name__)
def test_each_way_agrees_with_python_and_central_differences(f):
    np.testing.assert_allclose(gradc.compile(f, X).forward(X), expected(X), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(f)(X), central_gradient(expected, X), rtol=1e-6, atol=1e-8)


def test_the_rewritten_source_calls_helpers_through_the_hook():
    text = converted_source(by_global)
    assert "_gc_rt.call(weighted_sum, x, W)" in text and "np.sin(x)" in text  # NumPy calls stay as written


# ---------------------------------------------------------------- recursion: GradBench's det as written
def det_of(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    sign = 1.0
    for j in range(n):
        minor = np.delete(np.delete(A, 0, axis=0), j, axis=1)
        total = total + sign * A[0, j] * det_of(minor)
        sign = -sign
    return total


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_recursive_det_is_one_body_per_size_and_differentiates(n):
    A = np.random.default_rng(n).standard_normal((n, n))
    g = gradc.trace(det_of, A)
    sizes = sorted(b.inputs[0].type.shape[0] for b in helper_bodies([g]))
    assert sizes == list(range(2, n)), sizes  # the 1x1 base case is one operation: inlined
    np.testing.assert_allclose(gradc.compile(det_of, A).forward(A), np.linalg.det(A), rtol=1e-10)
    want = np.linalg.det(A) * np.linalg.inv(A).T
    np.testing.assert_allclose(gradc.grad(det_of)(A), want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gradc.grad(det_of)(A), central_gradient(det_of, A), rtol=1e-5, atol=1e-7)


def test_det_of_size_eleven_traces_eleven_bodies_at_most():
    A = np.random.default_rng(11).standard_normal((11, 11))
    g = gradc.trace(det_of, A)
    assert len(helper_bodies([g])) == 9  # sizes 10 .. 2, each traced once however many calls
    compiled = gradc.compile(det_of, A)
    # the 9 helpers and the compiled function itself (its name, det_of, is the user's: the helper's is det_of_1)
    assert len(re.findall(r"def det_of(_\d+)?\(", compiled.source)) == 10


def loops_forever(x):
    return loops_forever(x * 2.0)


def test_same_signature_recursion_on_traced_values_is_refused_at_the_users_line():
    with pytest.raises(TraceError, match="calls itself with the same argument types") as err:
        gradc.trace(loops_forever, X)
    assert "test_calls.py" in str(err.value)


# ---------------------------------------------------------------- traced once, however many calls
def step(v, w):
    out = v
    for k in range(3):
        out = np.tanh(out * w + k)
    return out


@pytest.mark.parametrize("calls", [2, 10, 40])
def test_bodies_do_not_grow_with_the_number_of_calls(calls):
    def chain(x):
        for _ in range(calls):  # a Python loop of helper calls (the helper's results feed the next call)
            x = step(x, W)
        return np.sum(x)
    gradc.trace(chain, X)  # warm the conversion caches
    g = gradc.trace(chain, X)
    assert len(helper_bodies([g])) == 1
    assert len(_calls(g)) == calls or any(e.op == "scan" for e in g.eqns)


def test_each_distinct_signature_is_its_own_body():
    def f(x):
        return step(x, W) .sum() + step(x[:2], W[:2]).sum() + step(x, W).sum()
    bodies = helper_bodies([gradc.trace(f, X)])
    assert [str(b.inputs[0].type) for b in bodies] == ["f64[4]", "f64[2]"]
    assert [b.name for b in bodies] == ["step", "step_1"]


# ---------------------------------------------------------------- the inlining rule
def tiny(v):
    return v * v


def test_small_helpers_are_inlined_and_listed():
    def f(x):
        return np.sum(tiny(x) + tiny(np.sin(x)))
    calls_module.INLINED.clear()
    g = gradc.trace(f, X)
    assert not _calls(g)
    assert [(h, why.split(" (")[0]) for _, h, why in calls_module.INLINED] == \
        [("tiny", "its body has 1 operation")] * 2


def test_a_helper_reading_traced_values_of_its_enclosing_function_is_inlined():
    def f(x):
        s = np.sin(x)

        def uses_s(v):
            total = 0.0
            for k in range(v.shape[0]):
                total = total + s[k] * v[k]
            return total
        return uses_s(x) + uses_s(np.cos(x))
    calls_module.INLINED.clear()
    g = gradc.trace(f, X)
    assert not _calls(g) and "reads traced values" in calls_module.INLINED[-1][2]
    ref = lambda x: float(np.sin(x) @ x + np.sin(x) @ np.cos(x))  # noqa: E731
    np.testing.assert_allclose(gradc.grad(f)(X), central_gradient(ref, X), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- a helper defined in the traced function
def test_item_assignment_in_a_helper_defined_inside_the_traced_function():
    """GradBench ht: ``tr = np.eye(4); tr[:3, :3] = R`` in a nested function (was StaticValueNeeded)."""
    def f(angles):
        def transform(a):
            c, s = np.cos(a), np.sin(a)
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            tr = np.eye(4)
            tr[:3, :3] = R
            return tr
        out = np.eye(4)
        for k in range(angles.shape[0]):
            out = out @ transform(angles[k])
        return np.sum(out * out)

    def plain(angles):
        out = np.eye(4)
        for a in angles:
            c, s = np.cos(a), np.sin(a)
            tr = np.eye(4)
            tr[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            out = out @ tr
        return np.sum(out * out)
    angles = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(gradc.grad(f)(angles), central_gradient(plain, angles), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- emitted code
def test_emitted_numpy_has_the_helper_and_its_adjoint_as_functions():
    src = gradc.compile(by_global, X).source
    assert src.count("def weighted_sum(") == 1 and src.count("def weighted_sum_adjoint(") == 1
    assert "weighted_sum(x, C0)" in src and "weighted_sum_adjoint(x, C0, " in src  # W: a float array argument


def test_a_user_name_equal_to_a_helper_name_renames_the_helper():
    def weighted_sum_adjoint(x):  # the user's own name, equal to the generated adjoint's
        return weighted_sum(x, W)
    src = gradc.compile(weighted_sum_adjoint, X).source
    assert "def weighted_sum_adjoint(x)" in src and "def weighted_sum_adjoint_1(" in src


def test_c_target_agrees_with_python():
    from gradc.backends.c import build
    if build.find_compiler() is None:
        pytest.skip("no C compiler")
    compiled = gradc.compile(by_global, X, target="c")
    value, grad = compiled.value_and_grad(X)
    np.testing.assert_allclose(value, expected(X), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(expected, X), rtol=1e-6, atol=1e-8)


def smooth(v, w):
    return np.sum(np.tanh(v * w) ** 2 + np.exp(-v * v) * w)


def loop_free(x):
    return smooth(x, W) * smooth(np.sin(x), W)


def test_array_api_target_inlines_the_helpers():
    assert _calls(gradc.trace(loop_free, X))
    compiled = gradc.compile(loop_free, X, target="array_api")
    assert "def smooth(" not in compiled.source  # inlined: the array-API target emits one body per function
    ref = lambda x: smooth(x, W) * smooth(np.sin(x), W)  # noqa: E731
    np.testing.assert_allclose(compiled.forward(X), ref(X), rtol=1e-12)
    np.testing.assert_allclose(compiled.grad(X), central_gradient(ref, X), rtol=1e-6, atol=1e-8)


def test_array_api_target_refuses_a_helper_with_a_loop_by_name():
    with pytest.raises(gradc.GradcError, match="no array-API spelling for ops .*scan"):
        gradc.compile(by_global, X, target="array_api")


def test_gradc_show_lists_the_inlined_helpers(tmp_path, capsys):
    from gradc.cli import main
    path = tmp_path / "show_me.py"
    path.write_text("import numpy as np\n\n\ndef tiny(v):\n    return v * v\n\n\ndef norm2(v):\n    s = 0.0\n"
                    "    for k in range(v.shape[0]):\n        s = s + v[k] * v[k]\n    return s\n\n\n"
                    "def f(x):\n    return norm2(tiny(x)) + norm2(np.sin(x))\n")
    assert main(["show", f"{path}:f", "--arg", "x=f64[3]"]) == 0
    out = capsys.readouterr().out
    assert "call t0 helper='norm2'" in out or "helper='norm2'" in out
    assert "# helpers inlined (not kept as functions)" in out
    assert "show_me.py:16: tiny: its body has 1 operation (at most 3" in out
