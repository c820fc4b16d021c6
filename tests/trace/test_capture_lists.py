"""Lists appended in traced loops, reversed and negative-step ranges, and `return` anywhere in traced loops.

Every program is compared with itself run by Python (values) and with central finite differences
(gradients); "the loop stays a loop" means the traced IR holds a ``scan``/``while_loop`` equation and
its size does not grow with the trip count. A seeded generator (lists_programs.py) writes more programs.
"""
import importlib.util
import random
import re

import numpy as np
import pytest
from finite_differences import central_gradient as central
from lists_programs import list_program, return_program

import gradc
from gradc import TraceError
from gradc.trace import trace


# ---------------------------------------------------------------- programs as users write them
def stack_states(x):
    ys = []
    h = x[0]
    for i in range(5):
        h = np.sin(h) * x[i % 3]
        ys.append(h)
    return np.sum(np.stack(ys))


def rnn_states(W, xs):
    h = np.zeros(W.shape[0])
    states = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        states.append(h)
    return np.sum(np.array(states) ** 2)


def lstm_cell(w, x, h, c):
    gates = np.tanh(w[0] * x + w[1] * h)
    c = gates * c + (1.0 - gates) * np.sin(x)
    return np.tanh(c) * gates, c


def lstm_rows(weights, x, s):
    """GradBench lstm's state update, collected in a list (issue 26's refused rewrite)."""
    rows = []
    for i in range(0, len(s), 2):
        h, c = lstm_cell(weights[i // 2], x, s[i], s[i + 1])
        rows.append(h)
        rows.append(c)
        x = h
    return np.sum(np.stack(rows) ** 2)


def rows_with_uses(X, w):
    out = []
    for row in X:
        out.append(np.tanh(row * w))
    return np.sum(np.concatenate(out)) + sum(out)[0] + out[-1][1] * len(out) + np.mean(out)


def euler(y0, k):
    ys = [y0]
    for _ in range(1, 6):
        ys.append(ys[-1] - 0.1 * k * ys[-1] ** 2)
    return np.sum(np.array(ys))


def two_step(y0, k):
    ys = [y0, y0 * 1.1]
    for i in range(2, 7):
        ys.append(ys[i - 1] + 0.1 * k * (ys[-1] - ys[-2]))
    return np.sum(np.stack(ys)) + ys[3]


def pairs(x):
    hs = []
    h, c = x, x * 0.5
    for _ in range(4):
        h, c = np.tanh(h + c), c * 0.9 + h
        hs.append((h, c))
    return sum(a * b for a, b in hs) + hs[-1][0]


def nested(x):
    ys = []
    for i in range(3):
        for j in range(2):
            ys.append(x * i + j * x ** 2)
    return np.sum(np.stack(ys) * np.arange(6.0))


def nested_reads(x):
    ys = [x]
    for _ in range(3):
        for j in range(2):
            ys.append(ys[len(ys) - 1] * 0.5 + x * j)
    return np.sum(np.array(ys))


def two_per_iteration(x):
    ys = []
    for i in range(3):
        ys.append(np.sin(x * i))
        ys += [np.cos(x + i)]
    return np.sum(np.stack(ys) * np.arange(6.0))


def appends_under_if(x):
    ys = []
    for i in range(4):
        if x > i:
            ys.append(x * 2.0)
        else:
            ys.append(x - i)
    return np.sum(np.stack(ys))


def iterate_reversed(x):
    ys = []
    for i in range(4):
        x = np.sin(x) + i
        ys.append(x)
    acc = 0.0
    for y in reversed(ys):
        acc = acc * 0.5 + y
    return acc


def concatenated(x):
    ys = []
    before = ys
    for i in range(3):
        x = np.sin(x) + i
        ys = ys + [x]
    return np.sum(np.stack(ys)) + len(before)


def two_loops(x):
    """A list collected by one loop, appended to by a second, then scanned by a third."""
    ys = []
    for i in range(3):
        x = np.sin(x) + 0.5 * i
        ys.append(x)
    for i in range(2):
        ys.append(ys[-1] * x + i)
    zs = []
    for y in ys:
        zs.append(np.cos(y) * x)
    return np.sum(np.stack(ys)) + np.sum(np.array(zs)) + len(zs)


def horner_reversed(c, x):
    acc = 0.0
    for i in reversed(range(c.shape[0])):
        acc = acc * x + c[i]
    return acc


def horner_negative_step(c, x):
    acc = 0.0
    for i in range(c.shape[0] - 1, -1, -2):
        acc = acc * x + c[i]
    return acc


def reversed_rows(X, w):
    h = 0.0
    for row in reversed(X):
        h = np.tanh(h * w + row @ np.ones(3))
    return h


def data_bound_reversed(c, x):
    n = np.sum(c > x).astype(np.int64)
    acc = 0.0
    for i in reversed(range(1, n, 2)):
        acc = acc * x + c[i]
    return acc


def data_bound_step(c, x):
    n = np.sum(c > x).astype(np.int64) - 1
    acc = 0.0
    for i in range(n, -1, -3):
        acc = acc * x + c[i] * x
    return acc


def descent(x):
    """GradBench saddle's solver: `while True:` left by `return`."""
    while True:
        g = 2.0 * x
        x = x - 0.1 * g
        if np.sum(g * g) < 1e-6:
            return np.sum(x ** 2) + x[0]


def nested_return(x):
    for i in range(3):
        for j in range(2):
            if x > i + j + 1:
                return x * (i + 1) + j
        x = x * 2.0
    return x


def while_true_nested_return(x):
    while True:
        for j in range(3):
            x = x * 0.8 + 0.01 * j
            if x < 0.5:
                return x * 3.0 + j
        x = x + 0.01


W = np.array([[0.5, 0.1], [-0.2, 0.3]])
XS = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]])
C = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
X3 = np.arange(12.0).reshape(4, 3) / 10
WEIGHTS = np.array([[0.5, -0.3], [0.8, 0.2]])
S = np.array([[0.1, 0.2], [0.3, 0.4], [-0.2, 0.1], [0.5, -0.5]])

