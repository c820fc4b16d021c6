"""Tangent-style cases: helper calls, nested definitions, recursion, containers, subscripts, arrays in loops."""
from __future__ import annotations

import numpy as np
from transform_checks import Case


def _square(a):
    return a * a


def _mul(a, b):
    return a * b


def _poly(a, b):
    return _mul(a, a) + _mul(b, 3.0)


def call_helper(a):
    return _square(a) + 1.0


def call_nested_helpers(a, b):
    return _poly(a, b) * _square(b)


def call_in_if(a, b):
    if a > 0:
        return _mul(a, b)
    return _mul(b, b)


def call_in_loop(a):
    for _ in range(3):
        a = _square(a) * 0.5
    return a


def inner_def(a, b):
    def scale(x):
        return x * b

    return scale(a) + scale(a * a)


def inner_def_in_loop(a):
    def step(x):
        return np.sin(x) + x

    for _ in range(3):
        a = step(a)
    return a


def lambda_helper(a):
    f = lambda x: x * x + a  # noqa: E731 - a lambda assigned, as users write
    return f(a) * f(2.0)


def _power(a, n):
    if n == 0:
        return 1.0
    return a * _power(a, n - 1)


def recursion_static_depth(a):
    return _power(a, 4)


def _fib_like(a, n):
    if n <= 1:
        return a
    return _fib_like(a, n - 1) * 0.5 + _fib_like(a, n - 2) * a


def recursion_two_calls(a):
    return _fib_like(a, 4)


def multiple_return_values(a):
    def polar(x, y):
        return np.sqrt(x * x + y * y), np.arctan2(y, x)

    r, theta = polar(a, 2.0 * a + 1.0)
    return r * theta


def tuple_pack_unpack(a):
    t = (a, a * 2.0, a * 3.0)
    x, y, z = t
    return x * y + z


def list_build_index(a):
    xs = [a, a * a, 3.0]
    return xs[0] * xs[1] + xs[2] * xs[-1]


def list_append_in_loop_sum(a):
    xs = []
    for i in range(4):
        xs.append(a * i)
    return sum(xs)


def list_append_in_loop_stack(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x * (i + 1)))
    return np.sum(np.stack(rows) ** 2)


def list_comprehension(a):
    return sum([a * i for i in range(4)])


def dict_values(a):
    d = {"x": a, "y": a * a}
    d["z"] = d["x"] * d["y"]
    return d["z"] + d["x"]


def nested_dict(a):
    p = {"inner": {"w": a * 2.0}, "b": 1.0}
    return p["inner"]["w"] * p["b"] + a


def subscript_read(x):
    return x[0] * x[1] + x[2] * x[-1]


def subscript_slice(x):
    return np.sum(x[1:] * x[:-1])


def subscript_write_copy(x):
    y = x.copy()
    y[0] = x[1] * x[2]
    return np.sum(y * y)


