"""GradBench's evals, ported to NumPy as their reference implementations write them, through gradc.

Each port (``gb_<eval>.py``) carries the eval's published definition, a small input generator and,
where GradBench publishes one, a closed form or reference answer. Each test takes what the eval
asks for (a gradient, a Jacobian, a Newton direction, the result of a nested descent) from gradc,
on the NumPy target and, once per eval, the C target, and compares it with central finite
differences of the port itself and with the closed form. Sizes are small: the point is the
program's shape (loops, recursion, item assignment, helpers, nested derivatives), not its size.

Cases gradc refuses today are marked ``known_refusal`` with the part of issue 26 that addresses
them: strict (they fail loudly once fixed), and only a gradc refusal counts as the expected
failure; a wrong number is always a failure.
"""
# ruff: noqa: E741 - `l` is the gmm eval's own name
from __future__ import annotations

import functools

import gb_ba
import gb_det
import gb_gmm
import gb_ht
import gb_kmeans
import gb_llsq
import gb_lse
import gb_lstm
import gb_ode
import gb_particle
import gb_saddle
import numpy as np
import pytest
from gb_gmm import gmm_objective
from gb_solver import within_gradbench_tolerance
from gradbench_checks import assert_agrees, fd_jacobian, needs_cc

import gradc


@pytest.fixture(autouse=True)
def _c_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


# ---------------------------------------------------------------- lse
@pytest.mark.parametrize("n", [1, 2, 7, 40])
@pytest.mark.parametrize("f", [gb_lse.logsumexp, gb_lse.logsumexp_loops], ids=["vectorised", "loops"])
def test_lse_gradient(f, n):
    x = gb_lse.generate(n, seed=n)["x"] * 200 - 100  # the eval's range: -100 to 100
    value, g = gradc.value_and_grad(f)(x)
    assert_agrees(value, f(x), what="value")
    assert_agrees(g, gb_lse.closed_form_gradient(x), rtol=1e-10, atol=1e-14, what="softmax")
    assert_agrees(g, fd_jacobian(f, (x,), 0), rtol=1e-5, atol=1e-8)