CASES = [  # (function, arguments, the argument differentiated, the loop op the trace holds)
    (stack_states, (np.array([0.3, 0.5, 0.7]),), 0, "scan"),
    (rnn_states, (W, XS), 0, "scan"),
    (lstm_rows, (WEIGHTS, np.array([0.2, -0.1]), S), 0, "scan"),
    (lstm_rows, (WEIGHTS, np.array([0.2, -0.1]), S), 2, "scan"),
    (rows_with_uses, (XS, 0.7), 0, "scan"),
    (euler, (1.0, 0.8), 1, "scan"),
    (two_step, (1.0, 0.7), 0, "scan"),
    (pairs, (0.4,), 0, "scan"),
    (nested, (0.7,), 0, "scan"),
    (nested_reads, (0.8,), 0, "scan"),
    (two_per_iteration, (0.7,), 0, "scan"),
    (appends_under_if, (1.5,), 0, "scan"),
    (iterate_reversed, (0.3,), 0, "scan"),
    (concatenated, (0.3,), 0, "scan"),
    (two_loops, (0.4,), 0, "scan"),
    (horner_reversed, (C, 0.5), 1, "scan"),
    (horner_negative_step, (C, 0.5), 0, "scan"),
    (reversed_rows, (X3, 0.3), 0, "scan"),
    (data_bound_reversed, (C, 2.5), 0, "scan"),
    (data_bound_step, (C, 1.5), 1, "scan"),
    (descent, (np.array([1.0, 2.0]),), 0, "while_loop"),
    (nested_return, (0.3,), 0, "scan"),
    (nested_return, (2.5,), 0, "scan"),
    (while_true_nested_return, (0.7,), 0, "while_loop"),
    (while_true_nested_return, (5.0,), 0, "while_loop"),
]


def _gradient_reference(f, args, k):
    def at(v):
        moved = list(args)
        moved[k] = v if np.ndim(args[k]) else float(v)
        return f(*moved)
    return central(at, args[k])


@pytest.mark.parametrize("f,args,k,op", CASES, ids=[f"{c[0].__name__}-{n}" for n, c in enumerate(CASES)])
def test_same_as_python_and_finite_differences(f, args, k, op):
    value, grad = gradc.value_and_grad(f, argnums=k)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, _gradient_reference(f, args, k), rtol=1e-5, atol=1e-7)
    text = str(trace(f, *args))
    assert f" = {op} " in text, text


@pytest.mark.parametrize("trips", [3, 9])
def test_collecting_loop_is_not_unrolled(trips):
    def collect(x, trips=trips):
        ys = [x]
        for _ in range(trips):
            ys.append(np.sin(ys[-1]) * x)
        return np.sum(np.stack(ys))
    text = str(trace(collect, 0.5))
    assert re.search(rf" = scan .*length={trips} ", text), text
    assert len(text.splitlines()) < 25, text  # one body, whatever the trip count
    np.testing.assert_allclose(gradc.grad(collect)(0.5), central(collect, 0.5), rtol=1e-6)


def test_stacking_a_collected_list_reads_the_scan_outputs():
    text = str(trace(rnn_states, W, XS))
    assert "concatenate" not in text, text  # np.array(states) is the scan's stacked outputs, not a restack


def test_aliases_of_the_list_see_the_items():
    def aliased(x):
        ys = [x]
        alias = ys
        for _ in range(3):
            x = np.sin(x) + 1.0
            ys.append(x)
        return np.sum(np.stack(alias)) * len(alias)
    np.testing.assert_allclose(gradc.value_and_grad(aliased)(0.4)[0], aliased(0.4), rtol=1e-12)


