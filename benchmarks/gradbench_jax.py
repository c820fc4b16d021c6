"""JAX's side of ``gradbench.py``: each GradBench problem written for JAX (CPU, float64, ``jax.jit`` of the
derivative), as a JAX user writes it: Python loops over static sizes (unrolled by ``jit``), ``lax.scan`` where
the eval's own JAX tool scans.

Each function takes the problem's inputs (NumPy) and returns a callable computing what the eval asks for,
as NumPy arrays, for ``gradbench.py`` to check against gradc's result and time beside it. The first call
compiles (``jit``): ``gradbench.py`` checks results before it times, so compile time is not in the timings.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

try:
    from benchmarks import gradbench_hand
except ImportError:  # run as a script: benchmarks/ is on sys.path
    import gradbench_hand

jax.config.update("jax_enable_x64", True)


def _ready(tree):
    return jax.tree_util.tree_map(lambda a: np.asarray(a.block_until_ready()), tree)


def lse(x):
    grad = jax.jit(jax.grad(lambda v: jnp.max(v) + jnp.log(jnp.sum(jnp.exp(v - jnp.max(v))))))
    jx = jnp.asarray(x)
    return lambda: _ready(grad(jx))


def llsq(x, n):
    ts = jnp.asarray(-1 + np.arange(n) * 2 / (n - 1))
    powers = ts[:, None] ** jnp.arange(x.shape[0], dtype=jnp.float64)[None, :]
    grad = jax.jit(jax.grad(lambda v: jnp.sum((jnp.sign(ts) - powers @ v) ** 2) / 2))
    jx = jnp.asarray(x)
    return lambda: _ready(grad(jx))


def det(A, ell):
    def det_of_minor(m):
        if m.shape[0] == 1:
            return m[0, 0]
        total = 0.0
        for j in range(m.shape[0]):
            minor = jnp.concatenate([m[1:, :j], m[1:, j + 1:]], axis=1)
            total = total + (-1) ** j * m[0, j] * det_of_minor(minor)
        return total
    grad = jax.jit(jax.grad(lambda flat: det_of_minor(flat.reshape(ell, ell))))
    jA = jnp.asarray(A)
    return lambda: _ready(grad(jA))


def kmeans(P, C):
    """dir = J / diag H, the diagonal as the jvp of the gradient along ones."""
    jP = jnp.asarray(P)

    def cost(c):
        d = (jP ** 2).sum(1)[None, :] + (c ** 2).sum(1)[:, None] - 2 * c @ jP.T
        return d.min(0).sum()

    @jax.jit
    def direction(c):
        jac, hes = jax.jvp(jax.grad(cost), (c,), (jnp.ones_like(c),))
        return jac / hes
    jC = jnp.asarray(C)
    return lambda: _ready(direction(jC))


def ode(x, s):
    def fun(v, y):
        return jnp.concatenate([v[:1], v[1:] * y[:-1]])

    def last(v):
        h = 2.0 / s

        def step(y, _):
            k1 = fun(v, y)
            k2 = fun(v, y + h / 2 * k1)
            k3 = fun(v, y + h / 2 * k2)
            k4 = fun(v, y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        y, _ = lax.scan(step, jnp.zeros_like(v), None, length=s)
        return y[-1]
    grad = jax.jit(jax.grad(last))
    jx = jnp.asarray(x)
    return lambda: _ready(grad(jx))


def gmm(data, size):
    """The objective with m = 0, gamma = 1 (as gradbench.py's gmm problem), gradients in alpha, mu, q, l."""
    d, k, n = size
    jx = jnp.asarray(data["x"])
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    from scipy.special import multigammaln
    p, m, gamma = d, 0, 1.0
    wishart_n = p + m + 1
    constant = k * (wishart_n * p * np.log(gamma / np.sqrt(2)) - multigammaln(0.5 * wishart_n, p))

    def objective(alpha, mu, q, l):  # noqa: E741 - the eval's name
        Qdiags, sum_qs = jnp.exp(q), jnp.sum(q, 1)
        Ls = jnp.zeros((k, d, d)).at[:, rows, cols].set(l)
        xc = jx[:, None, :] - mu[None]
        Lxc = Qdiags * xc + jnp.einsum("ijk,mik->mij", Ls, xc)
        inner = alpha + sum_qs - 0.5 * jnp.sum(Lxc ** 2, 2)
        prior = -jnp.sum(0.5 * gamma ** 2 * (jnp.sum(Qdiags ** 2, 1) + jnp.sum(l ** 2, 1)) - m * sum_qs) + constant
        return (-n * d * 0.5 * np.log(2 * np.pi) + jnp.sum(jax.nn.logsumexp(inner, 1))
                - n * jax.nn.logsumexp(alpha, 0) + prior)
    grad = jax.jit(jax.grad(objective, argnums=(0, 1, 2, 3)))
    args = tuple(jnp.asarray(data[name]) for name in ("alpha", "mu", "q", "l"))
    return lambda: _ready(grad(*args))


def lstm(args):
    def cell(weight, bias, hidden, c, inp):
        gates = jnp.concatenate((inp, hidden, inp, hidden)) * weight + bias
        hs = hidden.shape[0]
        c = c * jax.nn.sigmoid(gates[:hs]) + jax.nn.sigmoid(gates[hs:2 * hs]) * jnp.tanh(gates[3 * hs:])
        return jax.nn.sigmoid(gates[2 * hs:3 * hs]) * jnp.tanh(c), c

    def objective(w, w2, state, seq):
        def step(carry, pair):
            state, inp = carry
            gold = pair
            x, rows = inp * w2[0], []
            for i in range(0, state.shape[0], 2):
                h, c = cell(w[i], w[i + 1], state[i], state[i + 1], x)
                rows += [h, c]
                x = h
            y = x * w2[1] + w2[2]
            return (jnp.stack(rows), gold), jnp.sum(gold * (y - jnp.log(jnp.sum(jnp.exp(y)) + 2)))
        _, totals = lax.scan(step, (state, seq[0]), seq[1:])
        return -jnp.sum(totals) / ((seq.shape[0] - 1) * seq.shape[1])
    grad = jax.jit(jax.grad(objective, argnums=(0, 1)))
    jargs = tuple(jnp.asarray(a) for a in args)
    return lambda: _ready(grad(*jargs))


def ba(args):
    """One observation's 2 x 15 Jacobian block (reverse mode, as the eval's JAX tool)."""
    def rotate(rot, X):
        theta = jnp.sqrt(jnp.sum(rot ** 2))
        w = rot / theta
        return X * jnp.cos(theta) + jnp.cross(w, X) * jnp.sin(theta) + w * jnp.dot(w, X) * (1 - jnp.cos(theta))

    def reproj_err(cam, X, w, feat):
        Xcam = rotate(cam[:3], X - cam[3:6])
        p = Xcam[:2] / Xcam[2]
        rsq = jnp.sum(p ** 2)
        p = p * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return w * (p * cam[6] + cam[7:9] - feat)
    jac = jax.jit(jax.jacrev(reproj_err, argnums=(0, 1, 2)))
    jargs = tuple(jnp.asarray(a) for a in args)
    return lambda: _ready(jac(*jargs))


def ht(args, complicated):
    """The hand model's residuals' Jacobian in theta (and us), forward mode (26 or so columns)."""
    jac = jax.jit(jax.jacfwd(gradbench_hand.residuals(jnp, args, complicated)))
    params = jnp.asarray(args[0])
    return lambda: _ready(jac(params)).reshape(args[7].shape[0], 3, -1)
