"""torch.func and torch.autograd.functional of the facade: torch 2.13's printed answers, and finite differences.

The spec cases live in spec/gen_functional.py; their torch output is spec/functional.expected.txt
(regenerate: run the script with a torch 2.13 venv, see its docstring). The finite-difference
checks compute every reference in NumPy from a NumPy twin of the function.
"""
import importlib.util
import io
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import autograd_functional as AF  # torch.autograd.functional (the aliases: see the import test)
from gradc.facade.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

SPEC = pathlib.Path(__file__).parent / "spec"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_functional", SPEC / "gen_functional.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


def _expected():
    cases, name = {}, None
    for line in (SPEC / "functional.expected.txt").read_text().splitlines():
        if line.startswith("## "):
            name = line[3:]
            cases[name] = []
        else:
            cases[name].append(line)
    return {k: "\n".join(v) for k, v in cases.items()}


EXPECTED = _expected()


def test_spec_covers_every_case_once():
    names = [fn.__name__ for fn in GEN.CASES]
    assert len(names) == len(set(names)) and len(names) >= 40
    assert names == list(EXPECTED), "regenerate functional.expected.txt with torch (see gen_functional.py)"


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda fn: fn.__name__)
def test_matches_torch(fn):
    out = io.StringIO()
    GEN.run(torch, out, cases=[fn])
    assert out.getvalue() == f"## {fn.__name__}\n{EXPECTED[fn.__name__]}\n"


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_generator_script_under_gradc_prints_the_expected_file():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(SPEC / "gen_functional.py"), "--gradc"], capture_output=True, text=True,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (SPEC / "functional.expected.txt").read_text()


@pytest.mark.parametrize("code", [
    "import gradc.torch as torch; torch.func.grad; torch.func.vmap; torch.autograd.functional.jacobian",
    "from gradc.torch.func import vmap, grad, grad_and_value, jacrev, jacfwd, hessian, vjp, jvp",
    "import gradc.torch.autograd.functional as F; F.hvp; F.vhp; F.jvp; F.vjp; F.hessian",
    "from gradc.torch.autograd.functional import jacobian",
    "from gradc.torch import func; import gradc.facade.func as f; assert func is f",
])
def test_import_forms_in_fresh_interpreter(code):
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr


# ---- finite differences in NumPy -------------------------------------------------------------------------

H = 1e-5


