"""The array-API target (``target="array_api"``) on the whole per-op table.

Every differentiable case runs under array-api-strict (the standard and nothing
more, API version 2024.12) and must equal the NumPy target to 1e-12 relative,
dtypes included; the NumPy target itself is checked against finite differences in
``test_ops_table``. Ops with no standard spelling are listed here by hand and must
be refused with one error naming all of them, and only for NumPy words listed here
as missing from the standard (a table that forgot ``np.sin`` would fail). The same module then runs on Dask
arrays (lazily, one graph) and on torch tensors when torch is installed.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from op_cases import DIFF_CASES, compile_case, make_inputs, make_loss, ops_in

import gradc

xps = pytest.importorskip("array_api_strict")
pytest.importorskip("array_api_compat")

# NumPy words the standard lacks (SciPy's are not in it either): a refusal may name only these
NOT_STANDARD = {"np.add.at", "np.einsum", "np.pad", "np.lib.stride_tricks.sliding_window_view", "np.exp2",
                "np.logaddexp2", "np.fmin", "np.fmax", "np.fmod", "np.cbrt", "np.sinc", "np.convolve",
                "np.correlate", "control flow (not yet)", "np.linalg.eig",  # (its linalg extension has eigh only)
                "x[array] = ... (setitem with an array index)",
                "np.linalg.LinAlgError"}  # (a run-time check raising NumPy's error: sqrtm's, of a matrix with no root)
# Dask's own limits (its reshape, negative-step setitem and blocked linear algebra), not the target's
DASK_LIMITS = {"reshape", "index_negative_step", "solve_vector_batched", "inv", "det", "slogdet_batched",
               "complex_solve_inv", "complex_det", "complex_slogdet", "lu_solve", "svd_tall", "svd_wide", "svdvals",
               "pinv", "lstsq", "lstsq_residuals",
               "matrix_power_negative", "norm_nuc", "norm_2_matrix",
               # dask.array.fft transforms only along an axis of one chunk
               "rfft_irfft_odd", "rfft_irfft_even_ortho", "fft_axis0_to_irfft", "ifft_padded_to_irfft",
               "irfft_of_real_half", "rfftn_irfftn", "fft2_ifft2_to_irfft",
               # dask's LU needs square chunks; its svd has no full_matrices=True
               "solve_sylvester", "complex_svd"}


@pytest.fixture(autouse=True, scope="module")
def _strict_2024():
    flags = xps.get_array_api_strict_flags()
    xps.set_array_api_strict_flags(api_version="2024.12")
    yield
    xps.set_array_api_strict_flags(api_version=flags["api_version"])


def _tolerance(args):
    if any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args):
        return 1e-6, 1e-7
    return 1e-12, 1e-14


def _same(actual, expected, args, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (what, actual.dtype, expected.dtype)
    rtol, atol = _tolerance(args)
    scale = float(np.max(np.abs(expected.astype(np.float64)), initial=0.0))
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol,
                               atol=atol * (1.0 + scale), err_msg=what)


def _ops_within(*graphs):
    """The ops of the graphs and of the sub-graphs in their equations' params (control flow)."""
    ops, stack = set(), list(graphs)
    while stack:
        g = stack.pop()
        ops |= ops_in(g)
        stack += [v for e in g.eqns for p in e.params.values() for v in (p if isinstance(p, (tuple, list)) else [p])
                  if isinstance(v, gradc.Graph)]
    return ops


def _compile_both(case):
    args = make_inputs(case)
    loss, ct, wrt, numpy_compiled = compile_case(case, args)
    ops = _ops_within(numpy_compiled.graph, numpy_compiled.value_and_grad_graph)
    compile_it = lambda: gradc.compile(make_loss(case.fn, len(args)), *args, ct,  # noqa: E731
                                       wrt=tuple(f"a{i}" for i in wrt), target="array_api")
    return args, ct, numpy_compiled, ops, compile_it


def _compiled_or_skip(compile_it):
    """The array-API module, or a skip for the functions the strict test saw refused."""
    try:
        return compile_it()
    except gradc.EmitError as e:
        pytest.skip(f"no array-API spelling (checked under array-api-strict): {str(e)[:80]}")


