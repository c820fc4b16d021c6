"""Fused elementwise loops printed from per-op templates (``gradc.backends.c.fused``), and long programs.

A fused loop's body is each op's own C text (SymPy builds and prints it once per op and operand kinds) with
its operands' texts put in place, in the program's order: so ``+ - * /`` between values round exactly as the
NumPy target's, and brackets must keep every grouping (``a - (b - c)``, ``a*(b*c)``). Random programs of those
ops are compared bit for bit with the NumPy target; long straight-line programs (1,500 statements, scalar and
array) compile and agree with NumPy and central differences. No timing is asserted (see benchmarks/).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from finite_differences import central_gradient
from hypothesis import given, settings
from hypothesis import strategies as st

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.fused import ADD, ATOM, LOW, MUL, template
from gradc.backends.c.slots import SlotPool

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


PLAIN = ("f64", False, False)


def _binary(op, a, b):
    return template(op, (), ("f64", "f64"), "f64", (0, 1), False, PLAIN).render([a, b])[0]


@pytest.mark.parametrize("op, a, b, want", [
    ("sub", ("a", ATOM), ("b - c", ADD), "a - (b - c)"),
    ("add", ("a", ATOM), ("b + c", ADD), "a + (b + c)"),
    ("add", ("a + b", ADD), ("c", ATOM), "a + b + c"),
    ("sub", ("a - b", ADD), ("c*d", MUL), "a - b - c*d"),
    ("mul", ("a*b", MUL), ("c*d", MUL), "a*b*(c*d)"),
    ("div", ("a", ATOM), ("b*c", MUL), "a/(b*c)"),
    ("div", ("a/b", MUL), ("c", ATOM), "a/b/c"),
    ("mul", ("a + b", ADD), ("c", ATOM), "(a + b)*c"),
    ("add", ("c ? a : b", LOW), ("d", ATOM), "(c ? a : b) + d"),
    ("mul", ("-a", ADD), ("b", ATOM), "(-a)*b"),
])
def test_operands_keep_their_grouping(op, a, b, want):
    assert _binary(op, a, b) == want


def test_a_unary_minus_brackets_any_compound_operand():
    neg = template("neg", (), ("f64",), "f64", (0,), False, PLAIN)
    assert neg.render([("a*b", MUL)])[0] == "-(a*b)" and neg.render([("x[k]", ATOM)])[0] == "-x[k]"
    assert neg.render([("a - b", ADD)])[0] == "-(a - b)"


def test_a_call_takes_any_operand_unbracketed():
    sin = template("sin", (), ("f64",), "f64", (0,), False, ("f64", True, False))
    assert sin.render([("a + b", ADD)])[0] == "gradc_sin(a + b)" and sin.limited and sin.trig == "sin"


def test_constants_are_keyed_by_exact_value_and_type():
    """1.0 and 1 are equal to SymPy; a template for one must not serve the other (nor 0.1 for 0.1 + 1 ulp)."""
    import sympy as sp

    one_f = template("add", (), ("f64", "f64"), "f64", (0, sp.Float(1.0)), False, PLAIN).render([("x", ATOM)])[0]
    one_i = template("add", (), ("i64", "i64"), "i64", (0, sp.Integer(1)), True, PLAIN).render([("k", ATOM)])[0]
    assert one_f == "x + 1.0" and one_i == "k + 1"
    a, b = 0.1, float(np.nextafter(0.1, 1.0))
    ta = template("mul", (), ("f64", "f64"), "f64", (0, sp.Float(a)), False, PLAIN).render([("x", ATOM)])[0]
    tb = template("mul", (), ("f64", "f64"), "f64", (0, sp.Float(b)), False, PLAIN).render([("x", ATOM)])[0]
    assert ta != tb


def _random_program(rng: random.Random, n_statements: int) -> str:
    """Straight-line + - * / and neg between values (values read more than once become temporaries); constants
    that SymPy would fold away or turn around (0, x/c as x*(1/c)) are left out: this is about grouping."""
    names = ["x", "y"]
    lines = []
    for n in range(n_statements):
        a, b = rng.choice(names[-4:]), rng.choice(names)
        c = rng.choice([1.5, -0.75, 3.0, 0.3])
        expr = rng.choice([f"{a} + {b}", f"{a} - {b}", f"{a} * {b}", f"{a} / ({b} * {b} + 1.0)", f"-{a}",
                           f"{a} * {c}", f"{c} - {a}", f"{a} + {c}", f"({a} - {b}) * ({b} + {c})",
                           f"np.maximum({a}, {b})", f"np.sqrt({a} * {a} + {c} * {c})"])
        lines.append(f"    v{n} = {expr}")
        names.append(f"v{n}")
    return "\n".join(lines)


def _compile_program(body: str, pick: str):
    source = f"import numpy as np\n\ndef prog(x, y):\n{body}\n    return {pick}\n"
    namespace: dict = {}
    exec(compile(source, "<random_fused_program>", "exec"), namespace)
    return namespace["prog"]


@needs_cc
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", ["array", "scalar"])
def test_fused_loops_round_as_the_numpy_target(seed, shape):
    """Bit for bit: the same ops in the same order and grouping round the same in C and NumPy."""
    rng = random.Random(seed)
    body = _random_program(rng, 14)
    f = _compile_program(body, "v13[5]" if shape == "array" else "v13")
    gen = np.random.default_rng(seed)
    if shape == "array":
        x, y = gen.uniform(-2.0, 2.0, 16), gen.uniform(-2.0, 2.0, 16)
    else:
        x, y = float(gen.uniform(-2.0, 2.0)), float(gen.uniform(-2.0, 2.0))
    c, n = gradc.compile(f, x, y, target="c"), gradc.compile(f, x, y)
    c_value, n_value = c.forward(x, y), n.forward(x, y)
    assert np.float64(c_value).tobytes() == np.float64(n_value).tobytes(), (body, c_value, n_value)
    assert c_value == pytest.approx(f(x, y), rel=1e-12, abs=1e-12)
    c_grad = c.grad(x, y)
    np.testing.assert_allclose(c_grad, n.grad(x, y), rtol=1e-13, atol=1e-13)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 40), st.sampled_from([4, 8, 16]),
                          st.sampled_from(["double", "int64_t"]), st.booleans()), max_size=50),
       st.sets(st.integers(0, 12), max_size=3))
def test_the_best_free_slot_is_the_smallest_oldest_of_the_free_ones(steps, busy_ids):
    """``best_free`` picks what ``min(free_at(...), key=size)`` of the fitting slots picks, over random placements."""
    last: dict = {}
    pool = SlotPool(last)
    segment, value = 0, 0
    for advance, lifetime, n, ctype, reuse in steps:
        segment += advance
        busy = {f"s{b}" for b in busy_ids}
        fits = [s for s in pool.free_at(segment, busy) if s[1] == ctype and s[2] >= n]
        want = min(fits, key=lambda s: s[2]) if fits else None
        got = pool.best_free(segment, busy, lambda ct, m, ctype=ctype, n=n: ct == ctype and m >= n, lambda m: m)
        assert got is want
        value += 1
        last[value] = segment + lifetime
        if reuse and got is not None:
            got[3].append(value)
            pool.taken(got)
        else:
            pool.add((f"s{len(pool.slots)}", ctype, n, [value]))


def _chain(n_statements):
    source = ("import numpy as np\n\ndef long_chain(x):\n    y = x\n"
              + "    y = y * 1.0001 + np.sin(y) * 0.001\n" * n_statements + "    return np.sum(y * y)\n")
    namespace: dict = {}
    exec(compile(source, f"<long_chain_{n_statements}>", "exec"), namespace)
    return namespace["long_chain"]


@needs_cc
@pytest.mark.parametrize("shape", ["scalar", "array"])
def test_a_1500_statement_program_compiles_and_agrees_with_numpy_and_central_differences(shape):
    f = _chain(1500)
    x = 0.3 if shape == "scalar" else np.linspace(0.1, 0.8, 8)
    c, n = gradc.compile(f, x, target="c"), gradc.compile(f, x)
    value, grad = c.value_and_grad(x)
    want_value, want_grad = n.value_and_grad(x)
    assert value == pytest.approx(f(x), rel=1e-12) and value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-11)
    np.testing.assert_allclose(grad, central_gradient(f, x), rtol=1e-6)


@pytest.mark.parametrize("shape", [(), (1,), (3,), (40,)])
def test_sine_and_cosine_of_a_sine_and_cosine(shape):
    """cos(cos(x)) and its adjoint's sin(cos(x)): the inner pair's cosine is the outer pair's argument, by its
    name (the emitted C once named a temporary it never declared; found by the long random-program run)."""
    x = np.linspace(-2.0, 2.0, int(np.prod(shape))).reshape(shape)

    def f(x):
        return np.sum(np.cos(np.cos(x)) + np.sin(np.sin(x) * 2.0))

    want = np.sin(np.cos(x)) * np.sin(x) + np.cos(np.sin(x) * 2.0) * 2.0 * np.cos(x)
    np.testing.assert_allclose(gradc.compile(f, x, target="c").grad(x), want, rtol=1e-13, atol=1e-15)