def _fd_jacobian(f, x):
    """Central differences of NumPy ``f`` at ``x``: shape ``f(x).shape + x.shape``."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = H
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * H))
    out_shape = np.shape(f(x))
    return np.stack(cols, axis=-1).reshape(out_shape + x.shape)


def _fd_hessian(f, x):
    x = np.asarray(x, dtype=np.float64)
    n, h = x.size, 1e-4
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = h
            ej[j] = h
            ei, ej = ei.reshape(x.shape), ej.reshape(x.shape)
            hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h * h)
    return hess.reshape(x.shape + x.shape)


A = np.array([[0.3, -1.2, 0.5], [0.8, 0.1, -0.4]])


def map_np(x):
    return np.sin(x) * np.sum(x ** 2) + np.tanh(A @ x).sum()


def map_t(x):
    return x.sin() * (x ** 2).sum() + (torch.tensor(A) @ x).tanh().sum()


def loss_np(x):
    return np.log(np.sum(np.exp(A @ x))) + 0.5 * np.sum(x ** 4)


def loss_t(x):
    return (torch.tensor(A) @ x).exp().sum().log() + 0.5 * (x ** 4).sum()


X = np.array([0.4, -0.7, 1.3])


@pytest.mark.parametrize("how", ["af", "af_forward", "jacrev", "jacfwd"])
def test_jacobian_matches_finite_differences(how):
    x = torch.tensor(X)
    got = {"af": lambda: AF.jacobian(map_t, x),
           "af_forward": lambda: AF.jacobian(map_t, x, vectorize=True, strategy="forward-mode"),
           "jacrev": lambda: jacrev(map_t)(x),
           "jacfwd": lambda: jacfwd(map_t)(x)}[how]()
    np.testing.assert_allclose(got.numpy(), _fd_jacobian(map_np, X), rtol=1e-7, atol=1e-8)


def test_matrix_input_jacobian_matches_finite_differences():
    m = np.array([[1.0, 0.5, -0.3], [0.2, -1.0, 0.7]])

    def f_np(a):
        return np.tanh(a.T @ a)[:, :2]

    def f_t(a):
        return (a.t() @ a).tanh()[:, :2]
    ref = _fd_jacobian(f_np, m)
    assert ref.shape == (3, 2, 2, 3)
    for got in (AF.jacobian(f_t, torch.tensor(m)), jacrev(f_t)(torch.tensor(m)), jacfwd(f_t)(torch.tensor(m))):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("how", ["af", "af_forward_outer", "func", "jacrev_jacrev"])
def test_hessian_matches_finite_differences(how):
    x = torch.tensor(X)
    got = {"af": lambda: AF.hessian(loss_t, x),
           "af_forward_outer": lambda: AF.hessian(loss_t, x, vectorize=True, outer_jacobian_strategy="forward-mode"),
           "func": lambda: hessian(loss_t)(x),
           "jacrev_jacrev": lambda: jacrev(jacrev(loss_t))(x)}[how]()
    np.testing.assert_allclose(got.detach().numpy(), _fd_hessian(loss_np, X), rtol=1e-5, atol=1e-6)


def test_products_match_finite_difference_matrices():
    x, v = torch.tensor(X), np.array([0.5, -1.0, 2.0])
    jac, hess = _fd_jacobian(map_np, X), _fd_hessian(loss_np, X)
    np.testing.assert_allclose(AF.jvp(map_t, x, torch.tensor(v))[1].numpy(), jac @ v, rtol=1e-7)
    np.testing.assert_allclose(jvp(map_t, (x,), (torch.tensor(v),))[1].numpy(), jac @ v, rtol=1e-7)
    np.testing.assert_allclose(AF.vjp(map_t, x, torch.tensor(v))[1].numpy(), v @ jac, rtol=1e-7)
    np.testing.assert_allclose(vjp(map_t, x)[1](torch.tensor(v))[0].numpy(), v @ jac, rtol=1e-7)
    np.testing.assert_allclose(AF.hvp(loss_t, x, torch.tensor(v))[1].numpy(), hess @ v, rtol=1e-5)
    np.testing.assert_allclose(AF.vhp(loss_t, x, torch.tensor(v))[1].numpy(), v @ hess, rtol=1e-5)


def test_tuple_input_hessian_blocks_match_finite_differences():
    def f_np(z):
        return np.sum(np.sin(z[:2]) * z[2:] ** 2)

    z = np.array([0.3, 1.1, -0.6, 0.9])
    ref = _fd_hessian(f_np, z)
    got = AF.hessian(lambda x, y: (x.sin() * y ** 2).sum(), (torch.tensor(z[:2]), torch.tensor(z[2:])))
    blocks = np.block([[got[0][0].numpy(), got[0][1].numpy()], [got[1][0].numpy(), got[1][1].numpy()]])
    np.testing.assert_allclose(blocks, ref, rtol=1e-5, atol=1e-6)


def test_per_sample_gradients_match_finite_differences():
    xs = np.array([[1.0, 2.0, 0.5], [-0.3, 0.8, 1.5], [0.0, -1.0, 2.0], [0.7, 0.7, -0.7]])
    ys = np.array([1.0, 0.0, -1.0, 2.0])
    w = np.array([0.2, -0.5, 0.9])

    def loss(w, x, y):
        return ((x @ w).tanh() - y) ** 2

    got = vmap(grad(loss), in_dims=(None, 0, 0))(torch.tensor(w), torch.tensor(xs), torch.tensor(ys)).numpy()
    for i, (x, y) in enumerate(zip(xs, ys)):
        ref = _fd_jacobian(lambda w_, x=x, y=y: (np.tanh(x @ w_) - y) ** 2, w)
        np.testing.assert_allclose(got[i], ref, rtol=1e-7, atol=1e-9)


def test_third_order_matches_closed_form():
    x = 0.8
    third = -3 * np.sin(x) - x * np.cos(x)  # d^3/dx^3 of x sin x
    got = grad(grad(grad(lambda x: x.sin() * x)))(torch.tensor(x, dtype=torch.float64))
    np.testing.assert_allclose(got.item(), third, rtol=1e-12)
    leaf = torch.tensor([x], dtype=torch.float64, requires_grad=True)
    h = AF.hessian(lambda x: (x.sin() * x).sum(), leaf, create_graph=True)
    (d3,) = torch.autograd.grad(h.sum(), leaf)
    np.testing.assert_allclose(d3.item(), third, rtol=1e-12)


def test_vmap_of_a_zero_size_batch_is_a_clear_error():
    with pytest.raises(ValueError, match="mapped dimension has size 0"):
        vmap(lambda r: r * 2)(torch.zeros(0, 3))


def test_vmap_outputs_of_different_structure_is_a_clear_error():
    with pytest.raises(ValueError, match="returned outputs of different structures"):
        vmap(lambda r: (r,) if r.item() > 0 else r)(torch.tensor([1.0, -1.0]))
