"""Tangent-style cases: straight-line code, loops, conditionals, augmented assignment, early returns.

In the manner of Google Tangent's functions.py (small scalar functions written as a programmer
writes them, each checked in every mode and at second order); written here, not copied. Each
function with a branch runs on inputs taking each side.
"""
from __future__ import annotations

import numpy as np
from transform_checks import Case


def identity(a):
    return a


def negate(a):
    return -a


def reassign(a):
    b = a
    b = b * 3.0
    return b


def overwrite_argument(a):
    a = a * 2.0
    a = a + 1.0
    return a * a


def saxpy(a, b, c):
    return a * b + c


def saxpy_temporaries(a, b, c):
    t = a * b
    u = t + c
    return u


def polynomial(a):
    return 3.0 * a ** 3 - 2.0 * a ** 2 + a - 7.0


def rational(a):
    return (a * a + 1.0) / (a - 3.0)


def chain_of_mults(a):
    b = a * a
    c = b * a
    d = c * b
    return d


def augmented(a):
    b = a
    b += a
    b *= a
    b -= 1.0
    b /= 2.0
    b **= 2
    return b


def loop_square(a):
    for _ in range(3):
        a = a * a
    return a


def loop_counter_used(a):
    total = 0.0
    for i in range(4):
        total = total + a * i
    return total


def loop_reversed(a):
    out = a
    for i in reversed(range(3)):
        out = out * (i + a)
    return out


def loop_negative_step(a):
    out = 1.0
    for i in range(4, 0, -2):
        out = out * a + i
    return out


def nested_loops(a):
    for _ in range(2):
        for _ in range(3):
            a = a * 1.1 + 0.1
    return a


def serial_loops(a):
    for _ in range(2):
        a = a * a
    a = 2.0 * a
    for _ in range(3):
        a = a * 0.5
    return a


def loop_augmented(a):
    total = 0.0
    for i in range(5):
        total += a ** i
    return total


def loop_then_if(a):
    for _ in range(2):
        a = a * a
    if a > 1.0:
        a = a * 3.0
    return a


def if_then_loop(a):
    if a > 0:
        for _ in range(2):
            a = a * a
    return a


def loop_with_if(a):
    for _ in range(3):
        if a < 5.0:
            a = a * a
    return a


def if_else(a):
    if a > 0:
        b = a * 3.0
    else:
        b = a * a
    return b


def if_elif_else(a):
    if a > 1.0:
        a = a * 3.0
    elif a < -1.0:
        a = a * 2.0
    else:
        a = 1.0 * a * a
    return a


def if_no_else(a):
    b = a
    if a > 0:
        b = b * b
    return b


def nested_if(a):
    if a > 0:
        a = a * 3.0
        if a < 10.0:
            a = a * a
        else:
            a = a * 2.0
    return a


def if_two_variables(a, b):
    if a > b:
        c = a * b
        d = a - b
    else:
        c = a + b
        d = b * b
    return c * d


def if_compound_condition(a):
    if a > 0 and a < 2.0:
        return a * a
    return -a


def early_return(a):
    if a > 0:
        return a * a
    return a * 3.0


def early_return_in_loop(a):
    for i in range(5):
        a = a * 1.5
        if a > 4.0:
            return a + i
    return a


def while_static_count(a):
    i = 0
    while i < 3:
        a = a * a
        i += 1
    return a


def while_traced(a):
    while a < 10.0:
        a = a * 2.0
    return a


def while_traced_counter(a):
    n = 0
    while a > 0.1:
        a = a * 0.5
        n += 1
    return a * n


def while_true_return(a):
    while True:
        a = a * 1.7
        if a > 5.0:
            return a


def while_true_break(a):
    while True:
        a = a * 1.7
        if a > 5.0:
            break
    return a * a


def for_break(a):
    for _ in range(10):
        a = a * 1.3
        if a > 3.0:
            break
    return a


def for_continue(a):
    total = 0.0
    for i in range(5):
        if i % 2 == 0:
            continue
        total = total + a ** i
    return total


def ternary(a):
    return a * a if a > 0 else -a


def numpy_math(a):
    return np.sin(a) * np.exp(-a * a) + np.log(1.0 + a * a) - np.tanh(a)


def numpy_loop(x):
    for _ in range(3):
        x = np.tanh(x) + 0.1 * x
    return np.sum(x)


def numpy_if_on_sum(x):
    if np.sum(x) > 0:
        x = x * 2.0
    else:
        x = x * x
    return np.sum(x ** 2)


POSITIVE = 0.7
ONE_ARG = [identity, negate, reassign, overwrite_argument, polynomial, rational, chain_of_mults, augmented,
           loop_square, loop_counter_used, loop_reversed, loop_negative_step, nested_loops, serial_loops,
           loop_augmented, loop_then_if, if_then_loop, loop_with_if, if_else, if_elif_else, if_no_else, nested_if,
           if_compound_condition, early_return, early_return_in_loop, while_static_count, while_traced,
           while_traced_counter, while_true_return, while_true_break, for_break, for_continue, ternary, numpy_math]
BRANCHING = {loop_then_if: (0.7, 1.3), if_then_loop: (0.7, -0.7), loop_with_if: (0.7, 2.5), if_else: (0.7, -1.3),
             if_elif_else: (1.5, -1.5, 0.4), if_no_else: (0.7, -0.7), nested_if: (0.7, 4.0, -1.0),
             if_compound_condition: (0.7, 2.5, -0.4), early_return: (0.7, -1.3), early_return_in_loop: (0.7, 3.5),
             while_traced: (0.7, 12.0), while_traced_counter: (0.7, 0.05), while_true_return: (0.7, 6.0),
             while_true_break: (0.7, 6.0), for_break: (0.7, 3.5), ternary: (0.7, -1.3)}

CASES: list[Case] = []
for fun in ONE_ARG:
    for k, a in enumerate(BRANCHING.get(fun, (POSITIVE,))):
        CASES.append(Case(f"{fun.__name__}_{k}", fun, (a,), order=2, rtol=1e-5, atol=1e-6))
for argnum in range(3):
    CASES.append(Case(f"saxpy_arg{argnum}", saxpy, (0.7, -1.3, 2.0), argnum=argnum, order=2))
    CASES.append(Case(f"saxpy_temporaries_arg{argnum}", saxpy_temporaries, (0.7, -1.3, 2.0), argnum=argnum, order=2))
for argnum in range(2):
    for k, (a, b) in enumerate([(0.7, -0.4), (-0.4, 0.7)]):
        CASES.append(Case(f"if_two_variables_arg{argnum}_{k}", if_two_variables, (a, b), argnum=argnum, order=2))
CASES.append(Case("numpy_loop", numpy_loop, (np.array([0.3, -0.8, 1.1]),), order=2))
CASES.append(Case("numpy_if_on_sum_0", numpy_if_on_sum, (np.array([0.3, 0.8]),), order=2))
CASES.append(Case("numpy_if_on_sum_1", numpy_if_on_sum, (np.array([-0.3, -0.8]),), order=2))
