"""The C target with named sizes (``gradc.spec("f64[n,3]")``): one compiled function for every ``n``.

Each loss is compiled once with named sizes and checked, at several sizes, against the NumPy
target compiled for that fixed size; then the ABI (``long n`` first), the argument checks,
the refusal of ops that need fixed sizes, determinism and the CLI.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import EmitError

HAVE_CC = c_build.find_compiler() is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler found ($CC, cc or gcc)")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIZES = (1, 2, 3, 17, 100)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


# ---------------------------------------------------------------- row-wise losses
def logistic(X, y, w):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.1 * np.sum(w ** 2)


def least_squares(X, y, w):
    r = X @ w - y
    return np.sum(r * r) / X.shape[0]


def softmax_xent(X, Y, W, b):
    z = X @ W + b
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1)) + m[:, 0]
    return np.mean(lse - np.sum(Y * z, axis=1))


def tanh_mlp(X, y, W1, b1, w2):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ w2 - y) ** 2)


def poisson(X, y, w):
    eta = X @ w
    return np.mean(np.exp(eta) - y * eta)


def weighted_mean(X, y, s, w):
    return np.sum(s * (X @ w - y) ** 2) / np.sum(s)


def gram(X, w):
    return w @ (X.T @ X) @ w / X.shape[0]


def column_means(X, w):
    return np.sum((np.mean(X, axis=0) - w) ** 2)


def differences(X, w):
    d = X[1:] - X[:-1]
    return np.sum((d @ w) ** 2) + np.sum(X[-1] * w)


def two_sizes(X, Z, w):
    return np.mean(np.tanh(X @ w)) + np.mean((Z @ w) ** 2)


def concat_softmax(X, w):
    z = np.concatenate([X, 2.0 * X], axis=0) * w
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return np.sum(np.log(e / np.sum(e, axis=1, keepdims=True))[:, 0]) + np.sum(X.reshape(-1) ** 2)


def wide_layer(X, W):
    """``X.T @ dz`` of the gradient sums over n: register blocks whose shared axis is the named one."""
    return np.sum(np.tanh(X @ W) ** 2)


# (function, argument types: a type string with names, or the shape of a fixed-size array, wrt)
CASES = {
    "logistic": (logistic, ["f64[n,3]", "f64[n]", (3,)], "w"),
    "least_squares": (least_squares, ["f64[n,3]", "f64[n]", (3,)], "w"),
    "softmax_xent": (softmax_xent, ["f64[n,4]", "f64[n,3]", (4, 3), (3,)], ("W", "b")),
    "tanh_mlp": (tanh_mlp, ["f64[n,3]", "f64[n]", (3, 5), (5,), (5,)], ("W1", "b1", "w2")),
    "poisson": (poisson, ["f64[n,3]", "f64[n]", (3,)], "w"),
    "weighted_mean": (weighted_mean, ["f64[n,3]", "f64[n]", "f64[n]", (3,)], "w"),
    "gram": (gram, ["f64[n,3]", (3,)], ("X", "w")),
    "column_means": (column_means, ["f64[n,3]", (3,)], ("X", "w")),
    "differences": (differences, ["f64[n,3]", (3,)], ("X", "w")),
    "two_sizes": (two_sizes, ["f64[n,3]", "f64[m,3]", (3,)], "w"),
    "concat_softmax": (concat_softmax, ["f64[n,3]", (3,)], ("X", "w")),
    "wide_layer": (wide_layer, ["f64[n,40]", (40, 200)], "W"),
}


def _examples(types):
    return [gradc.spec(t) if isinstance(t, str) else np.zeros(t) for t in types]


def _values(types, n, rng):
    """Arrays for ``types`` with ``n`` for the name n and ``n + 2`` for m."""
    out = []
    for t in types:
        if isinstance(t, str):
            dims = t[t.index("[") + 1:-1].split(",")
            t = tuple(n if d == "n" else n + 2 if d == "m" else int(d) for d in dims)
        out.append(rng.uniform(0.5, 1.5, size=t))
    return out


def _close(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
    assert np.max(np.abs(got - want), initial=0.0) <= 1e-12 * scale, (got, want)


@needs_cc
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_compile_agrees_with_fixed_size_numpy(case):
    f, types, wrt = CASES[case]
    compiled = gradc.compile(f, *_examples(types), wrt=wrt, target="c")
    rng = np.random.default_rng(7)
    for n in SIZES:
        args = _values(types, n, rng)
        reference = gradc.compile(f, *args, wrt=wrt)
        value, grads = compiled.value_and_grad(*args)
        want_value, want_grads = reference.value_and_grad(*args)
        _close(value, want_value)
        if not isinstance(wrt, tuple):
            grads, want_grads = (grads,), (want_grads,)
        for got, want in zip(grads, want_grads):
            _close(got, want)
        _close(compiled.forward(*args), want_value)


# ---------------------------------------------------------------- ABI, header, checks
def test_signature_takes_the_sizes_first():
    f, types, wrt = CASES["logistic"]
    source, header = c_build.emit_sources_for(f, *_examples(types), wrt=wrt)
    proto = ("void gradc_fn_logistic_grad(long n, const double *restrict X, const double *restrict y, "
             "const double *restrict w, double *restrict value, double *restrict w_bar, double *work)")
    assert proto in source
    assert "size_t gradc_fn_logistic_grad_work_size(long n)" in source
    assert "void gradc_fn_logistic_grad(long n, const double *X" in header
    assert "size_t gradc_fn_logistic_grad_work_size(long n);" in header
    assert "Named sizes: n." in header and "`long` arguments" in header


def test_two_names_in_name_order():
    f, types, wrt = CASES["two_sizes"]
    _, header = c_build.emit_sources_for(f, *_examples(types), wrt=wrt)
    assert "void gradc_fn_two_sizes_grad(long m, long n, const double *X, const double *Z" in header
    assert "size_t gradc_fn_two_sizes_grad_work_size(long m, long n);" in header


def test_a_size_named_like_generated_code_is_renamed():
    """``k`` is the emitter's loop index: the size is passed as ``k_`` and the header says so."""
    def loss(X, w):
        return np.mean(np.sin(X @ w))

    compiled = gradc.compile(loss, gradc.spec("f64[k,3]"), np.zeros(3), target="c", wrt="w")
    assert "void gradc_fn_loss_grad(long k_, const double *X" in compiled.header
    assert "k (as the argument k_)" in compiled.header
    if HAVE_CC:
        X, w = np.random.default_rng(0).normal(size=(9, 3)), np.ones(3)
        _close(compiled.grad(X, w), gradc.compile(loss, X, w, wrt="w").grad(X, w))


