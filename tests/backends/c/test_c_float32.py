"""float32 in the C target: computed in float (float temporaries, float math, F literals), as NumPy does.

The values and gradients of float32 inputs agree with the NumPy target to a few
float32 ulps; the same functions in float64 agree with central finite differences.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


rng = np.random.default_rng(32)
A = rng.normal(size=(6, 5))
B = rng.normal(size=(5, 3))
V = rng.normal(size=5)
P = rng.uniform(0.5, 2.0, size=(6, 5))
Y = (rng.random((6, 3)) > 0.5).astype(float)


def bce(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(np.exp(-np.abs(z))))


def mlp(x, w, v):
    h = np.tanh(x @ w)
    logits = h * v[:3]
    m = logits.max(axis=1, keepdims=True)
    return np.mean(np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0])


CASES = {
    "bce": (bce, (A, Y, B, V[:3]), (2, 3)),
    "mlp": (mlp, (A, B, V), (1, 2)),
    "exp_log": (lambda x, p: np.sum(np.exp(x) * np.log(p) + np.expm1(x * 0.5) - np.log1p(p)), (A, P), (0, 1)),
    "tanh": (lambda x: np.sum(np.tanh(x) ** 2 + np.tanh(2.0 * x)), (A,), 0),
    "broadcast": (lambda a, v: np.sum(np.exp(-np.abs(a * v + v[None, :])) * a), (A, V), (0, 1)),
    "two_broadcasts": (lambda a, v, u: np.sum(np.exp(a * v) * np.log1p(np.abs(u[:, None] * a + v))),
                       (A, V, V[:6] if V.size >= 6 else np.linspace(0.1, 0.6, 6)), (0, 1, 2)),
    "trig_sqrt": (lambda x, p: np.sum(np.sin(x) * np.sqrt(p) + np.cos(x) / p + np.arctan(x)), (A, P), (0, 1)),
    "where": (lambda x, p: np.sum(np.where(x > 0.0, np.exp(-x), p * x) + np.maximum(x, 0.25)), (A, P), (0, 1)),
    "scalar": (lambda x, y: np.exp(x) * np.tanh(y) + np.log(x * x + 1.0), (0.7, -0.3), (0, 1)),
}


def as32(args):
    return tuple(np.float32(a) if np.isscalar(a) else np.asarray(a, np.float32) for a in args)


def _flat(result):
    value, grads = result
    grads = grads if isinstance(grads, tuple) else (grads,)
    return [np.asarray(value)] + [np.asarray(g) for g in grads]


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_agrees_with_numpy_target(case):
    f, args, wrt = CASES[case]
    args = as32(args)
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    n = gradc.compile(f, *args, wrt=wrt)
    got, want = _flat(c.value_and_grad(*args)), _flat(n.value_and_grad(*args))
    for g, w in zip(got, want):
        assert g.dtype == np.float32 == w.dtype
        scale = np.max(np.abs(w), initial=1.0)  # sums: a few ulps of the largest term, not of a cancelled total
        np.testing.assert_allclose(g, w, rtol=8 * np.finfo(np.float32).eps, atol=8 * np.finfo(np.float32).eps * scale)


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_float64_agrees_with_numpy_target(case):
    f, args, wrt = CASES[case]
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    n = gradc.compile(f, *args, wrt=wrt)
    for g, w in zip(_flat(c.value_and_grad(*args)), _flat(n.value_and_grad(*args))):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14 * np.max(np.abs(w), initial=1.0))


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_groups_compute_in_float(case):
    f, args, wrt = CASES[case]
    src = gradc.compile(f, *as32(args), wrt=wrt, target="c").c_source
    body = re.sub(r"/\*.*?\*/", "", src[src.index("/* Value of"):], flags=re.S)  # code, not comments
    assert "double" not in body  # no double temporaries, work arrays or casts
    calls = set(re.findall(r"\b([a-z_0-9]+)\(", body))
    doubles = {"exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt", "atan", "fabs", "pow", "gradc_exp",
               "gradc_log", "gradc_log1p", "gradc_expm1", "gradc_tanh"}
    assert not calls & doubles, calls & doubles
    literals = re.findall(r"(?<![\w.])\d+\.\d*(?:e[-+]?\d+)?(?![\w.])", body)
    assert not literals, literals  # every float literal is a float one (1.0F)


@needs_cc
@pytest.mark.parametrize("case", ["bce", "broadcast"])
def test_float64_is_computed_in_double(case):
    f, args, wrt = CASES[case]
    src = gradc.compile(f, *args, wrt=wrt, target="c").c_source
    body = re.sub(r"/\*.*?\*/", "", src[src.index("/* Value of"):], flags=re.S)
    assert "float" not in body
    assert "gradc_exp(" in body and "gradc_expf(" not in body


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_float64_gradients_match_finite_differences(case):
    f, args, wrt = CASES[case]
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    args = tuple(np.float64(a) if np.isscalar(a) else np.asarray(a, np.float64) for a in args)
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    value, grads = c.value_and_grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    r = np.random.default_rng(3)
    dirs = [r.normal(size=np.shape(args[i])) for i in wrt]
    h = 1e-6

    def at(t):
        moved = list(args)
        for i, d in zip(wrt, dirs):
            moved[i] = args[i] + t * d
        return float(c.forward(*moved))

    fd = (at(h) - at(-h)) / (2 * h)
    analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, dirs))
    assert abs(fd - analytic) <= 1e-6 * max(1.0, abs(analytic)), (fd, analytic)
    assert np.isclose(float(value), at(0.0), rtol=0, atol=0)


@needs_cc
def test_a_run_with_integers_stays_in_double():
    """Integer values in a float32 run: computed in double (a float temporary would keep 24 bits only)."""
    def f(x, n):
        return np.sum(np.exp(x) * (n * 3 + 16777217).astype(np.float32))

    x = np.asarray(A * 0.1, np.float32)
    n = np.arange(30, dtype=np.int64).reshape(6, 5)
    c = gradc.compile(f, x, n, wrt=0, target="c")
    want = gradc.compile(f, x, n, wrt=0).value_and_grad(x, n)
    for g, w in zip(_flat(c.value_and_grad(x, n)), _flat(want)):
        np.testing.assert_allclose(g, w, rtol=8 * np.finfo(np.float32).eps)
    assert "gradc_exp(x[k])" in c.c_source and "gradc_expf" not in c.c_source
