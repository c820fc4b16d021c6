"""torch's bitwise ops on the facade (functions, methods, operators, reflected and in-place forms) against real torch
2.13.0 on seeded random integer and boolean tensors: values, dtypes (torch's promotion) and the refusals of floats."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import gradc.torch as gt

real = pytest.importorskip("torch")

OPS = {"&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
DTYPES = ["int64", "int32", "bool"]


def _operand(T, rng, kind, shape):
    if kind == "number":
        return int(rng.integers(0, 4))
    if kind == "bool_number":
        return bool(rng.integers(0, 2))
    if kind == "bool":
        return T.tensor(rng.integers(0, 2, shape).astype(bool))
    return T.tensor(rng.integers(-20, 20, shape), dtype=getattr(T, kind))


def _same(got, want):
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("seed", range(40))
def test_operators_and_functions_match_torch(seed):
    rng = np.random.default_rng(seed)
    symbol = list(OPS)[seed % len(OPS)]
    shapes = [(3,), (2, 3), (1, 3), ()][int(rng.integers(0, 4))], (3,)
    second = ["int64", "int32", "bool", "number", "bool_number"][int(rng.integers(0, 5))]
    kinds = [DTYPES[int(rng.integers(0, 3))], second]
    if symbol in ("<<", ">>"):  # shifts: integers, small non-negative counts
        kinds = [k if k not in ("bool", "bool_number") else "int64" for k in kinds]
    results = []
    for T in (gt, real):
        r = np.random.default_rng(seed + 1000)
        a, b = _operand(T, r, kinds[0], shapes[0]), _operand(T, r, kinds[1], shapes[1])
        if symbol in ("<<", ">>"):
            b = b.abs() % 8 if isinstance(b, T.Tensor) else b
        results.append((OPS[symbol](a, b), OPS[symbol](b, a) if isinstance(b, T.Tensor) or symbol not in
                        ("<<", ">>") else None))
    for got, want in zip(results[0], results[1]):
        if want is not None:
            _same(got, want)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"])
def test_functions_methods_and_in_place(name):
    outs = []
    for T in (gt, real):
        a = T.tensor([1, 5, 11, -3])
        b = T.tensor([2, 7, 10, 6])
        m = T.tensor([True, False, True, False])
        args = () if name == "bitwise_not" else (b,)
        margs = () if name == "bitwise_not" else (T.tensor([False, False, True, True]),)
        c = a.clone()
        getattr(c, name + "_")(*args)
        outs.append([getattr(T, name)(a, *args), getattr(a, name)(*args), getattr(m, name)(*margs), c])
    for got, want in zip(*outs):
        _same(got, want)
    x, y = gt.tensor([True, False]), real.tensor([True, False])
    x &= gt.tensor([True, True])
    y &= real.tensor([True, True])
    _same(x, y)
    assert (~gt.tensor([1, 2])).tolist() == (~real.tensor([1, 2])).tolist()


@pytest.mark.parametrize("expr", ["T.tensor([1.5]) & 1", "T.tensor([1.5]) ^ T.tensor([1.0])", "T.tensor([1.0]) << 1",
                                  "T.tensor([1.0], dtype=T.float64) | T.tensor([1])", "T.tensor([1, 2]) & 1.5",
                                  "~T.tensor([1.0])", "T.bitwise_not(T.tensor([1.0]))"])
def test_floats_refused_as_torch_refuses(expr):
    errors = []
    for T in (gt, real):
        with pytest.raises((NotImplementedError, TypeError, RuntimeError)) as info:
            eval(expr, {"T": T})
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("expr", ["T.tensor([5, -7]) % 3", "T.tensor([5.0, -7.0]) % 3", "7 % T.tensor([2, -3])",
                                  "7.5 % T.tensor([2, 3])", "T.tensor([5.0, -7.0]) % T.tensor(2.0)",
                                  "T.tensor([True]) % 2", "T.tensor([-5.5], dtype=T.float64) % -2"])
def test_remainder_operator_matches_torch(expr):
    got, want = (eval(expr, {"T": T}) for T in (gt, real))
    _same(got, want)


def test_remainder_operator_gradient_and_in_place():
    x = gt.tensor([5.0, -7.0], requires_grad=True)
    y = x % 3
    assert type(y.grad_fn).__name__ == "RemainderBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]  # d(x - 3 floor(x / 3))/dx away from the jumps
    c = gt.tensor([5, -7])
    c %= 3
    assert c.tolist() == [2, 2]
