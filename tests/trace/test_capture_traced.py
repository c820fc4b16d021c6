"""Loops and branches of plain Python code, captured and differentiated: gradc.grad against finite differences.

Each program below is ordinary NumPy code with ``for``/``while``/``if`` on traced
values; the value gradc computes equals running the function itself, the gradient
equals central finite differences, and the loops stay loops (the traced graph holds a
``scan``/``while_loop``/``cond``, not an unrolled chain).
"""
import numpy as np
import pytest

pytest.importorskip("gradc.trace.control_trace")

import gradc  # noqa: E402
from gradc.trace import trace  # noqa: E402


# ---------------------------------------------------------------- the programs (issue 14's examples first)
def simulate(x0, k, dt):
    x = x0
    for _ in range(1000):
        x = x + dt * (-k * x ** 3 + np.sin(x))
    return np.sum(x ** 2)


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def huber(r, delta):
    if abs(r) <= delta:
        return 0.5 * r ** 2
    return delta * (abs(r) - 0.5 * delta)


def bisection(lo, hi):
    for _ in range(8):  # few enough steps that a finite-difference step keeps every branch
        mid = 0.5 * (lo + hi)
        if mid * mid > 2.0:
            hi = mid
        else:
            lo = mid
    return lo + hi


def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def fixed_point_cos(x):
    for _ in range(200):
        nxt = np.cos(x)
        if np.abs(nxt - x) < 1e-13:
            break
        x = nxt
    return x * 1.0