def test_loops_over_no_iterations_leave_the_list_as_it_was():
    def nothing(x, n=0):
        ys = [x]
        for i in range(n):
            ys.append(x * i)
        return np.sum(np.stack(ys)) + len(ys)
    np.testing.assert_allclose(gradc.value_and_grad(nothing)(0.4), (nothing(0.4), 1.0))


# ---------------------------------------------------------------- seeded random programs
def _load(source, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.prog


def _check_program(prog, rng, source, kinks_allowed):
    x = np.array([0.3, -0.2, 0.5, 0.1]) * rng.uniform(0.5, 1.5)
    w, c = rng.uniform(0.6, 1.05), np.linspace(-0.5, 0.7, 8)
    text = str(trace(prog, x, w, c))
    assert " = scan " in text or " = while_loop " in text, source
    value, (gx, gw) = gradc.value_and_grad(prog, wrt=("x", "w"))(x, w, c)
    np.testing.assert_allclose(value, prog(x, w, c), rtol=1e-10, atol=1e-12, err_msg=source)
    for got, at, point in ((gx, lambda v: prog(v, w, c), x), (gw, lambda v: prog(x, float(v), c), w)):
        want = central(at, point)
        if kinks_allowed:  # a `return` that moves to another iteration within eps has no derivative to compare
            right = central(lambda v, at=at: at(v + 1e-6), point)
            left = central(lambda v, at=at: at(v - 1e-6), point)
            if not np.allclose(right, left, rtol=1e-3, atol=1e-6):
                continue
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=source)


@pytest.mark.parametrize("seed", range(30))
def test_random_list_programs(seed, tmp_path):
    rng = random.Random(seed)
    source = list_program(rng)
    _check_program(_load(source, tmp_path, f"lists_{seed}"), rng, source, kinks_allowed=False)


@pytest.mark.parametrize("seed", range(20))
def test_random_return_programs(seed, tmp_path):
    rng = random.Random(1000 + seed)
    source = return_program(rng)
    _check_program(_load(source, tmp_path, f"returns_{seed}"), rng, source, kinks_allowed=True)