@needs_cc
def test_lse_c():
    x = gb_lse.generate()["x"]
    g = gradc.compile(gb_lse.logsumexp, x, target="c").grad(x)
    assert_agrees(g, gb_lse.closed_form_gradient(x), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- llsq
@pytest.mark.parametrize("size", [(2, 1), (5, 4), (9, 3)])
@pytest.mark.parametrize("f", [gb_llsq.llsq, gb_llsq.llsq_vectorised], ids=["loops", "vectorised"])
def test_llsq_gradient(f, size):
    data = gb_llsq.generate(size)
    x, n = data["x"], data["n"]
    if f is gb_llsq.llsq_vectorised and x.shape[0] == 1:
        pytest.skip("the vectorised form needs m >= 2 (a zero-column repeat)")
    value, g = gradc.value_and_grad(f, argnums=0)(x, n)
    assert_agrees(value, gb_llsq.llsq(x, n), what="value")
    assert_agrees(g, gb_llsq.closed_form_gradient(x, n), rtol=1e-10, atol=1e-12, what="closed form")
    assert_agrees(g, fd_jacobian(f, (x, n), 0), rtol=1e-6)


@needs_cc
def test_llsq_c():
    data = gb_llsq.generate()
    g = gradc.compile(gb_llsq.llsq, data["x"], data["n"], target="c").grad(data["x"], data["n"])
    assert_agrees(g, gb_llsq.closed_form_gradient(data["x"], data["n"]), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- det
def _det_as_written(A, ell):
    return gradc.grad(gb_det.det)(A, ell)


def _det_closure(A, ell):
    return gradc.grad(lambda flat: gb_det.det(flat, ell))(A)



@pytest.mark.parametrize("ell", [1, 2, 3, 4])
@pytest.mark.parametrize("how", [pytest.param(_det_as_written, id="as_written"),
                                 pytest.param(_det_closure, id="closure")])
def test_det_gradient(how, ell):
    A = gb_det.generate(ell)["A"]
    g = how(A, ell)
    assert_agrees(g, gb_det.closed_form_gradient(A, ell), rtol=1e-9, atol=1e-12, what="cofactors")
    assert_agrees(g, fd_jacobian(gb_det.det, (A, ell), 0), rtol=1e-6)


@needs_cc
@pytest.mark.parametrize("how", [pytest.param(gb_det.det, id="as_written"),
                                 pytest.param(lambda A, ell: gb_det.det(A, ell), id="closure")])
def test_det_c(how):
    A = gb_det.generate(4)["A"]
    g = gradc.compile(how, A, 4, target="c").grad(A, 4)
    assert_agrees(g, gb_det.closed_form_gradient(A, 4), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- kmeans
def _kmeans_dir_jvp(points, centroids):
    """The JAX tool's way: the Hessian's diagonal as the jvp of the gradient along ones."""
    gradient = gradc.grad(lambda cs: gb_kmeans.cost(points, cs))
    jac, hes = gradc.jvp(gradient, (centroids,), (np.ones_like(centroids),))
    return jac / hes


def _kmeans_dir_partial(points, centroids):
    """The PyTorch tool's way: a vjp and a Hessian-vector product of functools.partial(cost, points)."""
    cost = functools.partial(gb_kmeans.cost, points)
    _, pullback = gradc.vjp(cost, centroids)
    (jac,) = pullback(1.0)
    hes = gradc.hvp(cost, (centroids,), (np.ones_like(centroids),))
    return jac / hes


@pytest.mark.parametrize("size", [(1, 4, 1), (3, 12, 2), (4, 30, 3)])
@pytest.mark.parametrize("how", [pytest.param(_kmeans_dir_jvp, id="jvp_of_grad"),
                                 pytest.param(_kmeans_dir_partial, id="partial_vjp_hvp")])
def test_kmeans_dir(how, size):
    data = gb_kmeans.generate(size)
    points, centroids = data["points"], data["centroids"]
    g = gradc.grad(gb_kmeans.cost, argnums=1)(points, centroids)
    assert_agrees(g, fd_jacobian(gb_kmeans.cost, (points, centroids), 1), rtol=1e-6, atol=1e-8)
    assert_agrees(how(points, centroids), gb_kmeans.closed_form_dir(points, centroids), rtol=1e-9, atol=1e-12,
                  what="Newton direction")


@needs_cc
def test_kmeans_c():
    """The Newton direction from the C target's gradient and Hessian-vector product."""
    data = gb_kmeans.generate((4, 30, 3))
    points, centroids = data["points"], data["centroids"]
    grad = gradc.compile(gb_kmeans.cost, points, centroids, argnums=1, target="c").grad(points, centroids)
    hes = gradc.compile(gb_kmeans.cost, points, centroids, argnums=1, target="c", mode="hvp").hvp(
        points, centroids, np.ones_like(centroids))
    hes = hes[-1] if isinstance(hes, tuple) else hes
    assert_agrees(grad / hes, gb_kmeans.closed_form_dir(points, centroids), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- ode
@pytest.mark.parametrize("size", [(1, 1), (4, 3), (6, 5)])
@pytest.mark.parametrize("f", [gb_ode.last, gb_ode.primal_vectorised], ids=["loops", "vectorised"])
def test_ode_gradient(f, size):
    data = gb_ode.generate(size)
    x, s = data["x"], data["s"]
    value, g = gradc.value_and_grad(f)(x, s)
    assert_agrees(value, gb_ode.primal_vectorised(x, s), rtol=1e-12, what="value")
    assert_agrees(g, fd_jacobian(f, (x, s), 0), rtol=1e-6, atol=1e-9)


@needs_cc
def test_ode_c():
    data = gb_ode.generate()
    x, s = data["x"], data["s"]
    g = gradc.compile(gb_ode.last, x, s, target="c").grad(x, s)
    assert_agrees(g, gradc.grad(gb_ode.last)(x, s), rtol=1e-12, atol=1e-15, what="C against NumPy target")
    assert_agrees(g, fd_jacobian(gb_ode.last, (x, s), 0), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- lstm
LSTM_CASES = [pytest.param("numpy", (1, 2, 2), id="numpy-one_layer"),  # one layer: the state loop runs once
              pytest.param("numpy", (2, 4, 3), id="numpy-two_layers"),
              pytest.param("numpy", (3, 3, 2), id="numpy-three_layers"),
              pytest.param("c", (2, 4, 3), id="c-two_layers", marks=needs_cc)]


@pytest.mark.parametrize("target,size", LSTM_CASES)
def test_lstm_gradient(target, size):
    data = gb_lstm.generate(size)
    args = (data["main_params"], data["extra_params"], data["state"], data["sequence"])
    assert_agrees(gb_lstm.lstm_objective(*args), gb_lstm.objective_by_hand(*args), rtol=1e-12, what="port")
    compiled = gradc.compile(gb_lstm.lstm_objective, *args, argnums=(0, 1), target=target)
    value, (g_main, g_extra) = compiled.value_and_grad(*args)
    assert_agrees(value, gb_lstm.objective_by_hand(*args), rtol=1e-12, what="value")
    assert_agrees(g_main, fd_jacobian(gb_lstm.objective_by_hand, args, 0), rtol=1e-6, atol=1e-9)
    assert_agrees(g_extra, fd_jacobian(gb_lstm.objective_by_hand, args, 1), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- gmm
GMM_WRT = ("alpha", "mu", "q", "l")


def _gmm_closure(data):
    """The objective reached as a module's attribute inside a lambda."""
    x, m, gamma = data["x"], data["m"], data["gamma"]
    return gradc.value_and_grad(lambda alpha, mu, q, l: gb_gmm.gmm_objective(alpha, mu, q, l, x, m, gamma),
                                argnums=(0, 1, 2, 3))(*(data[k] for k in GMM_WRT))


def _gmm_closure_global(data):
    """The same, the objective reached by a global name (imported with ``from gb_gmm import``)."""
    x, m, gamma = data["x"], data["m"], data["gamma"]
    return gradc.value_and_grad(lambda alpha, mu, q, l: gmm_objective(alpha, mu, q, l, x, m, gamma),
                                argnums=(0, 1, 2, 3))(*(data[k] for k in GMM_WRT))


def _gmm_direct(data):
    """The objective itself traced; ``m`` and ``gamma`` Python ints (an int steers Python, a float is traced)."""
    data = dict(data, m=int(data["m"]), gamma=int(data["gamma"]))
    return gradc.value_and_grad(gmm_objective, argnums=(0, 1, 2, 3))(**data)


def _gmm_static(data):
    return gradc.value_and_grad(gb_gmm.gmm_objective, argnums=(0, 1, 2, 3), static_argnames=("m", "gamma"))(**data)


@pytest.mark.parametrize("size,m,gamma", [((2, 1, 3), 0, 1.0), ((3, 2, 4), 0, 1.0), ((4, 3, 5), 2, 2.0)])
@pytest.mark.parametrize("how", [pytest.param(_gmm_closure, id="closure_attribute"),
                                 pytest.param(_gmm_closure_global, id="closure_global"),
                                 pytest.param(_gmm_direct, id="direct"),
                                 pytest.param(_gmm_static, id="static_argnames")])
def test_gmm_gradient(how, size, m, gamma):
    data = gb_gmm.generate(size, m=m, gamma=gamma)
    value, grads = how(data)
    assert_agrees(value, gb_gmm.log_posterior(**data), rtol=1e-10, what="value against the definition")
    objective = functools.partial(gb_gmm.gmm_objective, x=data["x"], m=m, gamma=gamma)
    args = tuple(data[k] for k in GMM_WRT)
    for i, (name, g) in enumerate(zip(GMM_WRT, grads)):
        assert_agrees(g, fd_jacobian(objective, args, i), rtol=1e-6, atol=1e-7, what=f"d/d{name}")


@needs_cc
def test_gmm_c():
    data = gb_gmm.generate()
    args = tuple(data[k] for k in GMM_WRT) + (data["x"], 0, 1)
    grads = gradc.compile(gmm_objective, *args, argnums=(0, 1, 2, 3), target="c").grad(*args)
    for got, want in zip(grads, gradc.grad(gmm_objective, argnums=(0, 1, 2, 3))(*args)):
        assert_agrees(got, want, rtol=1e-11, atol=1e-13, what="C against NumPy target")


# ---------------------------------------------------------------- ba
def _ba_block(cam, X, w, feat):
    return gradc.jacobian(gb_ba.compute_reproj_err, argnums=(0, 1, 2))(cam, X, w, feat)


@pytest.mark.parametrize("rotation", ["ba1", "zero"])
def test_ba_block_jacobian(rotation):
    data = gb_ba.generate()
    cam, X, w, feat = data["cams"][0], data["X"][0], data["w"][0], data["feats"][0]
    if rotation == "zero":  # the other branch of rodrigues_rotate_point
        cam = cam.copy()
        cam[:3] = 0.0
    blocks = _ba_block(cam, X, w, feat)
    for i, block in enumerate(blocks):
        assert_agrees(block, fd_jacobian(gb_ba.compute_reproj_err, (cam, X, w, feat), i), rtol=1e-6, atol=1e-6,
                      what=f"block {i}")
    assert_agrees(gradc.grad(gb_ba.compute_w_err)(w), -2 * w, what="w_err")


@pytest.mark.parametrize("size", [(1, 1, 1), (2, 3, 4), (3, 2, 5)])
def test_ba_objective_jacobian(size):
    data = gb_ba.generate(size)
    args = (data["cams"], data["X"], data["w"], data["obs"], data["feats"])
    jacobians = gradc.jacobian(gb_ba.ba_objective, argnums=(0, 1, 2))(*args)
    for i, jac in enumerate(jacobians):
        assert_agrees(jac, fd_jacobian(gb_ba.ba_objective, args, i), rtol=1e-6, atol=1e-6, what=f"argument {i}")


@needs_cc
def test_ba_c():
    data = gb_ba.generate()
    args = (data["cams"][0], data["X"][0], data["w"][0], data["feats"][0])
    blocks = gradc.compile(gb_ba.compute_reproj_err, *args, argnums=(0, 1, 2), target="c",
                           mode="jacobian").jacobian(*args)
    for got, want in zip(blocks, _ba_block(*args)):
        assert_agrees(got, want, rtol=1e-11, atol=1e-11, what="C against NumPy target")


# ---------------------------------------------------------------- ht
HT_MODEL = ("nbones", "parents", "base_relatives", "inverse_base_absolutes", "base_positions", "weights")

def _ht_as_written(objective, data, first):
    args = [data[first]] + [data[k] for k in HT_MODEL] + [data[k] for k in _ht_rest(objective)]
    return gradc.jacobian(objective, argnums=0)(*args)


def _ht_closure(objective, data, first):
    rest = [data[k] for k in HT_MODEL] + [data[k] for k in _ht_rest(objective)]
    return gradc.jacobian(lambda params: objective(params, *rest))(data[first])


def _ht_static_array(objective, data, first):
    """The parent table left a NumPy array and declared static (keyed by its contents)."""
    args = [data[first]] + [data[k] for k in HT_MODEL] + [data[k] for k in _ht_rest(objective)]
    return gradc.jacobian(objective, argnums=0, static_argnums=(1, 2))(*args)


def _ht_static(objective, data, first):
    """As a JAX user writes it: the integer model data that steers Python (bone count, parent table) static."""
    args = [data[first]] + [data[k] for k in HT_MODEL] + [data[k] for k in _ht_rest(objective)]
    args[2] = tuple(int(p) for p in args[2])  # static arguments are hashable: the parent table as a tuple
    return gradc.jacobian(objective, argnums=0, static_argnums=(1, 2))(*args)


def _ht_rest(objective):
    if objective is gb_ht.hand_objective:
        return ("points", "correspondences")
    return ("points", "correspondences", "triangles")


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
@pytest.mark.parametrize("how", [pytest.param(_ht_closure, id="closure"),
                                 pytest.param(_ht_static_array, id="static_array"),
                                 pytest.param(_ht_static, id="static_argnums")])
def test_ht_jacobian(how, complicated):
    data = gb_ht.generate(complicated=complicated)
    objective = gb_ht.hand_objective_complicated if complicated else gb_ht.hand_objective
    first = "all_params" if complicated else "theta"
    jac = how(objective, data, first)
    args = [data[first]] + [data[k] for k in HT_MODEL] + [data[k] for k in _ht_rest(objective)]
    assert_agrees(jac, fd_jacobian(objective, args, 0), rtol=1e-6, atol=1e-7)


def test_ht_as_written_says_to_make_the_parent_table_static():
    """The parent table passed as a (traced) integer array indexes a Python list: the error names the line and
    the fix (JAX users meet the same: static_argnums)."""
    data = gb_ht.generate()
    with pytest.raises(gradc.GradcError) as err:
        _ht_as_written(gb_ht.hand_objective, data, "theta")
    text = str(err.value)
    assert "gb_ht.py:84" in text and "static_argnums" in text and "absolutes" in text, text


# ---------------------------------------------------------------- saddle and particle (nested descent)
OUTER = {"r": gradc.grad, "f": gradc.jacfwd}
SADDLE_INNER = {"r": gradc.grad(gb_saddle.objective, argnums=1), "f": gradc.jacfwd(gb_saddle.objective, argnums=1)}


@pytest.mark.parametrize("variant", ["rr", "ff", "fr", "rf"])
def test_saddle_published_answer(variant):
    result = gb_saddle.saddle(OUTER[variant[0]], SADDLE_INNER[variant[1]], gb_saddle.START)
    assert within_gradbench_tolerance(gb_saddle.EXPECTED, result), result


@pytest.mark.parametrize("inner", ["r", "f"])
def test_saddle_inner_derivative_only(inner):
    """The outer derivative by hand, the inner one by gradc: the published answer, to the last digits."""
    result = gb_saddle.saddle(gb_saddle.outer_grad_by_hand, SADDLE_INNER[inner], gb_saddle.START)
    assert_agrees(result, gb_saddle.EXPECTED, rtol=1e-9, atol=1e-15, what="saddle")


PARTICLE_INNER = {"r": gradc.grad(gb_particle.accel, argnums=1), "f": gradc.jacfwd(gb_particle.accel, argnums=1)}

@pytest.mark.parametrize("variant", ["rr", "ff", "fr", "rf"])
def test_particle_published_answer(variant):
    result = gb_particle.particle(OUTER[variant[0]], PARTICLE_INNER[variant[1]], gb_particle.W0)
    assert within_gradbench_tolerance(gb_particle.EXPECTED, result), result


def test_particle_inner_derivative_only():
    """The outer derivative by central differences, the inner one (the force) by gradc."""
    result = gb_particle.particle(gb_particle.central_difference_grad, PARTICLE_INNER["r"], gb_particle.W0)
    assert within_gradbench_tolerance(gb_particle.EXPECTED, result)
    assert abs(result - gb_particle.EXPECTED) < 1e-9


@pytest.mark.parametrize("w", [0.0, 0.2])
@pytest.mark.parametrize("variant", ["rr", "fr", "rf", "ff"])
def test_particle_cost_gradient(variant, w):
    """The derivative the outer descent takes, against central differences of the same cost."""
    def cost(v):
        return gb_particle.naive_euler(v[0], PARTICLE_INNER[variant[1]])
    g = OUTER[variant[0]](cost)(np.array([w]))
    want = gb_particle.central_difference_grad(lambda v: gb_particle.naive_euler(v[0], gb_particle.accel_grad_by_hand))(
        np.array([w]))
    assert_agrees(np.reshape(g, -1), want, rtol=1e-5, atol=1e-8)

