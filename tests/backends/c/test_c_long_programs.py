"""Long straight-line programs on the C target (issue 22, item 8).

Placing a work array once scanned every slot and every value a slot had held: emission was quadratic
in program length (a 3,000-statement function took minutes). ``SlotPool`` keeps it linear; these tests
check the pool against the plain rule it replaces, and that long programs compile under the default
recursion limit and compute the user's function. No timing is asserted.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.slots import SlotPool

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30), st.booleans(), st.booleans()), max_size=60),
       st.sets(st.integers(0, 12), max_size=3))
def test_the_pool_frees_exactly_the_slots_whose_values_are_all_dead(steps, busy_ids):
    """Random placements over rising segments: a value read last at some segment goes into a free slot or a
    new one; sometimes a value is appended to a live slot (an in-place update). The pool's free slots are
    the ones whose every value is dead, oldest first, as the plain scan over every value says."""
    last: dict = {}
    pool = SlotPool(last)
    segment, value = 0, 0
    for advance, lifetime, reuse, update in steps:
        segment += advance % 3
        busy = {f"s{b}" for b in busy_ids}
        plain = [s for s in pool.slots if s[0] not in busy and all(last.get(o, -1) < segment for o in s[3])]
        assert pool.free_at(segment, busy) == plain
        value += 1
        last[value] = segment + lifetime
        live = [s for s in pool.slots if s not in plain]
        if update and live:  # an in-place update: the live slot's newest value is replaced by this one
            live[0][3].append(value)
        elif reuse and plain:
            plain[0][3].append(value)
            pool.taken(plain[0])
        else:
            pool.add((f"s{len(pool.slots)}", "double", 8, [value]))


def _chain(n_statements, body):
    source = ("import numpy as np\n\ndef long_chain(y):\n" + f"    {body}\n" * n_statements
              + "    return np.sum(y * y)\n")
    namespace: dict = {}
    exec(compile(source, f"<long_chain_{n_statements}>", "exec"), namespace)
    return namespace["long_chain"]


@needs_cc
def test_five_thousand_statements_compile_under_the_default_recursion_limit():
    """No recursion proportional to program length in the C path: 5,000 statements, limit 1,000."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        f = _chain(5000, "y = y * 0.9999 + 0.0001")
        c = gradc.compile(f, 0.3, target="c")
    finally:
        sys.setrecursionlimit(limit)
    y, slope = 0.3, 1.0
    for _ in range(5000):
        y, slope = y * 0.9999 + 0.0001, slope * 0.9999
    value, grad = c.value_and_grad(0.3)
    assert value == pytest.approx(f(0.3), rel=1e-12) and value == pytest.approx(y * y, rel=1e-12)
    assert grad == pytest.approx(2 * y * slope, rel=1e-10)


@needs_cc
def test_a_long_unrolled_array_program_agrees_with_the_numpy_target():
    """Hundreds of arrays alive at once (the forward values the reverse sweep reads) and reused."""
    f = _chain(150, "y = y * 1.0001 + np.sin(y) * 0.001")
    x = np.linspace(0.1, 0.8, 8)
    c, n = gradc.compile(f, x, target="c"), gradc.compile(f, x)
    value, grad = c.value_and_grad(x)
    want_value, want_grad = n.value_and_grad(x)
    assert value == pytest.approx(f(x), rel=1e-12) and value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
    h = 1e-6 * np.eye(8)
    central = np.array([(f(x + h[i]) - f(x - h[i])) / 2e-6 for i in range(8)])
    np.testing.assert_allclose(grad, central, rtol=1e-6)
    assert "is dead from here: reuse it" in c.c_source
