"""Every user error is a GradcError subclass naming the user's file:line and a hint."""
import re

import numpy as np
import pytest

import gradc
from gradc import ArgumentError, GradcError, ShapeError, TraceError

HERE = "test_errors.py"


def check(err, cls, *words):
    """The error's class, its location in this file (with a line number), a hint and some words."""
    assert isinstance(err, GradcError) and isinstance(err, cls), type(err)
    text = str(err)
    match = re.search(rf"{re.escape(HERE)}:(\d+)", text)
    assert match, f"no {HERE}:<line> in {text!r}"
    line = int(match.group(1))
    assert 1 <= line <= sum(1 for _ in open(__file__)), text
    assert err.hint, f"no hint in {text!r}"
    for w in words:
        assert w in text, f"{w!r} not in {text!r}"
    return line


def line_of(fn, marker):
    """The line number of the line in this file containing ``marker`` inside ``fn``'s source."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return start + k
    raise AssertionError(marker)


def uses_matrix_rank(a):
    return np.sum(np.linalg.matrix_rank(a))  # MARK


def uses_histogram(a):
    return np.sum(np.histogram(a, bins="auto")[1])  # MARK


def branches(a):
    if a > 0:  # MARK  (a Python `if` on a traced array: elementwise, so it needs np.where)
        return np.sum(a)
    return -np.sum(a)


def bad_matmul(a, b):
    return np.sum(a @ b)  # MARK


def bad_broadcast(a, b):
    return np.sum(a + b)  # MARK


def vector_out(a):
    return a * 2.0


def masked(a):
    return np.sum(a[a > 0])  # MARK


def scaled(x, n):
    return np.sum(x) * n


@pytest.mark.parametrize("fn, args, cls, words", [
    (uses_matrix_rank, (np.eye(2),), TraceError, ("np.linalg.matrix_rank",)),
    (uses_histogram, (np.ones(3),), TraceError, ("np.histogram",)),
    (branches, (np.ones(3),), TraceError, ("if",)),
    (bad_matmul, (np.ones((2, 3)), np.ones((2, 3))), ShapeError, ("matmul",)),
    (bad_broadcast, (np.ones(3), np.ones(4)), ShapeError, ("broadcast",)),
    (masked, (np.ones(3),), TraceError, ("mask",)),
], ids=["np.linalg.matrix_rank", "np.histogram", "python-if", "matmul-shapes", "broadcast-shapes", "boolean-mask"])
def test_trace_errors_point_at_the_user_line(fn, args, cls, words):
    for run in (lambda: gradc.grad(fn)(*args), lambda: gradc.compile(fn, *args)):
        with pytest.raises(GradcError) as info:
            run()
        line = check(info.value, cls, *words)
        assert line == line_of(fn, "# MARK"), str(info.value)


def test_wrt_not_a_parameter():
    with pytest.raises(GradcError) as info:
        gradc.grad(scaled, wrt="z")(np.ones(2), 3)
    # an option is refused where it is given: the call of gradc.grad (issue 22), not scaled's def
    assert check(info.value, ArgumentError, "'z'", "x, n") == line_of(test_wrt_not_a_parameter, 'wrt="z"')


def test_wrt_position_out_of_range():
    with pytest.raises(GradcError) as info:
        gradc.compile(scaled, np.ones(2), 3, wrt=5)
    check(info.value, ArgumentError, "wrt=5")


def test_wrt_static_int_param():
    with pytest.raises(GradcError) as info:
        gradc.grad(scaled, wrt="n")(np.ones(2), 3)
    check(info.value, ArgumentError, "'n'", "static")


def test_wrt_int_array_param():
    with pytest.raises(GradcError) as info:
        gradc.compile(lambda x, i: np.sum(x[i]), np.ones(3), np.array([0, 1]), wrt="i")
    check(info.value, ArgumentError, "'i'", "i64")


def test_non_scalar_output_under_grad():
    with pytest.raises(GradcError) as info:
        gradc.grad(vector_out)(np.ones(3))
    assert check(info.value, ShapeError, "scalar") == vector_out.__code__.co_firstlineno


def test_list_argument():
    # a list is a pytree (a value per entry); NumPy functions take it as an array-like, as autograd does
    grads = gradc.grad(lambda x: np.sum(np.asarray(x) ** 2))([1.0, 2.0])
    assert isinstance(grads, list) and np.allclose(grads, [2.0, 4.0])


def test_errors_are_raised_at_the_call_not_later():
    # a cached signature does not hide the error for a new one
    df = gradc.grad(bad_broadcast)
    df(np.ones(3), np.ones(3))
    with pytest.raises(ShapeError):
        df(np.ones(3), np.ones(4))


X, M = np.ones(3), np.ones((2, 3))
MORE_ERRORS = {
    "ufunc-where-keyword": (lambda a: np.sum(np.exp(a, where=a > 0)), (X,), TraceError),
    "ufunc-out": (lambda a: np.sum(np.exp(a, out=np.empty(3))), (X,), TraceError),
    "ufunc-accumulate": (lambda a: np.sum(np.power.accumulate(a)), (X,), TraceError),
    "item-assignment-of-a-reshape-view": (lambda a: (a.reshape(len(a), 1).__setitem__(0, 1.0), np.sum(a))[1], (X,),
                                          TraceError),
    "range-of-traced": (lambda a: len(list(range(np.argmax(a)))) * np.sum(a), (X,), TraceError),
    "list-index-of-traced": (lambda a: np.sum([a, a[:2]][np.argmax(a)]), (X,), TraceError),
    "traced-slice-bound": (lambda a, i: np.sum(a[:i]), (X, np.array(2)), TraceError),
    "where-one-argument": (lambda a: np.sum(np.where(a > 0)), (X,), TraceError),
    "reshape-size": (lambda a: np.sum(a.reshape(2, 2)), (X,), ShapeError),
    "reshape-two-unknown": (lambda a: np.sum(a.reshape(-1, -1)), (M,), ShapeError),
    "reshape-order": (lambda a: np.sum(np.reshape(a, (3,), order="F")), (X,), TraceError),
    "concatenate-shapes": (lambda a, b: np.sum(np.concatenate([a, b], axis=1)), (M, X), ShapeError),
    "too-many-indices": (lambda a: np.sum(a[0, 0]), (X,), ShapeError),
    "index-out-of-bounds": (lambda a: a[5], (X,), ShapeError),
    "index-array-out-of-bounds": (lambda a: np.sum(a[np.array([5])]), (X,), ShapeError),
    "float-index-array": (lambda a: np.sum(a[np.array([0.0])]), (X,), TraceError),
    "two-ellipses": (lambda a: np.sum(a[..., ...]), (M,), TraceError),
    "axis-out-of-range": (lambda a: np.sum(a, axis=2), (X,), ShapeError),
    "repeated-axis": (lambda a: np.sum(a, axis=(0, 0)), (M,), ShapeError),
    "reduce-initial": (lambda a: np.sum(a, initial=1.0), (X,), TraceError),
    "max-of-empty": (lambda a: np.max(a[:0]), (X,), ShapeError),
    "len-of-0d": (lambda a: len(np.sum(a)) * 1.0, (X,), TraceError),
    "dot-shapes": (lambda a: np.sum(np.dot(a, a)), (np.ones((2, 2, 3)),), ShapeError),
    "einsum-subscripts": (lambda a: np.sum(np.einsum("ij,jk", a)), (M,), ShapeError),
    "linalg-matrix-rank": (lambda a: np.sum(np.linalg.matrix_rank(a)), (np.eye(2),), TraceError),
    "svd-full-matrices": (lambda a: np.sum(np.linalg.svd(a)[0]), (np.ones((3, 2)),), TraceError),
    "matmul-scalar": (lambda a: np.sum(a @ 2.0), (X,), ShapeError),
    "take-along-axis-ndim": (lambda a, i: np.sum(np.take_along_axis(a, i, axis=1)), (M, np.array([0])), ShapeError),
    "broadcast-to": (lambda a: np.sum(np.broadcast_to(a, (2, 4))), (X,), ShapeError),
    "squeeze-non-1": (lambda a: np.sum(np.squeeze(a, axis=0)), (M,), ShapeError),
    "transpose-axes": (lambda a: np.sum(np.transpose(a, (0, 0))), (M,), ShapeError),
    "clip-keyword": (lambda a: np.sum(np.clip(a, 0, 1, dtype=np.float32)), (X,), TraceError),
    "boolean-list-index-length": (lambda a: np.sum(a[[True, False]]), (X,), GradcError),
    "complex-argument": (lambda a: np.sum(a), (np.ones(2, complex),), ArgumentError),
    "object-argument": (lambda a: np.sum(a), (object(),), ArgumentError),
    "returns-a-string": (lambda a: "loss", (X,), TraceError),
    "returns-a-tuple": (lambda a: (np.sum(a), np.sum(a)), (X,), ArgumentError),
    "returns-an-int": (lambda a, i: np.sum(i), (X, np.arange(3)), ArgumentError),
}


@pytest.mark.parametrize("name", sorted(MORE_ERRORS))
def test_every_error_names_the_line_and_a_hint(name):
    fn, args, cls = MORE_ERRORS[name]
    with pytest.raises(GradcError) as info:
        gradc.grad(fn)(*args)
    check(info.value, cls)


def test_star_args_and_wrt_misuse():
    def star(*a):
        return np.sum(a[0])

    for run, cls in [(lambda: gradc.grad(star, wrt="a")(X), ArgumentError),  # *a's arguments are chosen one by one
                     (lambda: gradc.grad(scaled, wrt=())(X, 2), ArgumentError),
                     (lambda: gradc.grad(scaled, wrt=("x", "x"))(X, 2), ArgumentError),
                     (lambda: gradc.compile(scaled, X, 2, target="fortran"), ArgumentError)]:
        with pytest.raises(GradcError) as info:
            run()
        check(info.value, cls)
