"""In-place writes in traced loops and branches keep NumPy's meaning: a copy is a new array, and every other
name for an array (an alias, a view) sees a write made through one of them.

The generator writes small functions from pieces (how the array is made, which second name it gets, the
control flow, the write) and compares the compiled value and gradient with the function run by NumPy and
with central differences; an error is allowed only where gradc refuses on purpose, and then it must name
the user's line and not claim that the input is changed when it is not.
"""
from __future__ import annotations

import itertools
import linecache
import random

import numpy as np
import pytest

import gradc

MAKE = {"copy": "y = x.copy()", "np.copy": "y = np.copy(x)", "np.array": "y = np.array(x)",
        "fresh": "y = x * 1.0"}
ALIAS = {"none": "z = y", "slice": "z = y[1:3]", "copy": "z = y.copy()"}
WRITE = {"item+=": "z[{i}] += 0.5 * x[{i} + 1]", "item=": "z[{i}] = z[{i}] * x[{i}]", "+=": "z += 0.25 * x[1:3]",
         "*=": "z *= 1.5", "add.at": "np.add.at(z, [{i}, {i}], x[0])"}
CONTROL = {"for": ("for i in range(2):", "i"), "for-n": ("for i in range(n):", "i"),
           "if": ("if np.sum(x) > 0.0:", "0"), "while": ("while np.sum(z) < 40.3:", "0")}
READ = {"y": "np.sum(y ** 2)", "z": "np.sum(z ** 2)", "both": "np.sum(y ** 2) + np.sum(np.sin(z))"}


def _program(make, alias, control, write, read, extra_read, body_read=False):
    head, i = CONTROL[control]
    if control == "while" and write in ("item=",):
        write = "*="  # a while loop needs a growing value to stop
    body = WRITE[write].format(i=i)
    if alias == "slice" and write == "+=":
        body = "z += 0.25 * x[0:2]"
    if alias != "slice" and write == "+=":
        body = "z += 0.25 * x"
    lines = ["def f(x, n: int = 2):", f"    {MAKE[make]}", f"    {ALIAS[alias]}", f"    {head}", f"        {body}"]
    if extra_read:
        lines.append("        z[0] = z[0] + 0.0 * x[2]")
    if body_read:  # the array read through its other name inside the body
        lines.insert(3, "    s = 0.0")
        lines.append("        s = s + np.sum(y)")
        lines.append("    return s + " + READ[read])
        return "\n".join(lines) + "\n"
    lines.append(f"    return {READ[read]}")
    return "\n".join(lines) + "\n"


_COUNTER = itertools.count()


def _compile(source):
    path = f"<inplace-alias-{next(_COUNTER)}>"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    namespace = {"np": np}
    exec(compile(source, path, "exec"), namespace)
    return namespace["f"], path


def _numeric_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _check(source):
    f, path = _compile(source)
    x = np.array([1.0, 2.0, 3.0, 0.5])
    expected = f(x.copy())
    try:
        value, g = gradc.value_and_grad(f)(x.copy())
    except gradc.TraceError as e:
        assert path in str(e), (source, str(e))
        assert "input 'x'" not in str(e), (source, str(e))  # no program here writes x
        # the refusals expected: two carried names of one array, or a read of it through another name in the body
        assert "one array" in str(e) or "through another name" in str(e), (source, str(e))
        return "refused"
    np.testing.assert_allclose(value, expected, rtol=1e-12, err_msg=source)
    np.testing.assert_allclose(g, _numeric_grad(f, x), rtol=1e-5, atol=1e-6, err_msg=source)
    return "ok"


EXAMPLES = [
    # the example: a copy written in a loop is not the input
    "def f(x, n: int = 2):\n    y = x.copy()\n    for i in range(x.shape[0] - 1):\n        y[i] += x[i + 1] * 2.0\n"
    "    return np.sum(y ** 2)\n",
    # a second name for the array, written in a loop / a branch, read through the first
    "def f(x, n: int = 2):\n    y = x * 1.0\n    z = y\n    for i in range(3):\n        z[i] += 1.0\n"
    "    return np.sum(y ** 2)\n",
    "def f(x, n: int = 2):\n    y = x * 1.0\n    z = y\n    if np.sum(x) > 0:\n        z[0] += 1.0\n"
    "    return np.sum(y ** 2)\n",
    # a transpose of the source taken before the copy is the source's view, not the copy's
    "def f(x, n: int = 2):\n    v = x[0:2].reshape(2, 1)\n    y = x.copy()\n    y += 1.0\n"
    "    return np.sum(y ** 2) + np.sum(v)\n",
    # a view written in a loop writes into its base
    "def f(x, n: int = 2):\n    y = x * 1.0\n    z = y[0:2]\n    for i in range(3):\n        z += 1.0\n"
    "    return np.sum(y ** 2)\n",
]


@pytest.mark.parametrize("source", EXAMPLES)
def test_examples_match_numpy(source):
    assert _check(source) == "ok"