# ---------------------------------------------------------------- refusals, and the rewrites their hints suggest
REFUSED = {  # name -> (refused program, words of the message, the rewrite its hint suggests)
    "append in one branch": ("""
def prog(x, w, c):
    ys = []
    for i in range(4):
        if np.sum(x) * w > c[i]:  # MARK
            ys.append(x * w)
    return np.sum(np.stack(ys))
""", ["'ys' gets 1 item(s) in one branch", "append in every branch"], """
def prog(x, w, c):
    ys = []
    keep = []
    for i in range(4):
        if np.sum(x) * w > c[i]:
            ys.append(x * w)
            keep.append(1.0)
        else:
            ys.append(x * 0.0)
            keep.append(0.0)
    return np.sum(np.stack(ys) * np.array(keep)[:, None])
"""),
    "append in one branch, as an array": (None, None, """
def prog(x, w, c):
    out = np.zeros((4, 4))
    for i in range(4):
        if np.sum(x) * w > c[i]:
            out[i] = x * w
    return np.sum(out)
"""),
    "append after a break": ("""
def prog(x, w, c):
    ys = []
    for i in range(5):
        x = x * 1.5
        if np.sum(x) * w > 1.0:
            break
        ys.append(x)  # MARK: the append the break may skip
    return np.sum(np.stack(ys))
""", ["'ys' gets", "a `break` or `continue` before an append"], None),
    "append in a while loop": ("""
def prog(x, w, c):
    ys = []
    while np.sum(x) < 3.0:  # MARK
        x = x * 1.5 + w
        ys.append(x)
    return np.sum(np.stack(ys))
""", ["the condition of this `while` is a traced value", "out = np.zeros(n), then out[k]"], """
def prog(x, w, c):
    out = np.zeros((20, 4))
    k = 0
    while np.sum(x) < 3.0 and k < 20:
        x = x * 1.5 + w
        out[k] = x
        k = k + 1
    return np.sum(out)
"""),
    "append in a while loop, bounded": (None, None, """
def prog(x, w, c):
    ys = []
    for k in range(4):
        x = x * 1.5 + w
        ys.append(x)
    return np.sum(np.stack(ys))
"""),
    "append in a while loop inside a collecting loop": ("""
def prog(x, w, c):
    ys = []
    for i in range(3):
        ys.append(x)
        while np.sum(x) < 3.0:  # MARK
            x = x * 1.5 + w
            ys.append(x)
    return np.sum(np.stack(ys))
""", ["`while` loop on traced values appends to 'ys'", "range(T), T a Python int"], None),
    "append in a loop of traced length": ("""
def prog(x, w, c):
    n = np.sum(c > w).astype(np.int64)
    ys = []
    for i in range(n):  # MARK
        ys.append(c[i] * x)
    return np.sum(np.stack(ys))
""", ["trip count is known only when the code runs", "range(T), T a Python int"], """
def prog(x, w, c):
    ys = []
    for i in range(8):
        ys.append(c[i] * x)
    return np.sum(np.stack(ys))
"""),
    "read of an empty list": ("""
def prog(x, w, c):
    ys = []
    for i in range(3):
        ys.append(ys[-1] * w)  # MARK
    return np.sum(np.stack(ys))
""", ["ys[-1] is read before anything was appended", "append a first item to ys before the loop"], """
def prog(x, w, c):
    ys = [x]
    for i in range(3):
        ys.append(ys[-1] * w)
    return np.sum(np.stack(ys))
"""),
    "a dict that grows": ("""
def prog(x, w, c):
    d = {}
    k = 0
    while np.sum(x) < 3.0:  # MARK
        x = x * 1.5 + w
        d[k] = x
        k += 1
    return np.sum(x)
""", ["'d' holds 0 values before the loop", "append to a list (ys.append(y)"], """
def prog(x, w, c):
    d = []
    for k in range(4):
        x = x * 1.5 + w
        d.append(x)
    return np.sum(np.stack(d))
"""),
    "traced condition in a loop over a Python list": ("""
def prog(x, w, c):
    total = 0.0
    for v in [0.5, 1.0, 2.0]:
        total = total + v * np.sum(x)
        if total > w:  # MARK
            break
    return total
""", ["loop that runs in Python", "loop over range(...) or a NumPy array"], """
def prog(x, w, c):
    total = 0.0
    for v in np.array([0.5, 1.0, 2.0]):
        total = total + v * np.sum(x)
        if total > w:
            break
    return total
"""),
    "return in a try block of a traced loop": ("""
def prog(x, w, c):
    for i in range(4):  # MARK
        x = x * w
        try:
            if np.sum(x) < 0.1:
                return np.sum(x)
        finally:
            pass
    return np.sum(x)
""", ["`return`", "leave the loop with `break`"], """
def prog(x, w, c):
    found = 0.0
    done = False
    for i in range(4):
        x = x * w
        if np.sum(x) < 0.1:
            found = np.sum(x)
            done = True
            break
    if done:
        return found
    return np.sum(x)
"""),
    "a traced step": ("""
def prog(x, w, c):
    s = np.sum(c > w).astype(np.int64) + 1
    acc = 0.0
    for i in range(0, 8, s):  # MARK
        acc = acc + c[i] * np.sum(x)
    return acc
""", ["the step of a range with traced bounds must be a Python int", "loop over a fixed range and test a condition"],
        """
def prog(x, w, c):
    s = np.sum(c > w).astype(np.int64) + 1
    acc = 0.0
    for i in range(8):
        if i % s == 0:
            acc = acc + c[i] * np.sum(x)
    return acc
"""),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refusals_say_where_and_their_rewrites_compile(name, tmp_path):
    refused, words, rewrite = REFUSED[name]
    x, w, c = np.array([0.3, -0.2, 0.5, 0.1]), 0.9, np.linspace(-0.5, 0.7, 8)
    key = re.sub(r"\W", "_", name)
    if refused is not None:
        prog = _load(refused, tmp_path, "refused_" + key)
        with pytest.raises(TraceError) as info:
            gradc.grad(prog, argnums=0)(x, w, c)
        message = str(info.value)
        for word in words:
            assert word in message, message
        line = 4 + next(k for k, text in enumerate(refused.splitlines()) if "# MARK" in text)
        assert f"refused_{key}.py:{line}" in message, message
    if rewrite is not None:
        fixed = _load(rewrite, tmp_path, "rewrite_" + key)
        value, grad = gradc.value_and_grad(fixed, argnums=0)(x, w, c)
        np.testing.assert_allclose(value, fixed(x, w, c), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, central(lambda v: fixed(v, w, c), x), rtol=1e-5, atol=1e-6)


def returns_the_list(x):
    ys = []
    for i in range(3):
        x = np.sin(x) + i
        ys.append(x)
    return ys


def test_a_collected_list_is_returned_as_a_list():
    got = gradc.jit(returns_the_list)(0.3)
    assert type(got) is list and len(got) == 3
    np.testing.assert_allclose(got, returns_the_list(0.3), rtol=1e-14)
    jac = gradc.jacobian(returns_the_list)(0.3)
    for k in range(3):
        np.testing.assert_allclose(jac[k], central(lambda v, k=k: returns_the_list(float(v))[k], 0.3), rtol=1e-6)
