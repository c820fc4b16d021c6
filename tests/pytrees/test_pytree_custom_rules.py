"""custom_vjp, custom_jvp and checkpoint with pytree arguments, results and residuals (JAX's conventions)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc import tree_util as tu


class State(NamedTuple):
    pos: Any
    vel: Any


def plain_step(p, s):
    pos = s.pos + p["dt"] * s.vel
    vel = s.vel - p["dt"] * p["k"] * np.sin(pos)
    return State(pos, vel)


def loss_of(step):
    def loss(p, s):
        out = step(p, s)
        return np.sum(out.pos ** 2) + np.sum(np.cos(out.vel) * p["k"])
    return loss


def point():
    return {"dt": 0.1, "k": np.array([1.5, 0.5])}, State(np.array([0.3, -0.4]), np.array([1.0, 2.0]))


def fd(loss, p, s):
    """Central differences of ``loss`` with respect to every leaf of ``(p, s)``."""
    leaves, treedef = tu.tree_flatten((p, s))
    out = []
    for i, leaf in enumerate(leaves):
        def along(v, i=i, is_array=isinstance(leaf, np.ndarray)):
            moved = list(leaves)
            moved[i] = v if is_array else float(v)
            return loss(*tu.tree_unflatten(treedef, moved))
        out.append(central_gradient(along, leaf))
    return tu.tree_unflatten(treedef, out)


def assert_tree_close(got, expected, rtol=1e-6, atol=1e-8):
    assert tu.tree_structure(got) == tu.tree_structure(expected)
    for g, e in zip(tu.tree_leaves(got), tu.tree_leaves(expected)):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def test_checkpoint_of_a_pytree_block():
    block = gradc.checkpoint(plain_step)
    p, s = point()
    got = gradc.grad(loss_of(block), wrt=(0, 1))(p, s)
    assert_tree_close(got, fd(loss_of(plain_step), p, s))
    assert_tree_close(got, gradc.grad(loss_of(plain_step), wrt=(0, 1))(p, s), rtol=1e-12)
    # forward mode over the block, and a Hessian, treat it like plain code
    H = gradc.hessian(loss_of(block))(p, s)
    H_plain = gradc.hessian(loss_of(plain_step))(p, s)
    assert_tree_close(H, H_plain, rtol=1e-10, atol=1e-12)


def test_custom_vjp_with_pytrees_everywhere():
    @gradc.custom_vjp
    def step(p, s):
        return plain_step(p, s)

    def fwd(p, s):
        out = plain_step(p, s)
        return out, {"p": p, "s": s, "pos": out.pos}

    def bwd(res, ct):
        p, s, pos = res["p"], res["s"], res["pos"]
        dt, k = p["dt"], p["k"]
        # d vel / d pos = -dt k cos(pos); pos = s.pos + dt s.vel
        ct_pos = ct.pos - dt * k * np.cos(pos) * ct.vel
        g_s = State(ct_pos, dt * ct_pos + ct.vel)
        g_p = {"dt": np.sum(s.vel * ct_pos) - np.sum(k * np.sin(pos) * ct.vel), "k": -dt * np.sin(pos) * ct.vel}
        return g_p, g_s

    step.defvjp(fwd, bwd)
    p, s = point()
    got = gradc.grad(loss_of(step), wrt=(0, 1))(p, s)
    assert_tree_close(got, fd(loss_of(plain_step), p, s))


def test_custom_vjp_none_cotangent_for_a_whole_argument():
    @gradc.custom_vjp
    def scale(p, x):
        return p["a"] * x

    scale.defvjp(lambda p, x: (p["a"] * x, (p["a"],)), lambda res, g: (None, res[0] * g))
    p, x = {"a": 3.0}, np.array([1.0, 2.0])
    gp, gx = gradc.grad(lambda p, x: np.sum(scale(p, x) ** 2), wrt=(0, 1))(p, x)
    assert gp == {"a": 0.0}  # the rule says none: zero, with the argument's structure
    np.testing.assert_allclose(gx, 2 * 9.0 * x)


def test_custom_jvp_with_a_dict_result():
    @gradc.custom_jvp
    def polar(z):
        return {"r": np.sqrt(z["x"] ** 2 + z["y"] ** 2), "t": np.arctan2(z["y"], z["x"])}

    def rule(primals, tangents):
        (z,), (dz,) = primals, tangents
        r2 = z["x"] ** 2 + z["y"] ** 2
        r = np.sqrt(r2)
        return polar(z), {"r": (z["x"] * dz["x"] + z["y"] * dz["y"]) / r,
                          "t": (z["x"] * dz["y"] - z["y"] * dz["x"]) / r2}

    polar.defjvp(rule)

    def loss(z):
        out = polar(z)
        return np.sum(out["r"] ** 2 * np.sin(out["t"]))

    z = {"x": np.array([1.0, -0.5]), "y": np.array([0.3, 2.0])}
    expected = fd(lambda z, _: loss(z), z, None)[0]
    assert_tree_close(gradc.grad(loss)(z), expected)
    out, dot = gradc.jvp(polar, (z,), ({"x": np.ones(2), "y": np.zeros(2)},))
    np.testing.assert_allclose(dot["r"], z["x"] / out["r"])


def test_custom_vjp_bwd_with_the_wrong_structure_is_named():
    @gradc.custom_vjp
    def f(p):
        return p["a"] * 2.0

    f.defvjp(lambda p: (p["a"] * 2.0, ()), lambda res, g: ({"b": g},))
    with pytest.raises(gradc.ArgumentError, match="bwd returns for argument 0 does not have the expected structure"):
        gradc.grad(lambda p: f(p))({"a": 1.0})