def rk4(y0, k):
    y, h = y0, 0.01
    for _ in range(50):
        k1 = -k * y
        k2 = -k * (y + 0.5 * h * k1)
        k3 = -k * (y + 0.5 * h * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def leapfrog(q0, p0, w):
    q, p, dt = q0, p0, 0.05
    for _ in range(100):
        p = p - 0.5 * dt * w * w * q
        q = q + dt * p
        p = p - 0.5 * dt * w * w * q
    return q * q + p


def small_rnn(xs, w, u):
    h = np.zeros(3)
    for x in xs:
        h = np.tanh(w @ h + u * x)
    return np.sum(h)


def double_loop(x):
    s = 0.0
    for i in range(4):
        for j in range(3):
            s = s + np.sin(x * (i + 1)) * np.cos(x * (j + 1))
    return s


def tolerance_while(x):
    term, total, k = x, x, 1.0
    while np.abs(term) > 1e-10:
        term = -term * x * x / ((2 * k) * (2 * k + 1))
        total = total + term
        k = k + 1.0
    return total


def relu_if(x):
    if x > 0:
        y = x
    else:
        y = 0.01 * x
    return y * y


def clamp_chain(x):
    if x < -1.0:
        y = -1.0 + 0.1 * (x + 1.0)
    elif x > 1.0:
        y = 1.0 + 0.1 * (x - 1.0)
    else:
        y = x ** 3
    return y


def leaky_ifexp(x):
    return x if x > 0 else 0.1 * x


def and_condition(x, y):
    if x > 0 and y > 0:
        return x * y
    return x + y


def or_not_condition(x, y):
    if not (x > 0) or y < 0:
        return x - y
    return x * y * 2.0


def continue_on_traced(x):
    s = 0.0
    for i in range(6):
        if np.sin(x * i) < 0:
            continue
        s = s + np.sin(x * i)
    return s


def break_on_traced(x):
    s = x
    for _ in range(20):
        s = s * 1.3
        if s > 10.0:
            break
    return s


def while_with_break(x):
    k = 0
    while k < 50:
        x = x * 1.1 + 0.1
        k = k + 1
        if x > 5.0:
            break
    return x


def geometric_tail(r):
    term, total = 1.0, 0.0
    while term > 1e-12:
        total = total + term
        term = term * r
    return total


def gradient_descent(x0, lr):
    x = x0
    for _ in range(30):
        x = x - lr * (4 * x ** 3 - 3 * x)
    return x


def taylor_exp(x):
    term, total, k = 1.0, 1.0, 1.0
    while np.abs(term) > 1e-14:
        term = term * x / k
        total = total + term
        k = k + 1.0
    return total


def babylonian(a):
    x = 1.0
    for _ in range(30):
        x = 0.5 * (x + a / x)
    return x


def logistic_map(r, x0):
    x = x0
    for _ in range(8):
        x = r * x * (1 - x)
    return x


def product_of_items(v):
    p = 1.0
    for item in v:
        p = p * (1.0 + item)
    return p


def spline(x):
    if x < 1.0:
        return x ** 2
    elif x < 2.0:
        return 1.0 + 2.0 * (x - 1.0) - (x - 1.0) ** 2 * 0.5
    return 2.5 + (x - 2.0)


def nested_if_in_loop(v):
    s = 0.0
    for x in v:
        if x > 0:
            if x > 1:
                s = s + x * x
            else:
                s = s + x
        else:
            s = s - 0.5 * x
    return s


def loop_var_after(x):
    i = 0
    for i in range(5):  # noqa: B007  (the loop variable after the loop is what is tested)
        x = x * 1.5
    return x * i


def for_else(x):
    for _ in range(5):
        x = x * 0.9
        if x < 0.01:
            break
    else:
        x = x + 1.0
    return x


def while_complex_condition(x):
    k = 0
    while x < 10.0 and k < 40:
        x = x * 1.2 + 0.05
        k = k + 1
    return x


def running_max(v):
    m = v[0]
    for x in v:
        if x > m:
            m = x
    return m * 2.0


def cube_root(a):
    x = a
    for _ in range(40):
        x = x - (x ** 3 - a) / (3 * x ** 2)
    return x


def lambert_w(a):
    w = 0.5
    while np.abs(w * np.exp(w) - a) > 1e-12:
        w = w - (w * np.exp(w) - a) / (np.exp(w) * (w + 1))
    return w


def secant(a):
    x0, x1 = 1.0, 2.0
    for _ in range(5):  # before f1 - f0 underflows to 0
        f0, f1 = x0 * x0 - a, x1 * x1 - a
        x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
    return x1


def kepler(m, e):
    big_e = m
    while np.abs(big_e - e * np.sin(big_e) - m) > 1e-12:
        big_e = big_e - (big_e - e * np.sin(big_e) - m) / (1 - e * np.cos(big_e))
    return big_e


def projectile(v0, angle):
    x, y = 0.0, 0.0
    vx, vy = v0 * np.cos(angle), v0 * np.sin(angle)
    dt = 0.01
    while y >= 0.0:
        x = x + vx * dt
        y = y + vy * dt
        vy = vy - 9.81 * dt
    return x


def trapezoid(a):
    total, n = 0.0, 50
    h = 1.0 / n
    for i in range(n + 1):
        w = 0.5 if (i == 0 or i == n) else 1.0
        total = total + w * np.exp(-a * (i * h) ** 2)
    return total * h


def simpson(a):
    total, n = 0.0, 20
    h = 1.0 / n
    for i in range(n + 1):
        if i == 0 or i == n:
            w = 1.0
        elif i % 2 == 1:
            w = 4.0
        else:
            w = 2.0
        total = total + w * np.sin(a * i * h)
    return total * h / 3.0


def damped_oscillator(x0, c):
    x, v = x0, 0.0
    for _ in range(200):
        a = -4.0 * x - c * v
        v = v + 0.01 * a
        x = x + 0.01 * v
    return x + v


def lotka_volterra(a, b):
    prey, pred = 1.0, 0.5
    for _ in range(100):
        dprey = a * prey - b * prey * pred
        dpred = -pred + 0.5 * prey * pred
        prey, pred = prey + 0.01 * dprey, pred + 0.01 * dpred
    return prey + 2.0 * pred


def power_iteration(m):
    v = np.ones(3) / np.sqrt(3.0)
    for _ in range(30):
        w = m @ v
        v = w / np.linalg.norm(w)
    return v @ m @ v


def clipped_descent(x0):
    x = x0
    for _ in range(10):
        g = 2.0 * x
        norm = np.sqrt(np.sum(g * g))
        if norm > 1.0:
            g = g / norm
        x = x - 0.3 * g
    return np.sum(x * x)


def nested_while_in_for(x):
    for _ in range(3):
        while x < 4.0:
            x = x * 1.5
        x = x - 3.0
    return x


def cumulative_until(v):
    total = 0.0
    for x in v:
        total = total + x * x
        if total > 2.0:
            break
    return total


def sign_flip_steps(x):
    y = x
    for k in range(6):
        if np.mod(k, 2) == 0:
            y = y * np.cos(x)
        else:
            y = y + np.sin(y)
    return y


def piecewise_loss(pred, target):
    r = pred - target
    loss = 0.0
    for e in r:
        a = np.abs(e)
        loss = loss + (0.5 * e * e if a < 1.0 else a - 0.5)
    return loss


def tanh_cell(xs, w):
    h = 0.0
    for x in xs:
        h = np.tanh(w * h + x)
    return h


def dot_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * w[i]
    return total


def write_loop(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * 2.0
        out[i] += np.sin(x[i])
    return np.sum(out * out)


def chained_comparison(x):
    if 0.0 < x <= 1.0:
        return x * x
    return 2.0 * x - 1.0


def first_crossing(x):
    y = 0.0
    for _ in range(10):
        y = y + x
        if y > 2.0:
            return y * 10.0
    return y


def search_with_returns(x):
    v = x
    k = 0.0
    while k < 20.0:
        v = v * 1.5
        k = k + 1.0
        if v > 50.0:
            return v - k
        if v < -50.0:
            return v + k
    else:
        v = v * 0.5
    return v


def collect_in_list(x):
    ys = []
    for i in range(4):
        x = np.sin(x) + i
        ys.append(x)
    return np.sum(np.stack(ys))


def list_of_weights(x, w1, w2):
    ws = [w1, w2]
    for i in range(2):
        x = np.tanh(ws[i] @ x)
    return np.sum(x)


def weighted_pairs(xs, ys):
    total = 0.0
    for k, (x, y) in enumerate(zip(xs, ys)):
        total = total + (k + 1.0) * x * y
    return total


def zipped_rnn(xs, gates, w):
    h = 0.0
    for x, g in zip(xs, gates):
        h = np.tanh(w * h + g * x)
    return h


def enumerated(v, w):
    s = 0.0
    for i, x in enumerate(v, start=1):
        if i % 2 == 0:
            s = s + w * x
        else:
            s = s - x * x
    return s


def time_grid(x0, k):
    x = x0
    for t in np.linspace(0.0, 1.0, 200):
        x = x + 0.005 * (-k * x + np.sin(t))
        if t > 0.5:
            x = x * 0.999
    return x


# (function, args, wrt, the op that shows the loop or branch stayed one)
CASES = [
    (simulate, (np.array([0.5, 1.0, -0.3]), 0.3, 0.01), ("x0", "k"), "scan"),
    (newton_sqrt, (2.0,), ("a",), "while_loop"),
    (huber, (0.3, 1.0), ("r", "delta"), "cond"),
    (huber, (-3.0, 1.0), ("r", "delta"), "cond"),
    (bisection, (0.5, 3.0), ("lo", "hi"), "scan"),
    (horner, (np.array([1.0, -2.0, 0.5, 3.0]), 0.7), ("coeffs", "x"), "scan"),
    (fixed_point_cos, (1.0,), ("x",), "scan"),
    (rk4, (1.0, 0.7), ("y0", "k"), "scan"),
    (leapfrog, (1.0, 0.0, 2.0), ("q0", "p0", "w"), "scan"),
    (small_rnn, (np.array([0.5, -1.0, 2.0, 0.1]), np.eye(3) * 0.4 + 0.1, np.array([0.3, -0.2, 0.5])),
     ("w", "u"), "scan"),
    (double_loop, (0.4,), ("x",), "scan"),
    (tolerance_while, (0.8,), ("x",), "while_loop"),
    (relu_if, (1.5,), ("x",), "cond"),
    (relu_if, (-1.5,), ("x",), "cond"),
    (clamp_chain, (-2.0,), ("x",), "cond"),
    (clamp_chain, (0.5,), ("x",), "cond"),
    (clamp_chain, (3.0,), ("x",), "cond"),
    (leaky_ifexp, (-2.0,), ("x",), "cond"),
    (and_condition, (1.0, 2.0), ("x", "y"), "cond"),
    (and_condition, (1.0, -2.0), ("x", "y"), "cond"),
    (or_not_condition, (1.0, 2.0), ("x", "y"), "cond"),
    (or_not_condition, (-1.0, 2.0), ("x", "y"), "cond"),
    (continue_on_traced, (0.7,), ("x",), "scan"),
    (break_on_traced, (0.9,), ("x",), "scan"),
    (while_with_break, (0.3,), ("x",), "while_loop"),
    (geometric_tail, (0.6,), ("r",), "while_loop"),
    (gradient_descent, (0.3, 0.05), ("x0", "lr"), "scan"),
    (taylor_exp, (1.3,), ("x",), "while_loop"),
    (babylonian, (3.0,), ("a",), "scan"),
    (logistic_map, (3.2, 0.3), ("r", "x0"), "scan"),
    (product_of_items, (np.array([0.1, -0.2, 0.5]),), ("v",), "scan"),
    (spline, (0.5,), ("x",), "cond"),
    (spline, (1.5,), ("x",), "cond"),
    (spline, (2.5,), ("x",), "cond"),
    (nested_if_in_loop, (np.array([2.0, 0.5, -1.0, 1.5]),), ("v",), "scan"),
    (loop_var_after, (1.2,), ("x",), "scan"),
    (for_else, (2.0,), ("x",), "scan"),
    (while_complex_condition, (0.5,), ("x",), "while_loop"),
    (running_max, (np.array([0.3, 2.0, -1.0, 1.5]),), ("v",), "scan"),
    (cube_root, (5.0,), ("a",), "scan"),
    (lambert_w, (2.0,), ("a",), "while_loop"),
    (secant, (3.0,), ("a",), "scan"),
    (kepler, (1.0, 0.3), ("m", "e"), "while_loop"),
    (projectile, (10.0, 0.7), ("v0", "angle"), "while_loop"),
    (trapezoid, (0.8,), ("a",), "scan"),
    (simpson, (1.3,), ("a",), "scan"),
    (damped_oscillator, (1.0, 0.5), ("x0", "c"), "scan"),
    (lotka_volterra, (1.1, 0.4), ("a", "b"), "scan"),
    (power_iteration, (np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.5]]),), ("m",), "scan"),
    (clipped_descent, (np.array([2.0, -1.0]),), ("x0",), "scan"),
    (nested_while_in_for, (1.0,), ("x",), "while_loop"),
    (cumulative_until, (np.array([0.5, 1.0, 0.8, 3.0]),), ("v",), "scan"),
    (sign_flip_steps, (0.6,), ("x",), "scan"),
    (piecewise_loss, (np.array([0.5, 3.0, -2.0]), np.array([0.2, 0.1, 0.4])), ("pred",), "scan"),
    (tanh_cell, (np.array([0.2, -0.5, 1.0]), 0.8), ("xs", "w"), "scan"),
    (dot_loop, (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])), ("x", "w"), "scan"),
    (write_loop, (np.array([0.3, -0.7, 1.1]),), ("x",), "scan"),
    (chained_comparison, (0.5,), ("x",), "cond"),
    (chained_comparison, (1.5,), ("x",), "cond"),
    (first_crossing, (0.3,), ("x",), "scan"),
    (first_crossing, (0.1,), ("x",), "scan"),
    (search_with_returns, (2.0,), ("x",), "while_loop"),
    (search_with_returns, (-2.0,), ("x",), "while_loop"),
    (search_with_returns, (1e-6,), ("x",), "while_loop"),
    (weighted_pairs, (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 0.25])), ("xs", "ys"), None),
    (zipped_rnn, (np.array([0.5, -1.0, 2.0]), np.array([0.9, 0.4, 0.1]), 0.7), ("xs", "gates", "w"), "scan"),
    (enumerated, (np.array([0.3, -1.2, 0.7, 2.0]), 1.5), ("v", "w"), "scan"),
    (time_grid, (1.0, 0.7), ("x0", "k"), "scan"),  # rows of a NumPy array scanned as constants
    (collect_in_list, (0.5,), ("x",), "scan"),  # a list appended in the loop: the stacked outputs of a scan
    (list_of_weights, (np.array([0.5, -0.2]), np.eye(2) * 0.9, np.ones((2, 2)) * 0.3), ("x", "w1", "w2"), None),
]