def _check_against_numpy(compiled, numpy_compiled, args, ct, convert):
    value, grads = numpy_compiled.value_and_grad(*args, ct)
    x_value, x_grads = compiled.value_and_grad(*[convert(a) for a in args], convert(ct))
    _same(x_value, value, args, "value")
    assert len(x_grads) == len(grads)
    for k, (xg, g) in enumerate(zip(x_grads, grads)):
        _same(xg, g, args, f"gradient {k}")
    _same(compiled.forward(*[convert(a) for a in args], convert(ct)), numpy_compiled.forward(*args, ct), args,
          "forward")


def _strict(a):
    return xps.asarray(a) if isinstance(a, np.ndarray) else a


@pytest.mark.parametrize("case", DIFF_CASES, ids=lambda c: c.id)
def test_strict_equals_numpy_target(case):
    args, ct, numpy_compiled, ops_used, compile_it = _compile_both(case)
    try:
        compiled = compile_it()
    except gradc.EmitError as e:  # one error naming every op without a standard spelling, and why
        found = re.search(r"no array-API spelling for ops? (.*) in loss \(not in the array API standard: (.*?)\)"
                          r"( \(|;)", str(e))
        assert found, str(e)
        ops, words = found[1].split(", "), found[2].split(", ")
        assert set(ops) <= ops_used and ops == sorted(ops), (ops, ops_used)
        assert all(w in NOT_STANDARD or w.startswith("scipy.") for w in words), words  # nothing standard refused
        return
    assert "import numpy" not in compiled.source and "np." not in compiled.source
    _check_against_numpy(compiled, numpy_compiled, args, ct, _strict)


@pytest.mark.parametrize("case", [c for c in DIFF_CASES if c.id not in DASK_LIMITS][::3], ids=lambda c: c.id)
def test_dask_equals_numpy_target(case):
    da = pytest.importorskip("dask.array")
    args, ct, numpy_compiled, _, compile_it = _compile_both(case)
    _check_against_numpy(_compiled_or_skip(compile_it), numpy_compiled, args, ct,
                         lambda a: da.from_array(a, chunks=2) if isinstance(a, np.ndarray) else a)


@pytest.mark.parametrize("case", DIFF_CASES[::4], ids=lambda c: c.id)
def test_torch_equals_numpy_target(case):
    torch = pytest.importorskip("torch")
    args, ct, numpy_compiled, _, compile_it = _compile_both(case)
    compiled = _compiled_or_skip(compile_it)
    value, grads = compiled.value_and_grad(*[torch.from_numpy(a) if isinstance(a, np.ndarray) else a
                                             for a in args], torch.from_numpy(ct) if isinstance(ct, np.ndarray) else ct)
    expected_value, expected_grads = numpy_compiled.value_and_grad(*args, ct)
    _same(_from_torch(value, expected_value, torch), expected_value, args, "value")
    assert len(grads) == len(expected_grads)
    for g, e in zip(grads, expected_grads):
        _same(_from_torch(g, e, torch), e, args, "gradient")


def _from_torch(actual, expected, torch):
    """A torch result as NumPy; a Python float (all-scalar code) stays one, as the NumPy target's does."""
    if isinstance(actual, torch.Tensor):
        return actual.numpy()
    assert type(actual) is type(expected), (type(actual), type(expected))
    return actual


def _has_negative_step(source):
    import ast
    return any(isinstance(n, ast.Slice) and n.step is not None and ast.unparse(n.step).startswith("-")
               for n in ast.walk(ast.parse(source)))


# the cases whose NumPy module reverses an axis with a negative step (indexing, cumsum/cumprod and
# convolution gradients, flip)
REVERSING = [c for c in DIFF_CASES if c.id in ("index_negative", "index_reverse", "index_negative_step", "flip")
             or c.id.startswith(("cum", "conv"))]


@pytest.mark.parametrize("case", REVERSING, ids=lambda c: c.id)
def test_reversals_spelled_with_flip(case):
    """No emitted module slices with a negative step (torch refuses them); torch agrees with NumPy."""
    args, ct, numpy_compiled, _, compile_it = _compile_both(case)
    compiled = _compiled_or_skip(compile_it)
    assert not _has_negative_step(compiled.source), compiled.source
    torch = pytest.importorskip("torch")
    to_torch = lambda a: torch.from_numpy(a) if isinstance(a, np.ndarray) else a  # noqa: E731
    value, grads = compiled.value_and_grad(*[to_torch(a) for a in args], to_torch(ct))
    expected_value, expected_grads = numpy_compiled.value_and_grad(*args, ct)
    _same(_from_torch(value, expected_value, torch), expected_value, args, "value")
    for g, e in zip(grads, expected_grads):
        _same(_from_torch(g, e, torch), e, args, "gradient")


