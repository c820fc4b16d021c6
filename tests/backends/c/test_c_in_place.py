"""Arrays written in place by the C target: O(1) work per O(1) write, and no aliasing of live values.

Seeded random fill programs (``fill_programs``: writes at the counter and at positions derived
from it, tuple targets, ``+=``, reads of earlier slots, branches, nested loops, whole rows)
compiled to C agree with the user's function run by NumPy and with central differences.
Programs where a value is still read after an update of its array (by the loop, after the
loop, in a branch, by a sibling operand) check that such an update copies. The emitted C of
the fill loop and of its adjoint has no loop over the whole array inside the loop.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from c_fill_programs import argument, fill_program, load
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.ops.shape_extra import index_update

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _check(f, x, rtol=1e-10):
    """C's value and gradient of ``f`` at ``x`` against ``f`` itself and central differences."""
    c = gradc.compile(f, x, target="c")
    value, grad = c.value_and_grad(x)
    np.testing.assert_allclose(value, f(x), rtol=rtol, atol=1e-12, err_msg="value against the function")
    np.testing.assert_allclose(c.forward(x), f(x), rtol=rtol, atol=1e-12, err_msg="forward against the function")
    fd = central_gradient(lambda z: float(f(z)), x)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6, err_msg="gradient against central differences")
    return c


@pytest.mark.parametrize("seed", range(20))
def test_random_fill_programs(seed, tmp_path):
    source = fill_program(seed)
    f = load(source, tmp_path, f"fill_{seed}")
    try:
        _check(f, argument(seed))
    except AssertionError as err:
        raise AssertionError(f"{err}\nprogram:\n{source}") from None


FILL = """
def f(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out)
"""


def _loop_bodies(source: str) -> list:
    """The text of every ``for``/``while`` loop over a program loop's counter (``j0``, ``j1``, ...) in ``source``."""
    lines, bodies = source.splitlines(), []
    for n, line in enumerate(lines):
        if re.match(r"\s*(for \(long j\d+ =|while \(1\))", line):
            depth, body = 0, []
            for text in lines[n:]:
                depth += text.count("{") - text.count("}")
                body.append(text)
                if depth == 0:
                    break
            bodies.append("\n".join(body[1:]))
    return bodies


def test_fill_loop_and_its_adjoint_have_no_whole_array_loop(tmp_path):
    f = load(FILL, tmp_path, "fill_struct")
    n = 1000
    c = gradc.compile(f, np.linspace(0.0, 1.0, n), target="c")
    source = c.c_source
    bodies = _loop_bodies(source)
    assert len(bodies) >= 3, "the forward loops and the adjoint loop stay loops"
    for body in bodies:
        assert not re.search(rf"for \(.*<\s*({n}|{n - 1})\b", body), f"a whole-array loop per iteration:\n{body}"
    np.testing.assert_allclose(c.grad(np.linspace(0.0, 1.0, n)),
                               np.sin(np.linspace(0.0, 1.0, n)) + np.linspace(0.0, 1.0, n)
                               * np.cos(np.linspace(0.0, 1.0, n)), rtol=1e-12)


# ---------------------------------------------------------------- a value read after an update of its array
def _twice(x):
    a = x * 2.0
    b = index_update(a, 5.0, [], [("int", 1)])
    return np.sum(b * x) + np.sum(a * a)  # a is read after the update: b must be a copy


def _carry_read_after_loop(x):
    a = x * 2.0

    def body(i, c):
        return index_update(c, c[i] * x[i] + 1.0, [i], [("array", 0)])

    b = gradc.fori_loop(0, 3, body, a)
    return np.sum(b * b) + np.sum(a * x)  # the loop's start value read after the loop


def _read_after_in_body(x):
    def body(i, c):
        d = index_update(c, x[i], [i], [("array", 0)])
        return d * c  # the old c read after the update, in the body

    return np.sum(gradc.fori_loop(0, 3, body, x * 1.5))


def _swap_carries(x):
    def body(i, ab):
        a, b = ab
        return index_update(b, a[i] * x[i], [i], [("array", 0)]), a  # b updated, a handed to the other slot

    a, b = gradc.fori_loop(0, 4, body, (x * 1.0, x * 3.0))
    return np.sum(a * x) + np.sum(b * b)


def _cond_operand_read_after(x):
    a = x * 2.0
    b = gradc.cond(x[0] > 0, lambda v: index_update(v, 7.0, [], [("int", 2)]), lambda v: v * 1.0, a)
    return np.sum(b * x) + np.sum(a)  # the branch's operand read after the branch


def _cond_same_operand_twice(x):
    a = x * 2.0

    def yes(u, v):
        return index_update(u, 7.0, [], [("int", 2)]) + v  # v is u's array: u must be copied

    b = gradc.cond(x[0] > 0, yes, lambda u, v: u * v, a, a)
    return np.sum(b * x)


def _cond_in_loop(x):
    def body(i, c):
        return gradc.cond(x[i] > 0.0, lambda v: index_update(v, v[i] * x[i], [i], [("array", 0)]),
                          lambda v: v, c)

    return np.sum(gradc.fori_loop(0, 5, body, x * 1.0) * x)


def _while_fill(x):
    def cond(state):
        return state[0] < 5

    def body(state):
        i, c = state
        return i + 1, index_update(c, np.sin(c[i]) * x[i], [i], [("array", 0)])

    return np.sum(gradc.while_loop(cond, body, (np.array(0), x * 1.0))[1] * x)