def array_fill_loop(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * x[i] + i
    return np.sum(out * x)


def array_fill_loop_augmented(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] += x[i] * 2.0
        out[i] += x[(i + 1) % 3]
    return np.sum(out ** 2)


def array_tuple_targets_loop(x):
    s = x.copy()
    for i in range(0, 4, 2):
        s[i], s[i + 1] = s[i + 1] * 2.0, s[i] * s[i + 1]
    return np.sum(s)


def array_column_write_loop(x):
    m = np.zeros((2, 3))
    for j in range(3):
        m[:, j] = x[j] * np.array([1.0, 2.0])
    return np.sum(m ** 2)


def array_write_in_branch(x):
    y = x.copy()
    if x[0] > 0:
        y[1] = x[0] * 3.0
    else:
        y[1] = -x[0]
    return np.sum(y * y)


def running_max_loop(x):
    best = x[0]
    for i in range(1, 4):
        best = np.maximum(best, x[i])
    return best * x[0]


def rnn(inputs, w):
    state = np.zeros(2)
    for t in range(inputs.shape[0]):
        state = np.tanh(w @ state + inputs[t])
    return np.sum(state)


def rnn_states_list(inputs, w):
    states = [np.zeros(2)]
    for t in range(inputs.shape[0]):
        states.append(np.tanh(w @ states[-1] + inputs[t]))
    return np.sum(np.stack(states[1:]) ** 2)


def bilinear(x, u):
    return x @ u @ x


def logistic_regression(w, x, y):
    logits = x @ w
    return np.sum(np.log1p(np.exp(-y * logits)))


def cart2polar(a, b):
    r = np.sqrt(a ** 2 + b ** 2)
    theta = np.arctan(b / a)
    return r * theta


rs = np.random.RandomState(3)
X3, X4 = np.array([0.4, -0.9, 1.3]), np.array([0.4, -0.9, 1.3, 0.6])
SCALAR = [call_helper, call_in_loop, inner_def_in_loop, lambda_helper, recursion_static_depth, recursion_two_calls,
          multiple_return_values, tuple_pack_unpack, list_build_index, list_append_in_loop_sum, list_comprehension,
          dict_values, nested_dict]
CASES: list[Case] = [Case(f.__name__, f, (0.7,), order=2) for f in SCALAR]
CASES += [Case(f"{f.__name__}_arg{k}", f, (0.7, -0.4), argnum=k, order=2)
          for f in (call_nested_helpers, inner_def, cart2polar) for k in (0, 1)]
CASES += [Case(f"call_in_if_{k}", call_in_if, (a, -0.4), order=2) for k, a in enumerate((0.7, -0.7))]
ARRAY_ONE_ARG = [subscript_read, subscript_slice, subscript_write_copy, array_fill_loop, array_fill_loop_augmented,
                 array_column_write_loop, list_append_in_loop_stack]
CASES += [Case(f.__name__, f, (X3,), order=2) for f in ARRAY_ONE_ARG]
CASES += [Case("array_tuple_targets_loop", array_tuple_targets_loop, (X4,), order=2),
          Case("running_max_loop", running_max_loop, (X4,)),
          Case("array_write_in_branch_0", array_write_in_branch, (X3,), order=2),
          Case("array_write_in_branch_1", array_write_in_branch, (-X3,), order=2)]
INPUTS, W = rs.randn(4, 2) * 0.5, rs.randn(2, 2) * 0.5
CASES += [Case(f"{f.__name__}_arg{k}", f, (INPUTS, W), argnum=k, order=2)
          for f in (rnn, rnn_states_list) for k in (0, 1)]
CASES += [Case("bilinear_arg0", bilinear, (X3, rs.randn(3, 3)), order=2),
          Case("bilinear_arg1", bilinear, (X3, rs.randn(3, 3)), argnum=1),
          Case("logistic_regression", logistic_regression, (rs.randn(3), rs.randn(5, 3), np.sign(rs.randn(5))),
               order=2)]


# the same loops inside helpers, reached in every way a program reaches a helper
import helpers_elsewhere  # noqa: E402
from helpers_elsewhere import fill_squares, pairwise_update  # noqa: E402


def _fill_squares(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i] + i
    return out


def _pairwise_update(s):
    s2 = s.copy()
    for i in range(0, s.shape[0], 2):
        s2[i], s2[i + 1] = s[i + 1] * 2.0, s[i] * s[i + 1]
    return s2


def _collect_rows(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x * (i + 1)))
    return np.stack(rows)


def _grow_until(a):
    while True:
        a = a * 1.7
        if a > 5.0:
            return a


def _det_by_minors(m):
    if m.shape[0] == 1:
        return m[0, 0]
    total = 0.0
    for j in range(m.shape[0]):
        minor = np.delete(np.delete(m, 0, axis=0), j, axis=1)
        total = total + (-1.0) ** j * m[0, j] * _det_by_minors(minor)
    return total


class Filler:
    def fill(self, x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = x[i] * x[i] + i
        return out


def fill_global_helper(x):
    return np.sum(_fill_squares(x) * x)


def fill_imported_helper(x):
    return np.sum(fill_squares(x) * x)


def fill_attribute_helper(x):
    return np.sum(helpers_elsewhere.fill_squares(x) * x)


def fill_method_helper(x):
    return np.sum(Filler().fill(x) * x)


def fill_inner_helper(x):
    def fill(v):
        out = np.zeros(v.shape[0])
        for i in range(v.shape[0]):
            out[i] = v[i] * v[i] + i
        return out

    return np.sum(fill(x) * x)


def pairs_global_helper(x):
    return np.sum(_pairwise_update(x) ** 2)


def pairs_imported_helper(x):
    return np.sum(pairwise_update(x) ** 2)


def rows_global_helper(x):
    return np.sum(_collect_rows(x) ** 2)


def while_true_return_helper(a):
    return _grow_until(a) * a


def recursion_np_delete(x):
    return _det_by_minors(x.reshape(3, 3))


CASES += [Case(f.__name__, f, (X4,), order=2) for f in (fill_global_helper, fill_imported_helper, fill_attribute_helper,
                                                       fill_method_helper, fill_inner_helper, pairs_global_helper,
                                                       pairs_imported_helper, rows_global_helper)]
CASES += [Case("while_true_return_helper", while_true_return_helper, (0.7,), order=2),
          Case("recursion_np_delete", recursion_np_delete, (rs.randn(9),), order=2)]
