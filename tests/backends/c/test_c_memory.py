"""Memory of the C target: work arrays shared by liveness, forward-mode concatenation without one zero-filled
output-sized array per piece, the work buffer kept between calls (threads included), and the C unit of
``--mode jacobian --sparse`` decompressing its result (CSR values and pattern)."""
from __future__ import annotations

import ctypes
import os
import re
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import gradc
from gradc.backends.c.build import build
from gradc.derivatives.sparse import SparseJacobian
from gradc.trace import trace
from gradc.transforms.forward import jvp_graph

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "cli"))
from cli_harness import run_cli  # noqa: E402


def central_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((np.ravel(f(x + e)) - np.ravel(f(x - e))) / (2 * h))
    return np.stack(cols, axis=1)


def work_bytes(source, fname):
    """The fixed work size ``fname_work_size`` returns in the emitted ``source``."""
    found = re.search(rf"size_t {fname}_work_size\(void\)\n{{\n    return (\d+);", source)
    return int(found.group(1))


def stacked(x):
    return np.stack([np.sin(x[i:i + 200]) * x[i] for i in range(12)])


# ---------------------------------------------------------------- forward mode of linear ops
@pytest.mark.parametrize("f, args", [
    (lambda x, y: np.concatenate([x, np.sin(y), x * y]), (np.ones(3), np.ones(3))),
    (lambda x: np.stack([x[:2] * 2.0, np.cos(x[1:]), x[::2]]), (np.ones(3),)),
])
def test_linear_ops_tangent_is_the_op_itself(f, args):
    g = jvp_graph(trace(f, *args), [f"{p}" for p in trace(f, *args).params])
    assert not any(e.op in ("index_grad",) for e in g.eqns)  # no zero-filled piece per operand


