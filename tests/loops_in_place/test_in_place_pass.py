"""``gradc.passes.in_place``: which updates may write into their operand, on small graphs built directly.

Each case also runs the emitted NumPy module against the graph's interpreter (the functional meaning),
so a wrong mark shows as a wrong value, not only as a different mark.
"""
from __future__ import annotations

import numpy as np

from gradc.backends.numpy.emit import Function, emit_module
from gradc.ir.interpret import evaluate
from gradc.ops.shape_extra import index_update
from gradc.passes import optimize
from gradc.passes.in_place import mark_in_place
from gradc.trace import trace
from gradc.trace.control import fori_loop

X = np.linspace(-1.0, 1.0, 6)


def _marks(graph):
    """``[(op, in_place)]`` of the updates of ``graph`` (nested graphs included), and the loops' ``copied``."""
    found = []
    for e in graph.eqns:
        if e.op in ("index_update", "index_add"):
            found.append((e.op, bool(e.params.get("in_place"))))
        for key in ("body", "branches"):
            value = e.params.get(key)
            for g in (value if isinstance(value, tuple) else (value,) if value is not None else ()):
                found += _marks(g)
        if "copied" in e.params:
            found.append(("copied", e.params["copied"]))
    return found


def _agrees(graph, *args):
    """The emitted module (which marks in place) computes what the interpreter computes."""
    src = emit_module([Function("f", graph, "f.")])
    scope: dict = {}
    exec(compile(src, "<emitted>", "exec"), scope)
    got = scope["f"](*args)
    want = evaluate(graph, *args)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want):
        np.testing.assert_array_equal(a, b)


def _write(x, i, v):
    return index_update(x, v, [], [("int", i)])


def test_an_operand_read_afterwards_is_copied():
    g = optimize(trace(lambda x: (lambda y: _write(y, 0, 5.0) + y)(x * 2.0), X))
    assert _marks(mark_in_place(g)) == [("index_update", False)]
    _agrees(g, X)


def test_a_dead_operand_is_written_in_place():
    g = optimize(trace(lambda x: _write(_write(x * 2.0, 0, 5.0), 1, 6.0) * 3.0, X))
    assert _marks(mark_in_place(g)) == [("index_update", True), ("index_update", True)]
    _agrees(g, X)


def test_an_input_is_never_written():
    g = optimize(trace(lambda x: _write(x, 0, 5.0) * 3.0, X))
    assert _marks(mark_in_place(g)) == [("index_update", False)]
    _agrees(g, X)


def test_a_view_read_afterwards_blocks_the_write():
    def f(x):
        y = x * 2.0
        row = y[1:4]  # a view in NumPy, read after the update
        return _write(y, 2, 9.0)[0] + row * 1.0
    g = optimize(trace(f, X))
    assert ("index_update", True) not in _marks(mark_in_place(g))
    _agrees(g, X)


def test_a_loop_starting_from_an_input_copies_it_once():
    def f(x):
        return fori_loop(0, 3, lambda i, out: index_update(out, out[i] * 2.0, [i], [("array", 0)]), x)
    g = optimize(trace(f, X))
    marks = _marks(mark_in_place(g))
    assert ("index_update", True) in marks and ("copied", (0,)) in marks
    _agrees(g, X)


def test_a_loop_starting_from_its_own_array_does_not_copy():
    def f(x):
        return fori_loop(0, 3, lambda i, out: index_update(out, out[i] * 2.0, [i], [("array", 0)]), x * 1.5)
    g = optimize(trace(f, X))
    marks = _marks(mark_in_place(g))
    assert ("index_update", True) in marks and not any(m[0] == "copied" for m in marks)
    _agrees(g, X)


def test_a_start_value_read_after_the_loop_is_copied():
    def f(x):
        start = x * 1.5
        end = fori_loop(0, 3, lambda i, out: index_update(out, out[i] * 2.0, [i], [("array", 0)]), start)
        return end + start
    g = optimize(trace(f, X))
    assert ("copied", (0,)) in _marks(mark_in_place(g))
    _agrees(g, X)


def test_a_carry_handed_to_another_carry_is_not_owned():
    def f(x):
        def body(i, c):
            a, b = c
            return b, index_update(a, b[i], [i], [("array", 0)])  # the two swap: neither is the body's own
        return fori_loop(0, 4, body, (x * 1.0, x * 2.0))
    g = optimize(trace(f, X))
    _agrees(g, X)


def test_the_reverse_sweep_reads_the_slot_before_zeroing_it():
    """``ct[i]`` read after ``ct[i] = 0`` in the IR's order: the pass moves the write after the read."""
    def f(x):
        ct = x * 2.0
        zeroed = index_update(ct, 0.0, [], [("int", 2)])
        return zeroed, ct[2] * 3.0
    g = optimize(trace(f, X))
    marked = mark_in_place(g)
    assert _marks(marked) == [("index_update", True)]
    ops = [e.op for e in marked.eqns]
    assert ops.index("index_update") > ops.index("index")
    _agrees(g, X)