def _logistic(w, X, y, lam):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + lam * np.sum(w * w)


def _logistic_inputs(n=7):
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((n, 3)), (rng.random(n) < 0.5) * 1.0, 0.1


def test_one_module_runs_on_numpy_strict_and_dask():
    w, X, y, lam = _logistic_inputs()
    numpy_compiled = gradc.compile(_logistic, w, X, y, lam)
    compiled = gradc.compile(_logistic, w, X, y, lam, target="array_api")
    assert "xp = _namespace('_logistic_value_and_grad', w, X, y)" in compiled.source
    value, grad = numpy_compiled.value_and_grad(w, X, y, lam)
    for convert in (lambda a: a, xps.asarray):
        v, g = compiled.value_and_grad(convert(w), convert(X), convert(y), lam)
        _same(v, value, [w], "value")
        _same(g, grad, [w], "gradient")
    da = pytest.importorskip("dask.array")
    v, g = compiled.value_and_grad(da.from_array(w), da.from_array(X, chunks=(3, 3)), da.from_array(y, chunks=3), lam)
    assert isinstance(g, da.Array)  # lazy: nothing computed until asked
    _same(g.compute(), grad, [w], "gradient")


def test_arguments_are_checked_for_any_array_type():
    w, X, y, lam = _logistic_inputs()
    compiled = gradc.compile(_logistic, w, X, y, lam, target="array_api")
    wrong_shape = "argument 'X' must be .*float64 array of shape \\(7, 3\\), got Array of .*shape \\(5, 3\\)"
    with pytest.raises(ValueError, match=wrong_shape):
        compiled.grad(xps.asarray(w), xps.asarray(X[:5]), xps.asarray(y), lam)
    with pytest.raises(ValueError, match="argument 'w' must be .*float64 array of shape"):
        compiled.grad(xps.asarray(w.astype(np.float32)), xps.asarray(X), xps.asarray(y), lam)
    with pytest.raises(ValueError, match="arrays of one array-API library"):
        compiled.grad(xps.asarray(w), X, y, lam)  # two libraries at once
    with pytest.raises(ValueError, match="arrays of one array-API library"):
        compiled.grad(list(w), X, y, lam)
    with pytest.raises(ValueError, match="argument 'lam' must be a scalar"):
        compiled.grad(w, X, y, np.ones(2))


def test_modes_other_than_grad_are_refused():
    with pytest.raises(gradc.ArgumentError, match="target='array_api' emits mode='grad' only"):
        gradc.compile(lambda x: x * 2.0, np.ones(2), target="array_api", mode="jvp")


def test_emitted_module_is_the_same_under_any_hash_seed():
    import os
    import subprocess
    import sys

    code = ("import numpy as np, gradc\n"
            "f = lambda w, X: np.sum(np.maximum(X @ w, 0.0) * np.arctan(np.clip(X, -1.0, 1.0).T @ X @ w)[0]\n"
            "                        * np.heaviside(X @ w, 0.5))\n"  # a helper (_heaviside) in the module too
            "print(gradc.compile(f, np.ones(3), np.ones((4, 3)), target='array_api').source)\n")
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        outputs.add(out.stdout)
    assert len(outputs) == 1 and "def _heaviside(xp, x, at_zero):" in outputs.pop()


def test_all_ops_without_a_spelling_in_one_error():
    scipy_linalg = pytest.importorskip("scipy.linalg")

    def f(x, idx, a):
        g = x[idx]  # a gather: its gradient scatters with np.add.at
        return np.sum(g * g) + np.sum(scipy_linalg.solve_triangular(a, x[:2], lower=True)) + np.sum(np.sin(x))

    message = ("no array-API spelling for ops gather_grad, triangular_solve in f (not in the array API standard: "
               "np.add.at, scipy.linalg.solve_triangular) (test_array_api_target.py:")
    with pytest.raises(gradc.EmitError, match=re.escape(message)):
        gradc.compile(f, np.ones(4), np.array([0, 2, 2]), np.eye(2) * 2, wrt=("x", "a"), target="array_api")