def test_fixed_sizes_unchanged():
    """Without names nothing changes: no size arguments, `NAME_work_size(void)`."""
    source, header = c_build.emit_sources_for(logistic, np.zeros((4, 3)), np.zeros(4), np.zeros(3), wrt="w")
    assert "long n" not in source and "Named sizes" not in header
    assert "size_t gradc_fn_logistic_grad_work_size(void)" in source


def test_deterministic_across_hash_seeds(tmp_path):
    script = ("import numpy as np, gradc\n"
              "from gradc.backends.c.build import emit_sources_for\n"
              "def loss(X, Z, w):\n"
              "    return np.mean(np.tanh(X @ w)) + np.mean((Z @ w) ** 2) + np.sum(X[1:] - X[:-1])\n"
              "s, h = emit_sources_for(loss, gradc.spec('f64[n,3]'), gradc.spec('f64[m,3]'), np.zeros(3), wrt='w')\n"
              "print(s + h)\n")
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONPATH=REPO, PYTHONHASHSEED=seed)).stdout for seed in ("1", "2")]
    assert outs[0] == outs[1] and "long m, long n" in outs[0]


@needs_cc
def test_argument_checks():
    f, types, wrt = CASES["logistic"]
    compiled = gradc.compile(f, *_examples(types), wrt=wrt, target="c")
    w = np.ones(3)
    with pytest.raises(ValueError, match=r"argument 'y' has shape \(5,\), so n = 5, but an earlier argument has "
                                         r"n = 4; the sizes named n must agree"):
        compiled.grad(np.ones((4, 3)), np.ones(5), w)
    with pytest.raises(ValueError, match="size n is 0, and a named size must be at least 1"):
        compiled.value_and_grad(np.ones((0, 3)), np.ones(0), w)
    with pytest.raises(ValueError, match=r"argument 'X' must be float64 array of shape \(n, 3\)"):
        compiled.grad(np.ones((4, 2)), np.ones(4), w)
    with pytest.raises(ValueError, match=r"argument 'y' must be float64 array of shape \(n,\)"):
        compiled.grad(np.ones((4, 3)), np.ones((4, 1)), w)


