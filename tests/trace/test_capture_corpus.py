"""Small programs with loops and branches (no tests here): test_capture.py runs each captured and as written.

Each function is listed in CORPUS with the argument tuples it is called with. They are
plain Python: nothing here is traced.
"""
import numpy as np

COUNTER = 0


def range1(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def range2(a, b):
    out = []
    for i in range(a, b):
        out.append(i)
    return out


def range3_negative(a, b, step):
    s = 0
    for i in range(a, b, step):
        s = s * 2 + i
    return s, i if a != b else None


def empty_range_keeps_var(n):
    i = -5
    for i in range(n):  # noqa: B007  (the loop variable is what is tested)
        pass
    return i


def loop_var_after(n):
    for i in range(n):
        j = i * 2
    return i + j


def over_list(xs):
    total = 0.0
    for x in xs:
        total = total + x
    return total


def over_tuple_unpacking(pairs):
    acc = 0
    for a, (b, c) in pairs:
        acc += a * b - c
    return acc


def over_array_rows(m):
    s = np.zeros(m.shape[1])
    for row in m:
        s = s + row ** 2
    return s


def over_zip_enumerate(xs, ys):
    out = 0.0
    for k, (x, y) in enumerate(zip(xs, ys)):
        out += k * x * y
    return out


def for_else_no_break(n):
    s = 0
    for i in range(n):
        s += i
    else:
        s = -s
    return s


def for_else_break(n, stop):
    found = None
    for i in range(n):
        if i == stop:
            found = i
            break
    else:
        found = "none"
    return found


def while_else(n):
    k = 0
    while k < n:
        k += 3
        if k == 9:
            break
    else:
        k = k * 100
    return k


def nested_break_inner(n):
    pairs = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            pairs.append((i, j))
    return pairs


def continue_depth2(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            if i % 4 == 0:
                continue
            s += 100
        s += i
    return s


def break_depth3(n):
    s = 0
    for i in range(n):
        if i > 2:
            if i % 3 == 0:
                if s > 5:
                    break
        s += i
    return s, i


def early_return_loop(xs, target):
    for k, x in enumerate(xs):
        if x == target:
            return k
    return -1


def early_return_nested(n):
    for i in range(n):
        for j in range(i):
            if i * j == 6:
                return i, j
    return None


def if_chain(x):
    if x < 0:
        kind = "neg"
    elif x == 0:
        kind = "zero"
    elif x < 10:
        kind = "small"
    else:
        kind = "big"
    return kind


def defined_in_one_branch(x):
    if x > 0:
        y = x * 2
    return y  # UnboundLocalError when x <= 0, as in Python


def unbound_after_branches(x):
    if x > 5:
        return "big"
    if x > 0:
        y = x
    if x > 1:
        return y
    return y * 2  # UnboundLocalError when x <= 0, as in Python


def defined_in_both(x):
    if x > 0:
        y = 1
        z = 2
    else:
        y = -1
        z = -2
    return y * 10 + z


def augmented(n):
    a, b = 1, 0
    for _ in range(n):
        a *= 3
        b -= a
        a //= 2
        b **= 1
    return a, b


def uses_global(n):
    global COUNTER
    for _ in range(n):
        COUNTER += 1
    return COUNTER


def closure_nonlocal(n):
    count = 0

    def bump(k):
        nonlocal count
        if k % 2:
            count += k
        return count
    for i in range(n):
        bump(i)
    return count


def nonlocal_in_loop():
    total = 0

    def inner(n):
        nonlocal total
        for i in range(n):
            if i % 2:
                total += i
        return total
    return inner(5), inner(3)


def comprehension_and_lambda(n):
    evens = [i for i in range(n) if i % 2 == 0]
    pick = (lambda v: "big" if v > 3 else "small")  # noqa: E731
    return evens, [pick(v) for v in evens], {k: (k if k else -1) for k in range(3)}


def try_with_loop(n):
    out = []
    try:
        for i in range(n):
            if i == 3:
                raise ValueError("three")
            out.append(i)
    except ValueError as e:
        out.append(str(e))
    finally:
        out.append("done")
    return out


def with_block(n):
    import contextlib
    s = 0
    with contextlib.suppress(ZeroDivisionError):
        for i in range(n):
            s += 10 // (3 - i)
    return s


def conditional_expressions(x):
    a = x if x > 0 else -x
    b = "pos" if x > 0 else ("zero" if x == 0 else "neg")
    return a, b


def and_or_values(a, b):
    return (a and b), (a or b), (not a), (a and b or "fallback"), (a or b and 0)


def while_true_break(n):
    k = 0
    while True:
        k += 1
        if k * k > n:
            break
    return k


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def bisection(c, lo, hi):
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid * mid > c:
            hi = mid
        else:
            lo = mid
    return lo


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def huber(r, delta):
    if abs(r) <= delta:
        return 0.5 * r ** 2
    return delta * (abs(r) - 0.5 * delta)


def list_item_assignment(n):
    xs = [0] * n
    for i in range(n):
        xs[i] = i * i
        if i:
            xs[i] += xs[i - 1]
    return xs


def array_item_assignment(n):
    a = np.zeros(n)
    for i in range(n):
        a[i] = i
        a[i] *= 2.0
        a[: i] -= 1.0
    b = np.zeros(3)
    np.add.at(b, [0, 0, 2], 1.0)
    np.negative.at(b, [1])
    return a, b


def aliasing_item_assignment(n):
    a = np.zeros(n)
    view = a
    for i in range(n):
        a[i] = i + 1
    return view.copy(), a is view


def closures_in_loop(n):
    fns = []
    for i in range(n):
        def f(x, i=i):
            return x + i
        fns.append(f)
        fns.append(lambda x: x * i)  # noqa: B023  (late binding is what is tested)
    return [g(10) for g in fns]


def dict_items(d):
    keys, total = [], 0
    for k, v in sorted(d.items()):
        if v < 0:
            continue
        keys.append(k)
        total += v
    return keys, total


def walrus_while(data):
    out = []
    k = 0
    while (item := data[k]) != 0:
        out.append(item)
        k += 1
    return out


def complex_condition(n):
    hits = []
    for i in range(n):
        if (i % 2 == 0 and i % 3 == 0) or not i % 5:
            hits.append(i)
    return hits


def raises_inside_loop(n):
    s = 0
    for i in range(n):
        s += 1 / (2 - i)
    return s


def chained_comparison(x):
    if 0 < x < 10:
        return "inside"
    return "outside"


def loop_with_del(n):
    out = []
    for i in range(n):
        tmp = i * 2
        out.append(tmp)
        del tmp
    return out


def mutate_list_while_looping(xs):
    xs = list(xs)
    for i in range(len(xs)):
        if xs[i] % 2:
            xs.append(xs[i] * 10)
    return xs


def string_building(words):
    s = ""
    for w in words:
        if not w:
            continue
        s += w[0].upper() if len(w) > 1 else w
    return s


def early_return_if_fallthrough(x):
    if x > 5:
        if x > 10:
            return "huge"
        y = "big"
    else:
        y = "small"
    return y + "!"


def nested_while_for(n):
    total = 0
    i = 0
    while i < n:
        for j in range(i):
            if j == 2:
                continue
            total += j
        i += 1
    return total


def keyword_only(x, *, scale=2, shift=0):
    out = []
    for k in range(x):
        out.append(k * scale + shift if k % 2 else -k)
    return out


def recursive_fact(n):
    if n <= 1:
        return 1
    return n * recursive_fact(n - 1)


def helper_with_loop(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            s += i
    return s


def calls_helper(n):
    return helper_with_loop(n) + helper_with_loop(n + 1)


def generator_function(n):
    for i in range(n):
        yield i


def shadowed_range(n):
    range = lambda k: [k, k]  # noqa: E731  (the user's own range, not the builtin)
    out = []
    for v in range(n):
        out.append(v)
    return out


def euler_ode(x0, k, dt, steps):
    x = x0
    for _ in range(steps):
        x = x + dt * (-k * x ** 3 + np.sin(x))
    return x


def small_rnn(xs, w, u):
    h = np.zeros(w.shape[0])
    for x in xs:
        h = np.tanh(w @ h + u * x)
    return h


def fixed_point_cos(x):
    for _ in range(100):
        nxt = np.cos(x)
        if abs(nxt - x) < 1e-10:
            break
        x = nxt
    return x


CORPUS = [
    (range1, [(0,), (1,), (5,)]),
    (range2, [(2, 6), (5, 2), (-3, 0)]),
    (range3_negative, [(10, 0, -3), (0, 10, 4), (3, 3, 1), (5, -5, -1)]),
    (empty_range_keeps_var, [(0,), (3,)]),
    (loop_var_after, [(1,), (4,), (0,)]),
    (over_list, [([],), ([1.0, 2.5, -1.0],)]),
    (over_tuple_unpacking, [([(1, (2, 3)), (4, (5, 6))],), ([],)]),
    (over_array_rows, [(np.arange(6.0).reshape(3, 2),)]),
    (over_zip_enumerate, [([1.0, 2.0, 3.0], [4.0, 5.0]),]),
    (for_else_no_break, [(0,), (4,)]),
    (for_else_break, [(5, 2), (5, 7), (0, 0)]),
    (while_else, [(5,), (20,), (0,)]),
    (nested_break_inner, [(0,), (4,)]),
    (continue_depth2, [(10,), (1,)]),
    (break_depth3, [(10,), (3,)]),
    (early_return_loop, [([3, 1, 4, 1], 1), ([3], 9), ([], 0)]),
    (early_return_nested, [(5,), (3,)]),
    (if_chain, [(-1,), (0,), (5,), (50,)]),
    (defined_in_one_branch, [(3,), (-3,)]),
    (unbound_after_branches, [(9,), (3,), (0.5,), (-1,)]),
    (defined_in_both, [(1,), (-1,)]),
    (augmented, [(0,), (5,)]),
    (closure_nonlocal, [(6,)]),
    (nonlocal_in_loop, [()]),
    (comprehension_and_lambda, [(7,)]),
    (try_with_loop, [(2,), (6,)]),
    (with_block, [(2,), (5,)]),
    (conditional_expressions, [(3,), (0,), (-2,)]),
    (and_or_values, [(0, 5), (3, 0), (2, 7), ([], "x"), ("", None)]),
    (while_true_break, [(0,), (10,), (99,)]),
    (collatz_steps, [(1,), (6,), (27,)]),
    (fibonacci, [(0,), (1,), (30,)]),
    (bisection, [(2.0, 0.0, 2.0), (9.0, 1.0, 5.0)]),
    (newton_sqrt, [(2.0,), (1e-4,), (1.0,)]),
    (horner, [([1.0, -2.0, 3.0], 2.0), ([], 1.0)]),
    (huber, [(0.3, 1.0), (-3.0, 1.0)]),
    (list_item_assignment, [(0,), (5,)]),
    (array_item_assignment, [(4,)]),
    (aliasing_item_assignment, [(3,)]),
    (closures_in_loop, [(3,)]),
    (dict_items, [({"a": 1, "b": -2, "c": 3},)]),
    (walrus_while, [([3, 2, 0, 5],), ([0],)]),
    (complex_condition, [(31,)]),
    (raises_inside_loop, [(2,), (3,)]),
    (chained_comparison, [(5,), (10,), (-1,)]),
    (loop_with_del, [(3,)]),
    (mutate_list_while_looping, [([1, 2, 3],)]),
    (string_building, [(["ab", "", "c", "de"],)]),
    (early_return_if_fallthrough, [(2,), (7,), (11,)]),
    (nested_while_for, [(6,)]),
    (recursive_fact, [(0,), (5,)]),
    (calls_helper, [(7,)]),
    (shadowed_range, [(3,)]),
    (euler_ode, [(np.array([0.5, 1.0]), 0.3, 0.01, 20)]),
    (small_rnn, [(np.arange(3.0), np.eye(2) * 0.5, np.ones(2))]),
    (fixed_point_cos, [(1.0,)]),
]