def _fd(f, args, name, eps=1e-6):
    """Central finite differences of the scalar f with respect to argument ``name``."""
    import inspect
    names = list(inspect.signature(f).parameters)
    k = names.index(name)
    x = np.asarray(args[k], dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        def at(delta, idx=idx):
            moved = x.copy()
            moved[idx] += delta
            call = list(args)
            call[k] = moved if x.ndim else float(moved)
            return float(f(*call))
        grad[idx] = (at(eps) - at(-eps)) / (2 * eps)
    return grad if x.ndim else float(grad)


@pytest.mark.parametrize("f,args,wrt,op", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)])
def test_gradient_matches_finite_differences(f, args, wrt, op):
    value, grads = gradc.value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-10, atol=1e-12)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for name, g in zip(wrt, grads):
        np.testing.assert_allclose(g, _fd(f, args, name), rtol=1e-5, atol=1e-6, err_msg=f"{f.__name__} d/d{name}")


LOOPED = [c for c in CASES if c[3] is not None]


@pytest.mark.parametrize("f,args,wrt,op", LOOPED, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(LOOPED)])
def test_loops_stay_loops(f, args, wrt, op):
    text = str(trace(f, *args))
    assert f" = {op} " in text, text
    assert text.count("\n") < 120, "the loop was unrolled"