def test_index_update_tangent_writes_the_tangent_in_place_of_zeros():
    def f(x):
        r = np.zeros((3, 3))
        r[0, 1] = np.sin(x[0])
        r[2, :] = x * x
        return r

    g = jvp_graph(trace(f, np.ones(3)), ["x"])
    assert not any(e.op == "index_grad" for e in g.eqns)
    x = np.array([0.3, -0.7, 1.1])
    jac = gradc.jacobian(f)(x)
    np.testing.assert_allclose(np.asarray(jac).reshape(9, 3), central_jacobian(f, x), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_random_concatenations_and_updates_in_forward_mode(seed):
    """Random programs of concatenate, stack, index_update and slices: the forward-mode Jacobian (NumPy and C
    targets) against central differences."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 6))
    ops = [int(rng.integers(0, 4)) for _ in range(4)]
    where = [int(rng.integers(0, n)) for _ in range(4)]

    def f(x):
        y = np.sin(x)
        for op, k in zip(ops, where):
            if op == 0:
                y = np.concatenate([y[k:], x * y[0], y[:k]])[:n]
            elif op == 1:
                y = np.stack([y, np.cos(x), y * x]).sum(0)
            elif op == 2:
                z = y * 1.0
                z[k] = x[k] ** 2
                y = z
            else:
                y = np.concatenate([y[:k], np.tanh(y[k:])])
        return y

    x = rng.uniform(-1, 1, n)
    want = central_jacobian(f, x)
    for target in ("numpy", "c"):
        got = SparseJacobian.of(f, (x,), [0], target=target)(x).toarray()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=f"{target} {ops} {where}")


def test_forward_stack_work_grows_with_the_output_not_its_square():
    """The compressed Jacobian of a stack of 12 pieces: its work stays within a few output-sized arrays (the
    derived tangent added 12 zero-filled arrays of the whole stack's size)."""
    x = np.linspace(0.1, 1.0, 212)
    sj = SparseJacobian.of(stacked, (x,), [0], target="c")
    out_bytes = 8 * sj.n_colours * 12 * 200
    assert work_bytes(sj.source, "gradc_fn_stacked_jacobian") <= 4 * out_bytes
    np.testing.assert_allclose(sj(x).toarray(), central_jacobian(stacked, x), rtol=1e-6, atol=1e-8)


def test_packed_matmul_operands_share_one_work_array():
    """Products with a transposed right operand pack it row-major: once per product, in an array the next
    product reuses (not one array per product)."""
    def chain(a, b):
        h = np.tanh(a @ b.T)
        h = np.tanh(h @ (b * 2.0).T)
        h = np.tanh(h @ np.sin(b).T)
        h = np.tanh(h @ np.cos(b).T)
        h = np.tanh(h @ (b + 1.0).T)
        h = np.tanh(h @ (b * b).T)
        return h.sum()

    a, b = np.ones((40, 64)) * 0.01, np.ones((64, 64)) * 0.02
    c = gradc.compile(chain, a, b, target="c")
    copies = c.c_source.count("copied row-major")
    arrays = re.findall(r"double (\w+_rhs\w*)\[\d+\];|double \*restrict (\w+_rhs\w*) = \(double \*\)\(work", c.c_source)
    assert copies >= 6 and len(arrays) < copies  # packed copies reuse arrays dead by then
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(40, 64)) * 0.3, rng.normal(size=(64, 64)) * 0.2
    np.testing.assert_allclose(c.grad(a, b), gradc.grad(chain)(a, b), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- the kept work buffer
def test_work_buffer_kept_between_calls_gives_fresh_results():
    """Each call writes before it reads: results from a kept buffer equal a fresh compile's, input by input, also
    for values built by scattering into zeros (which must be zeroed every call)."""
    def f(x):
        r = np.zeros((50, 50))
        r[::2, 1::3] = np.outer(np.sin(x[:25]), x[:17])
        return np.sum(r @ r.T * x[:50])

    rng = np.random.default_rng(0)
    c = gradc.compile(f, np.ones(60), target="c")
    for _ in range(3):
        x = rng.normal(size=60)
        np.testing.assert_allclose(c.grad(x), gradc.grad(f)(x), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(c.value_and_grad(x)[1], gradc.grad(f)(x), rtol=1e-10, atol=1e-12)


def test_work_buffer_is_never_shared_by_two_threads():
    def f(x):
        y = np.stack([np.sin(x * k) for k in range(1, 40)])
        return np.sum(y @ y.T)

    c = gradc.compile(f, np.ones(3000), target="c")
    inputs = [np.random.default_rng(k).normal(size=3000) for k in range(8)]
    want = [gradc.grad(f)(x) for x in inputs]
    got: dict = {}

    def run(k):
        for _ in range(3):
            got[k] = c.grad(inputs[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(8):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10)


def test_slow_path_keeps_its_buffer_too():
    """The ctypes path (keywords go there) reuses a buffer of at least the size asked, and gives right results."""
    def f(x):
        return np.sum(np.stack([np.sin(x * k) for k in range(1, 30)]) ** 2)

    c = gradc.compile(f, np.ones(4000), target="c")
    for k in range(3):
        x = np.random.default_rng(k).normal(size=4000)
        np.testing.assert_allclose(c.grad(x=x), gradc.grad(f)(x), rtol=1e-10)


# ---------------------------------------------------------------- the C unit of --mode jacobian --sparse
MODEL = '''\
import numpy as np


def chain(x: "f64[9]"):
    y = np.sin(x) * x
    return y[1:] * y[:-1] + np.cos(x[1:])


def energy(x: "f64[7]"):
    return np.sum((x[1:] - x[:-1] ** 2) ** 2) + np.sum(x ** 4)
'''


@pytest.mark.parametrize("func, mode, n", [("chain", "jacobian", 9), ("energy", "hessian", 7)])
def test_cli_sparse_c_unit_decompresses(tmp_path, func, mode, n):
    (tmp_path / "model.py").write_text(MODEL)
    result = run_cli("compile", f"model.py:{func}", "--mode", mode, "--sparse", "--target", "c", "--check", "-o",
                     "out.c", cwd=tmp_path)
    assert result.status == 0, result.stderr
    assert f"check: ok: {mode} agrees with finite differences" in result.stderr
    source = (tmp_path / "out.c").read_text()
    lib = ctypes.CDLL(build(source, f"sparse_{func}"))
    user: dict = {}
    exec(MODEL, user)
    x = np.linspace(0.3, 1.1, n)
    want = (gradc.jacobian if mode == "jacobian" else gradc.hessian)(user[func])(x)
    m = want.shape[0]
    pattern = lib[f"gradc_fn_{func}_{mode}_pattern"]
    indptr = np.zeros(m + 1, np.int64)
    nnz_guess = m * n
    indices = np.zeros(nnz_guess, np.int64)
    pattern(indptr.ctypes.data_as(ctypes.c_void_p), indices.ctypes.data_as(ctypes.c_void_p))
    nnz = int(indptr[-1])
    assert 0 < nnz < m * n  # sparse: fewer than every entry
    values = np.zeros(nnz)
    lib[f"gradc_fn_{func}_{mode}"](x.ctypes.data_as(ctypes.c_void_p), values.ctypes.data_as(ctypes.c_void_p))
    got = sp.csr_matrix((values, indices[:nnz], indptr), shape=(m, n))
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-10, atol=1e-12)
    assert f"gradc_fn_{func}_{mode}_pattern(int64_t *restrict indptr, int64_t *restrict indices)" in source


# ---------------------------------------------------------------- sums of products
@pytest.mark.parametrize("seed", range(8))
def test_sums_of_products_read_their_factors(seed):
    """``sum(a * b, axes)`` into an array: the product is never stored, and values and gradients agree with the
    NumPy function and the NumPy target (random shapes, axes, broadcasts, keepdims, mean)."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(2, 6, size=int(rng.integers(2, 4))))
    axis = int(rng.integers(0, len(shape)))
    keep = bool(rng.integers(0, 2))
    reduce = np.mean if rng.integers(0, 2) else np.sum
    w_shape = shape[1:] if rng.integers(0, 2) else shape

    def f(x, w):
        y = reduce(np.sin(x) * w, axis=axis, keepdims=keep)
        return np.sum(y ** 2)

    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    c = gradc.compile(f, x, w, target="c")
    assert "not stored, its factors multiplied in the sum below" in c.c_source
    np.testing.assert_allclose(c.forward(x, w), f(x, w), rtol=1e-12)
    np.testing.assert_allclose(c.grad(x, w), gradc.grad(f)(x, w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.grad(x, w), central_jacobian(lambda v: f(v, w), x)[0].reshape(shape), rtol=1e-6,
                               atol=1e-8)


def test_a_sum_to_one_number_keeps_its_running_sums():
    c = gradc.compile(lambda x: np.sum(np.sin(x) * np.cos(x)), np.ones((30, 40)), target="c")
    assert "not stored" not in c.c_source