def test_generated_programs_match_numpy():
    rng = random.Random(22)
    pieces = list(itertools.product(MAKE, ALIAS, CONTROL, WRITE, READ, (False, True)))
    rng.shuffle(pieces)
    outcomes = {}
    for combo in pieces[:120]:
        source = _program(*combo)
        outcomes[source] = _check(source)
    assert list(outcomes.values()).count("ok") > 100
    for combo in pieces[120:180]:  # with a read through the first name inside the body: right, or refused
        source = _program(*combo, body_read=True)
        outcomes[source] = _check(source)
    assert "refused" in outcomes.values()


def test_two_names_written_in_one_loop_are_refused_with_a_pattern_that_works():
    src = ("def f(x, n: int = 2):\n    y = x * 1.0\n    z = y\n    for i in range(3):\n        z[i] += 1.0\n"
           "        y[i] *= 2.0\n    return np.sum(y ** 2)\n")
    f, path = _compile(src)
    with pytest.raises(gradc.TraceError, match="one array") as info:
        gradc.grad(f)(np.ones(4))
    assert f"{path}:4" in str(info.value) and "'y'" in str(info.value) and "'z'" in str(info.value)
    # the hint's pattern: one name for the array in the loop
    fixed, _ = _compile(src.replace("        y[i] *= 2.0\n", "        z[i] *= 2.0\n"))
    x = np.ones(4)
    np.testing.assert_allclose(gradc.value_and_grad(fixed)(x)[0], fixed(x.copy()))


def test_writing_the_input_itself_warns_at_the_users_line():
    src = ("def f(x, n: int = 2):\n    y = x.copy()\n    for i in range(3):\n        x[i] += 1.0\n"
           "    return np.sum(x * y)\n")
    f, path = _compile(src)
    x = np.array([0.5, 1.0, 1.5, 2.0])
    with pytest.warns(gradc.GradcWarning, match="input 'x'") as caught:
        grad = gradc.grad(f)(x)
    assert any(w.filename == path and w.lineno == 4 for w in caught)
    np.testing.assert_array_equal(x, [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(grad, 2 * x + np.r_[np.ones(3), 0.0])  # d/dx sum((x + [1,1,1,0]) * x)


def test_a_slice_read_in_a_traced_branch_stays_in_the_branch():
    # the view was made with its base's builder: the emitted code read a name the branch defined (NameError)
    src = ("def f(x, n: int = 2):\n    z = x * 1.0\n    if np.sum(x) > 0.0:\n        z = z + 0.25 * x[0:4]\n"
           "    return np.sum(z ** 2)\n")
    assert _check(src) == "ok"
    assert _check(src.replace("x[0:4]", "x[1:3]").replace("z = x * 1.0", "z = x[0:2] * 1.0")) == "ok"


def test_a_view_taken_after_a_copy_is_refused_with_a_true_message():
    src = ("def f(x, n: int = 2):\n    y = x.copy()\n    v = y.reshape(2, 2)\n    y += 1.0\n"
           "    return np.sum(y ** 2) + np.sum(v)\n")
    f, path = _compile(src)
    with pytest.raises(gradc.TraceError, match="copied from") as info:
        gradc.grad(f)(np.ones(4))
    assert f"{path}:4" in str(info.value) and "input" not in str(info.value)
    fixed, _ = _compile(src.replace("y += 1.0", "y = y + 1.0"))  # the hint: compute a new value
    np.testing.assert_allclose(gradc.grad(fixed)(np.ones(4)), _numeric_grad(fixed, np.ones(4)), rtol=1e-6)


STALE = [
    # a second name read in the body while the first is written in place: the read would be of the old value
    ("def f(x, n: int = 2):\n    y = x * 1.0\n    z = y\n    s = 0.0\n    for i in range(3):\n        z[i] += 1.0\n"
     "        s = s + np.sum(y)\n    return s\n", "np.sum(y)", "np.sum(z)"),
    # the base read while a view of it is written
    ("def f(x, n: int = 2):\n    y = x * 1.0\n    z = y[0:2]\n    s = 0.0\n    for i in range(3):\n        z += 1.0\n"
     "        s = s + np.sum(y)\n    return s\n", "        z += 1.0\n", "        y[0:2] += 1.0\n"),
    # a view read while its base is written
    ("def f(x, n: int = 2):\n    y = x * 1.0\n    z = y[0:2]\n    s = 0.0\n    for i in range(3):\n        y += 1.0\n"
     "        s = s + np.sum(z)\n    return s\n", "np.sum(z)", "np.sum(y[0:2])"),
    # the same in a branch
    ("def f(x, n: int = 2):\n    y = x * 1.0\n    z = y\n    if np.sum(x) > 0:\n        z[0] += 1.0\n"
     "        w = np.sum(y)\n    else:\n        w = 0.0\n    return w\n", "np.sum(y)", "np.sum(z)"),
]


@pytest.mark.parametrize("source, old, new", STALE)
def test_reading_an_array_through_another_name_while_writing_it_is_refused_and_the_hint_works(source, old, new):
    f, path = _compile(source)
    with pytest.raises(gradc.TraceError, match="through another name") as info:
        gradc.grad(f)(np.array([1.0, 2.0, 3.0, 0.5]))
    assert path in str(info.value)
    assert _check(source.replace(old, new)) == "ok"  # one name for the array inside the body, as the hint says
