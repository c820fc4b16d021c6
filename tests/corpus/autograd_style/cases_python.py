"""Autograd-style cases: Python containers, control flow, closures, nested derivatives and API idioms.

The kinds of functions autograd's test_list, test_tuple, test_dict, test_builtins, test_wrappers
and test_core exercise: containers in and out, builtins on traced values, ``functools.partial`` and
``functools.wraps``, ufuncs given directly to a transform, grad of grad, closures over an outer
traced value, outputs of size 1 whatever their shape.
"""
from __future__ import annotations

import functools

import numpy as np
from transform_checks import Case

import gradc

rs = np.random.RandomState(2)


def randn(*shape):
    return rs.randn(*shape)


CASES: list[Case] = []

# containers in
CASES += [
    Case("list_in_sum", lambda xs: np.sum(xs[0]) + 2 * np.sum(np.sin(xs[1])), ([randn(2, 3), randn(3)],), order=2),
    Case("list_in_unused_leaf", lambda xs: np.sum(xs[0] ** 2), ([randn(2), randn(3)],)),
    Case("tuple_in", lambda t: np.sum(t[0] * t[1]), ((randn(3), randn(3)),)),
    Case("tuple_unpack", lambda t: (lambda a, b: np.sum(a / (1 + b ** 2)))(*t), ((randn(3), randn(3)),)),
    Case("dict_in", lambda d: np.sum(np.sin(d["w"])) * d["b"], ({"w": randn(3), "b": 1.5},)),
    Case("dict_iter_sorted", lambda d: sum(np.sum(np.cos(d[k])) * (i + 1.0) for i, k in enumerate(sorted(d))),
         ({"a": randn(2), "b": randn(3), "c": randn(1)},)),
    Case("dict_items", lambda d: sum(np.sum(v ** 2) for _, v in d.items()), ({"x": randn(2), "y": randn(2)},)),
    Case("nested_pytree", lambda p: np.sum(p["layers"][0]["w"] @ p["layers"][1]["w"]) + p["scale"],
         ({"layers": [{"w": randn(2, 3)}, {"w": randn(3, 2)}], "scale": 0.5},)),
    Case("list_len_loop", lambda xs: sum(np.sum(xs[i] * (i + 1)) for i in range(len(xs))),
         ([randn(2), randn(2), randn(2)],)),
    Case("zip_lists", lambda xs: sum(np.dot(a, b) for a, b in zip(xs[:-1], xs[1:])), ([randn(3), randn(3), randn(3)],)),
]

# containers out
CASES += [
    Case("tuple_out", lambda x: (np.sin(x), np.sum(x ** 2)), (randn(3),)),
    Case("list_out", lambda x: [x * 2, np.cos(x)], (randn(3),)),
    Case("dict_out", lambda x: {"a": np.exp(x), "b": x[0] * x[1]}, (randn(2),)),
    Case("one_element_list_out", lambda x: [np.sum(x ** 2)], (randn(3),)),
    Case("one_element_tuple_out", lambda x: (np.sum(np.sin(x)),), (randn(3),)),
]

# builtins and lists of traced values
CASES += [
    Case("builtin_sum_list", lambda x: sum([x[0], x[1] * 2, x[2] ** 2]), (randn(3),), order=2),
    Case("builtin_max_pair", lambda x: max(x[0], x[1]) * x[2], (np.array([0.3, 1.2, -0.5]),)),
    Case("builtin_abs", lambda x: abs(x[0]) + abs(x[1]), (np.array([-0.7, 0.4]),)),
    Case("builtin_pow", lambda x: pow(x[0], 3) + x[1] ** 0.5, (np.array([0.7, 1.4]),)),
    Case("np_array_of_traced", lambda x: np.sum(np.array([x[0] * x[1], x[1], 2.0]) ** 2), (randn(2),)),
    Case("np_stack_of_scalars", lambda x: np.stack([x[0] ** 2, x[1] * x[0]]), (randn(2),)),
    Case("np_mean_of_list", lambda x: np.mean([x[0], x[1] ** 2, 3.0]), (randn(2),)),
    Case("np_std_of_list", lambda x: np.std([x[0], x[1], x[0] * x[1]]), (np.array([0.3, 1.7]),)),
    Case("np_var_of_list", lambda x: np.var([x[0], x[1], 1.0]), (np.array([0.3, 1.7]),)),
    Case("np_norm_of_list", lambda x: np.linalg.norm([x[0], x[1]]), (np.array([0.3, 1.7]),)),
    Case("np_append_traced", lambda x: np.sum(np.append(x, x[0] * 3) ** 2), (randn(3),)),
    Case("np_int64_index", lambda x: x[np.int64(2)] * x[int(np.int64(1))], (randn(3),)),
    Case("float_of_size1", lambda x: np.sum(x ** 2) * float(3), (randn(3),)),
    Case("python_float_arg", lambda a: a * a * 3.0 + np.sin(a), (0.7,), order=2),
]

# size-1 outputs of any shape
CASES += [
    Case("size1_shape1", lambda x: np.sum(x ** 2, keepdims=True), (randn(3),)),
    Case("size1_shape11", lambda x: np.sum(x, keepdims=True) * x[:1, :1], (randn(2, 2),)),
    Case("size1_dot_1x1", lambda x: x[None, :] @ x[:, None], (randn(3),)),
    Case("size1_slice", lambda x: x[1:2] ** 3, (randn(3),)),
]