@needs_cc
def test_size_checks_with_two_names():
    f, types, wrt = CASES["two_sizes"]
    compiled = gradc.compile(f, *_examples(types), wrt=wrt, target="c")
    w = np.ones(3)
    compiled.grad(np.ones((2, 3)), np.ones((5, 3)), w)  # n and m differ: fine
    with pytest.raises(ValueError, match="size m is 0"):
        compiled.grad(np.ones((2, 3)), np.ones((0, 3)), w)


@needs_cc
def test_vjp_mode_with_named_sizes():
    def f(X, w):
        return np.tanh(X @ w)

    compiled = gradc.compile(f, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w", mode="vjp", target="c")
    rng = np.random.default_rng(3)
    for n in (1, 6):
        X, w, ct = rng.normal(size=(n, 3)), rng.normal(size=3), rng.normal(size=n)
        reference = gradc.compile(f, X, w, wrt="w", mode="vjp")
        for got, want in zip(compiled.vjp(X, w, ct), reference.vjp(X, w, ct)):
            _close(got, want)


def test_ops_needing_fixed_sizes_are_refused_at_once():
    def loss(X, w):
        sign, logdet = np.linalg.slogdet(X @ X.T + 1.0)
        return logdet + np.sum(X[np.array([0, 0])] @ w)

    with pytest.raises(EmitError, match=r"target c does not take named sizes for ops gather, logabsdet yet"):
        c_build.emit_sources_for(loss, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w")


# ---------------------------------------------------------------- CLI
MODEL = '''\
import numpy as np


def loss(X, y, w):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.1 * np.sum(w ** 2)
'''


def test_cli_compile_target_c_with_named_sizes(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    env = dict(os.environ, PYTHONPATH=REPO, GRADC_CACHE_DIR=str(tmp_path / "cache"))
    args = ["--arg", "X=f64[n,3]", "--arg", "y=f64[n]", "--arg", "w=f64[3]"]
    proc = subprocess.run([sys.executable, "-m", "gradc", "compile", "model.py:loss", "--target", "c", "--wrt", "w",
                           *args, "-o", "loss.c"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    source, header = (tmp_path / "loss.c").read_text(), (tmp_path / "loss.h").read_text()
    assert "void gradc_fn_loss_grad(long n, const double *restrict X" in source
    assert "size_t gradc_fn_loss_grad_work_size(long n);" in header
    assert "X: f64[n,3], y: f64[n], w: f64[3]" in header
    if HAVE_CC:
        cc = c_build.find_compiler()
        built = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", "loss.c",
                                "-o", "loss.o"], cwd=tmp_path, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr


@needs_cc
def test_mean_over_a_product_of_sizes_divides_by_the_whole_product():
    """Regression: the flat mean wrote ``/ 3*n`` (the mean times n squared) for a count that is a product."""
    def loss(X, w):
        return np.mean((X * w) ** 2) + np.mean(np.sin(X @ w))
    sym = gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w", target="c")
    rng = np.random.default_rng(11)
    for n in (1, 5, 40):
        X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
        value, grad = sym.value_and_grad(X, w)
        np.testing.assert_allclose(value, loss(X, w), rtol=1e-12)
        np.testing.assert_allclose(grad, gradc.compile(loss, X, w, wrt="w").grad(X, w), rtol=1e-12)