def test_second_order_through_a_captured_loop():
    def cubic_steps(x):
        y = x
        for _ in range(3):
            y = y * x
        return y  # x ** 4
    assert np.isclose(gradc.grad(gradc.grad(cubic_steps))(1.5), 12 * 1.5 ** 2)


def test_trip_counts_zero_to_ten():
    for n in (0, 1, 2, 3, 10):
        def repeated(x, n=n):
            y = x
            for _ in range(n):
                y = np.sin(y) + y * 0.5
            return y
        np.testing.assert_allclose(gradc.grad(repeated)(0.7), _fd(repeated, (0.7,), "x"), rtol=1e-6)


# ---------------------------------------------------------------- hypothesis: random programs on traced floats
hypothesis = pytest.importorskip("hypothesis")


def _float_program(rng, depth=0, loops=0, lines=None, counter=None):
    """Smooth updates of floats a, b, c under `if`s on them, loops with static trip counts or bounded `while`s,
    traced `break`/`continue`, and `return`s (not inside nested loops)."""
    lines = [] if lines is None else lines
    counter = counter if counter is not None else [0]
    pad = "    " * (depth + 1)
    var = rng.choice("abc")
    lines.append(f"{pad}{var} = {var} * 0.9 + np.sin({rng.choice('abc')}) * 0.2")
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["assign", "if", "for", "while", "jump", "return"])
        var, other = rng.choice("abc"), rng.choice("abc")
        if kind == "assign" or depth >= 3:
            lines.append(f"{pad}{var} = {var} + {rng.choice(['0.5 *', 'np.tanh(', '0.1 * np.cos('])}{other}"
                         f"{')' if '(' in lines[-1][-1:] else ''}")
            lines[-1] = lines[-1] + (")" if lines[-1].count("(") > lines[-1].count(")") else "")
        elif kind == "if":
            lines.append(f"{pad}if {var} {rng.choice(['<', '>'])} {rng.uniform(-1, 1):.3f}:")
            _float_program(rng, depth + 1, loops, lines, counter)
            if rng.random() < 0.3:
                lines.append(f"{pad}elif {other} > 0.1 and {var} < 2.0:")
                _float_program(rng, depth + 1, loops, lines, counter)
            if rng.random() < 0.5:
                lines.append(f"{pad}else:")
                _float_program(rng, depth + 1, loops, lines, counter)
        elif kind == "for":
            counter[0] += 1
            lines.append(f"{pad}for i{counter[0]} in range({rng.randint(0, 4)}):")
            _float_program(rng, depth + 1, loops + 1, lines, counter)
        elif kind == "while":
            counter[0] += 1
            k = f"k{counter[0]}"
            lines.append(f"{pad}{k} = 0")
            lines.append(f"{pad}while {k} < {rng.randint(0, 4)} and {var} < 3.0:")
            lines.append(f"{pad}    {k} = {k} + 1")
            _float_program(rng, depth + 1, loops + 1, lines, counter)
        elif kind == "jump" and loops:
            lines.append(f"{pad}if {var} > {rng.uniform(-1, 1):.3f}:")
            lines.append(f"{pad}    {rng.choice(['break', 'continue'])}")
        elif kind == "return" and loops <= 1:
            lines.append(f"{pad}if {var} > {rng.uniform(0, 2):.3f}:")
            lines.append(f"{pad}    return a * b + c")
    return lines


