"""Sparse Jacobians of GradBench's ht (hand tracking, complicated) and ba (bundle adjustment, the whole problem)
against the dense Jacobians, central finite differences and the per-observation port; and the CLI's --sparse."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import gradc
from gradc.derivatives.sparse import SparseJacobian

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "corpus", "gradbench"))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))

import ba_whole  # noqa: E402
import gb_ba  # noqa: E402
import gb_ht  # noqa: E402
from cli_harness import run_cli  # noqa: E402


def central_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((np.ravel(f(x + e)) - np.ravel(f(x - e))) / (2 * h))
    return np.stack(cols, axis=1)


def ht_case(size):
    data = gb_ht.generate(size, complicated=True)
    parents = tuple(int(p) for p in data["parents"])

    def objective(all_params, base_relatives, inverse_base_absolutes, base_positions, weights, points,
                  correspondences, triangles):
        return gb_ht.hand_objective_complicated(all_params, 22, parents, base_relatives, inverse_base_absolutes,
                                                base_positions, weights, points, correspondences, triangles)

    names = ("all_params", "base_relatives", "inverse_base_absolutes", "base_positions", "weights", "points",
             "correspondences", "triangles")
    return objective, tuple(data[k] for k in names)


def test_ht_complicated_sparse_jacobian():
    objective, args = ht_case((40, 12, 20))
    got = gradc.jacobian(objective, sparse=True)(*args)
    dense = np.asarray(gradc.jacobian(objective)(*args)).reshape(got.shape)
    np.testing.assert_allclose(got.toarray(), dense, rtol=1e-10, atol=1e-12)
    fd = central_jacobian(lambda p: objective(p, *args[1:]), args[0])
    np.testing.assert_allclose(got.toarray(), fd, rtol=1e-5, atol=1e-6)
    sj = SparseJacobian.of(objective, args, (0,))
    # 2 barycentric coordinates per point touch only that point's 3 rows; the 26 pose parameters every row
    assert sj.mode == "fwd" and sj.n_colours <= 28 < got.shape[1]


def test_ba_whole_problem_matches_the_per_observation_port_and_differences():
    data = gb_ba.generate((3, 5, 9))
    args = (data["cams"], data["X"], data["w"], data["obs"], data["feats"])
    np.testing.assert_allclose(ba_whole.ba_residuals(*args), gb_ba.ba_objective(*args), rtol=1e-12)
    got = gradc.jacobian(ba_whole.ba_residuals, argnums=(0, 1, 2), sparse=True)(*args)
    assert sp.issparse(got) and got.shape == (27, 3 * 11 + 5 * 3 + 9)
    dense = np.concatenate([d.reshape(27, -1) for d in gradc.jacobian(ba_whole.ba_residuals, argnums=(0, 1, 2))(
        *args)], axis=1)
    np.testing.assert_allclose(got.toarray(), dense, rtol=1e-10, atol=1e-10)
    flat = np.concatenate([a.ravel() for a in args[:3]])

    def of_flat(v):
        cams, X, w = v[:33].reshape(3, 11), v[33:48].reshape(5, 3), v[48:]
        return ba_whole.ba_residuals(cams, X, w, args[3], args[4])

    fd = central_jacobian(of_flat, flat, h=1e-5)
    np.testing.assert_allclose(got.toarray(), fd, rtol=1e-5, atol=1e-4)
    # one observation's block equals the per-observation port's Jacobian
    j = 4
    cam, point = data["obs"][j]
    block = gradc.jacobian(gb_ba.compute_reproj_err, argnums=(0, 1, 2))(data["cams"][cam], data["X"][point],
                                                                         data["w"][j], data["feats"][j])
    rows = got.toarray()[2 * j:2 * j + 2]
    np.testing.assert_allclose(rows[:, 11 * cam:11 * cam + 11], block[0], rtol=1e-10)
    np.testing.assert_allclose(rows[:, 33 + 3 * point:36 + 3 * point], block[1], rtol=1e-10)
    np.testing.assert_allclose(rows[:, 48 + j], block[2], rtol=1e-10)


def test_ba_colours_stay_few_as_observations_grow():
    data = gb_ba.generate((4, 30, 120))
    args = (data["cams"], data["X"], data["w"], data["obs"], data["feats"])
    sj = SparseJacobian.of(ba_whole.ba_residuals, args, (0, 1, 2))
    assert sj.n_colours <= 15 < sj.shape[1]


MODEL = '''\
import numpy as np


def chain(x: "f64[9]"):
    y = np.sin(x) * x
    return y[1:] * y[:-1] + np.cos(x[1:])


def energy(x: "f64[7]"):
    return np.sum((x[1:] - x[:-1] ** 2) ** 2) + np.sum(x ** 4)
'''


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


@pytest.mark.parametrize("func, mode", [("chain", "jacobian"), ("energy", "hessian")])
def test_cli_sparse_module(work, func, mode):
    result = run_cli("compile", f"model.py:{func}", "--mode", mode, "--sparse", "--check", "-o", "out.py", cwd=work)
    assert result.status == 0, result
    assert f"check: ok: {mode} agrees with finite differences" in result.stderr
    source = (work / "out.py").read_text()
    assert "--sparse" in source.splitlines()[1]
    assert max(len(line) for line in source.splitlines()) < 400  # module data, not giant literals
    namespace: dict = {}
    exec(source, namespace)
    x = np.linspace(0.3, 1.1, 9 if func == "chain" else 7)
    got = namespace[f"{func}_{mode}"](x)
    assert sp.issparse(got)
    user: dict = {}
    exec(MODEL, user)
    want = (gradc.jacobian if mode == "jacobian" else gradc.hessian)(user[func])(x)
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-10, atol=1e-12)
    assert ("2 column colours" if func == "chain" else "3 column colours") in source


def test_cli_sparse_needs_a_jacobian_mode(work):
    result = run_cli("compile", "model.py:chain", "--mode", "jvp", "--sparse", cwd=work)
    assert result.status == 2 and "--sparse goes with --mode jacobian or --mode hessian" in result.stderr


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_compile_sparse_on_both_targets(target):
    from gradc.backends.c import build

    if target == "c" and build.find_compiler() is None:
        pytest.skip("no C compiler")
    data = gb_ba.generate((3, 6, 10))
    args = (data["cams"], data["X"], data["w"], data["obs"], data["feats"])
    c = gradc.compile(ba_whole.ba_residuals, *args, argnums=(0, 1, 2), mode="jacobian", sparse=True, target=target)
    got = c.jacobian(*args)
    want = gradc.jacobian(ba_whole.ba_residuals, argnums=(0, 1, 2), sparse=True)(*args)
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-12, atol=1e-12)
    h = gradc.compile(lambda x: np.sum(x[1:] * np.sin(x[:-1])), np.ones(6), mode="hessian", sparse=True,
                      target=target)
    x = np.linspace(0.1, 0.6, 6)
    np.testing.assert_allclose(h.hessian(x).toarray(), gradc.hessian(lambda v: np.sum(v[1:] * np.sin(v[:-1])))(x),
                               rtol=1e-12, atol=1e-14)
    with pytest.raises(gradc.ArgumentError, match="sparse= goes with mode='jacobian'"):
        gradc.compile(lambda v: np.sum(v), np.ones(3), mode="grad", sparse=True)