def _nested_fori(x):
    def outer(i, c):
        def inner(j, d):
            return index_update(d, d[i, j] * x[i, j] + 0.5, [i, j], [("array", 0), ("array", 1)])
        return gradc.fori_loop(0, 3, inner, c)

    return np.sum(gradc.fori_loop(0, 2, outer, x * 1.0) ** 2)


def _old_and_new(x):
    a = x * 2.0
    b = index_update(a, 5.0, [], [("int", 1)])
    return np.sum(b * a)  # the old and the new array in one expression


def _start_also_a_constant(x):
    a = x * 2.0

    def body(i, c):
        return index_update(c, c[i] * a[(i + 1) % 6], [i], [("array", 0)])  # a: the start value, read each trip

    return np.sum(gradc.fori_loop(0, 6, body, a) * x)


ALIASING = [_twice, _old_and_new, _start_also_a_constant, _carry_read_after_loop,
            _read_after_in_body, _swap_carries, _cond_operand_read_after, _cond_same_operand_twice,
            _cond_in_loop, _while_fill]


@pytest.mark.parametrize("f", ALIASING, ids=[f.__name__ for f in ALIASING])
@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["positive", "negative"])
def test_values_read_after_an_update_are_not_overwritten(f, sign):
    x = sign * np.array([0.3, 0.7, -0.4, 1.1, 0.9, -0.2])
    _check(f, x)


def _function(source: str, suffix: str = "") -> str:
    """The definition of the emitted function whose name ends in ``suffix`` (the value's: no suffix)."""
    match = re.search(rf"^\w+ gradc_fn_\w+?{suffix}\(.*?^}}", source, re.S | re.M)
    return match.group(0)


def test_nested_fori_loops_write_in_place():
    x = np.array([[0.3, 0.7, -0.4], [1.1, 0.9, -0.2]])
    c = _check(_nested_fori, x)
    bodies = _loop_bodies(_function(c.c_source))
    assert len(bodies) == 2
    for body in bodies:  # the inner loop carries the outer loop's array: no copy in or out of it per iteration
        assert "a copy of" not in body and not re.search(r"for \(long (i0|k = 0; k < 6)", body), body


def test_a_wrong_in_place_mark_still_copies():
    """The emitter trusts its own lifetimes, not the mark: an update marked in place whose operand is read
    afterwards, with the update's result (no order runs the read first), copies."""
    from gradc.backends.c.emit import emit_function
    from gradc.ir.graph import Eqn
    from gradc.trace import trace

    g = trace(_old_and_new, np.arange(4.0))
    wrong = g.replace(eqns=[Eqn(e.op, e.inputs, {**e.params, "in_place": True}, e.out) if e.op == "index_update"
                            else e for e in g.eqns])
    text = emit_function(wrong, "f", ["value"])[1]
    assert "in_place=True: a copy of" in text, text


def _branch_fill(x):
    def body(i, c):
        return gradc.cond(x[i] > 0.0, lambda v: index_update(v, v[i] * x[i], [i], [("array", 0)]),
                          lambda v: index_update(v, np.cos(x[i]), [(i + 1) % x.shape[0]], [("array", 0)]), c)

    return np.sum(gradc.fori_loop(0, x.shape[0], body, x * 1.0) * x)


def _while_fill_all(x):
    def body(state):
        i, c = state
        return i + 1, index_update(c, np.sin(c[i]) * x[i], [i], [("array", 0)])

    return np.sum(gradc.while_loop(lambda s: s[0] < x.shape[0], body, (np.array(0), x * 1.0))[1] * x)


FILL_BRANCH = """
def f(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        if x[i] > 0:
            out[i] = np.sin(x[i])
        else:
            out[i] += x[i] * 2.0
    return np.sum(out * out)
"""


@pytest.mark.parametrize("f, both", [(_branch_fill, False), (FILL_BRANCH, True), (_while_fill_all, True)],
                         ids=["gradc_cond_in_fori", "if_in_for", "while"])
def test_while_and_branch_fills_write_in_place(f, both, tmp_path):
    """No whole-array loop in the loops of the forward function, and of the gradient's (forward and adjoint
    sweeps) where reverse mode tapes only the slots read (``both``; gradc.cond called directly in a
    fori_loop body still tapes the whole carried array)."""
    if isinstance(f, str):  # source: a branch in a ``for`` loop as users write it (captured, like the fill loop)
        f = load(f, tmp_path, "fill_branch")
    n = 50
    x = np.linspace(-1.0, 1.0, n)
    c = _check(f, x)
    bodies = _loop_bodies(_function(c.c_source)) + (_loop_bodies(_function(c.c_source, "_grad")) if both else [])
    assert bodies
    for body in bodies:
        assert not re.search(rf"for \(.*<\s*{n}\b|a copy of", body), f"a whole-array loop per iteration:\n{body}"


def _numpy_targets_generator():
    """The fill-program generator of the NumPy target's in-place tests (tests/loops_in_place), loaded by path."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "loops_in_place" / "fill_programs.py"
    spec = importlib.util.spec_from_file_location("loops_in_place_fill_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


@pytest.mark.parametrize("seed", range(0, 40, 2))
def test_the_numpy_targets_fill_programs_in_c(seed, tmp_path):
    """The other generator's programs (helpers, np.add.at, row views, slices) through the C target."""
    import random

    source = _numpy_targets_generator()(random.Random(seed))
    f = load(source.replace("import numpy as np\n", ""), tmp_path, f"lip_fill_{seed}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (5, 4) if "def f(X)" in source else 9)
    try:
        _check(f, x)
    except AssertionError as err:
        raise AssertionError(f"{err}\nprogram:\n{source}") from None