@hypothesis.settings(max_examples=25, deadline=None)
@hypothesis.given(seed=hypothesis.strategies.integers(0, 2 ** 32 - 1))
def test_random_traced_programs(seed, tmp_path_factory):
    import importlib.util
    import random
    rng = random.Random(seed)
    source = "import numpy as np\n\n\ndef prog(a, b, c):\n" + "\n".join(_float_program(rng)) + \
        "\n    return a * b + c\n"
    path = tmp_path_factory.mktemp("traced") / f"traced_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"traced_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = tuple(rng.uniform(-1.5, 1.5) for _ in range(3))
    value, grads = gradc.value_and_grad(module.prog, wrt=("a", "b", "c"))(*args)
    np.testing.assert_allclose(value, module.prog(*args), rtol=1e-12, atol=1e-12, err_msg=source)
    for k, g in enumerate(grads):
        def at(d, k=k):
            moved = list(args)
            moved[k] += d
            return module.prog(*moved)
        eps = 1e-6
        right, left = (at(eps) - at(0.0)) / eps, (at(0.0) - at(-eps)) / eps
        if abs(right - left) > 1e-3 * (1 + abs(right)):  # a branch flips within eps: no derivative to compare
            continue
        np.testing.assert_allclose(g, (at(eps) - at(-eps)) / (2 * eps), rtol=1e-5, atol=1e-6, err_msg=source)