# closures, partial, wraps, defaults, callables given directly
W = randn(3, 2)


def affine(x, w=W):
    return np.tanh(x @ w)


def with_default_function(x, activation=np.tanh):
    return np.sum(activation(x))


def logged(fun):
    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        return fun(*args, **kwargs)
    return wrapper


@logged
def wrapped_loss(x, y):
    return np.sum((x - y) ** 2)


def scaled_sum(x, scale, axis):
    return np.sum(np.sin(x) * scale, axis=axis)


CASES += [
    Case("closure_constant_array", lambda x: np.sum(affine(x)), (randn(3),)),
    Case("closure_inner_def", (lambda: (lambda x: np.sum((lambda y: y * W[:, 0])(x) ** 2)))(), (randn(3),)),
    Case("default_array_param", affine, (randn(3),)),
    Case("default_function_param", with_default_function, (randn(3),)),
    Case("wraps_decorated", wrapped_loss, (randn(3), randn(3))),
    Case("partial_keywords", functools.partial(scaled_sum, scale=2.0, axis=0), (randn(2, 3),)),
    Case("partial_positional", functools.partial(np.multiply, 3.0), (randn(3),)),
    Case("ufunc_sin_direct", np.sin, (randn(3),)),
    Case("ufunc_exp_scalar_direct", np.exp, (0.3,), order=2),
    Case("ufunc_binary_direct", np.multiply, (randn(3), randn(3)), argnum=1),
    Case("numpy_function_direct", np.sum, (randn(3),)),
    Case("builtin_abs_direct", abs, (np.array([-0.5, 0.7]),)),
    Case("split_one", lambda x: np.split(x, 1), (randn(4),)),
    Case("split_two", lambda x: np.split(x, 2), (randn(4),)),
]



# *args and **kwargs (autograd's wrapper tests pass everything on): each positional of the call is an argument
def star_product(*args):
    return np.sum(functools.reduce(np.multiply, args) ** 2)


def star_after_named(x, *rest, scale=1.5):
    return np.sum(np.tanh(x) * scale) + sum(np.sum(np.sin(r) * (i + 1)) for i, r in enumerate(rest))


def passes_everything(fun):
    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        return fun(*args, **kwargs) * 2.0
    return wrapper


def keywords_collected(x, **options):
    return np.sum(x ** 2) * options["a"] + np.sum(options["b"] * x)


CASES += [
    Case("star_args_first", star_product, (randn(3), randn(3), randn(3)), order=2),
    Case("star_args_middle", star_product, (randn(3), randn(3), randn(3)), argnum=1),
    Case("star_args_two", star_product, (randn(2), randn(2)), argnum=1),
    Case("star_args_last_negative", star_product, (randn(3), randn(3), randn(3)), argnum=-1),
    Case("star_after_named", star_after_named, (randn(3), randn(2), randn(4)), argnum=2, order=2),
    Case("star_lambda", lambda *xs: np.sum(xs[0] * xs[1]) + xs[2] ** 2, (randn(3), randn(3), 0.7), argnum=2, order=2),
    Case("wrapper_passing_star_args", passes_everything(star_product), (randn(3), randn(3)), argnum=1),
    Case("kwargs_partial", functools.partial(keywords_collected, a=0.5, b=2.0), (randn(3),), order=2),
]

# control flow on traced values (autograd runs Python on values)
def if_positive(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def while_halve(x):
    while np.sum(x ** 2) > 1.0:
        x = x / 2
    return np.sum(x)


def for_accumulate(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(x ** (i + 1))
    return total


CASES += [
    Case("if_traced_taken", if_positive, (np.array([0.5, 1.0]),), order=2),
    Case("if_traced_not_taken", if_positive, (np.array([-0.5, -1.0]),), order=2),
    Case("while_traced", while_halve, (np.array([1.5, 2.5]),)),
    Case("for_static", for_accumulate, (randn(3),), order=2),
]


# nested derivatives
def grad_of_grad(x):
    return gradc.grad(lambda y: np.sum(np.sin(y) * y))(x)


def closes_over_outer(x):
    return gradc.grad(lambda y: x * y ** 2)(x)


def perturbation_confusion(x):
    """d/dx [x * d/dy (x + y)] = 1 (Siskind & Pearlmutter): the inner derivative is 1 whatever x."""
    return x * gradc.grad(lambda y: x + y)(1.0)


def nested_value_and_grad(x):
    value, g = gradc.value_and_grad(lambda y: np.sum(y ** 3))(x)
    return value + np.sum(g * x)


CASES += [
    Case("nested_grad_of_grad", lambda x: np.sum(grad_of_grad(x)), (randn(3),)),
    Case("nested_closure_outer", closes_over_outer, (0.8,)),
    Case("nested_perturbation_confusion", perturbation_confusion, (0.8,)),
    Case("nested_value_and_grad", nested_value_and_grad, (randn(3),)),
    Case("nested_jvp_in_grad", lambda x: gradc.jvp(lambda y: np.sum(np.sin(y)), (x,), (np.ones(3),))[1], (randn(3),)),
]
