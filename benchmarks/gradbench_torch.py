"""PyTorch's side of ``gradbench.py``: each GradBench problem written for torch (CPU, float64, eager autograd).

Each function takes the problem's inputs (NumPy) and returns a callable computing what the eval asks
for, as NumPy arrays, for ``gradbench.py`` to check against gradc's result and time beside it.
"""
from __future__ import annotations

import gb_gmm
import numpy as np
import torch
from torch.func import jacrev

try:
    from benchmarks import gradbench_hand
except ImportError:  # run as a script: benchmarks/ is on sys.path
    import gradbench_hand

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)  # as NumPy's BLAS with OPENBLAS_NUM_THREADS=1 and the C target: one core each


def lse(x):
    tx = torch.tensor(x, requires_grad=True)

    def gradient():
        a = torch.max(tx)
        return torch.autograd.grad(a + torch.log(torch.sum(torch.exp(tx - a))), tx)[0].numpy()
    return gradient


def llsq(x, n):
    tx = torch.tensor(x, requires_grad=True)
    ts = torch.tensor(-1 + np.arange(n) * 2 / (n - 1))
    powers = ts[:, None] ** torch.arange(x.shape[0], dtype=torch.float64)[None, :]
    return lambda: torch.autograd.grad(torch.sum((torch.sign(ts) - powers @ tx) ** 2) / 2, tx)[0].numpy()


def det(A, ell):
    def det_of_minor(m):
        if m.shape[0] == 1:
            return m[0, 0]
        total = 0.0
        for j in range(m.shape[0]):
            minor = torch.cat([m[1:, :j], m[1:, j + 1:]], dim=1)
            total = total + (-1) ** j * m[0, j] * det_of_minor(minor)
        return total
    tA = torch.tensor(A, requires_grad=True)
    return lambda: torch.autograd.grad(det_of_minor(tA.reshape(ell, ell)), tA)[0].numpy()


def kmeans(P, C):
    """dir = J / diag H, the diagonal as the jvp of the gradient along ones."""
    tP, tC = torch.tensor(P), torch.tensor(C)

    def cost(c):
        d = (tP ** 2).sum(1)[None, :] + (c ** 2).sum(1)[:, None] - 2 * c @ tP.T
        return d.min(0).values.sum()

    def direction():
        jac, hes = torch.func.jvp(torch.func.grad(cost), (tC,), (torch.ones_like(tC),))
        return (jac / hes).numpy()
    return direction


def ode(x, s):
    tx = torch.tensor(x, requires_grad=True)

    def fun(y):
        return torch.cat([tx[:1], tx[1:] * y[:-1]])

    def gradient():
        h = 2.0 / s
        y = torch.zeros_like(tx)
        for _ in range(s):
            k1 = fun(y)
            k2 = fun(y + h / 2 * k1)
            k3 = fun(y + h / 2 * k2)
            k4 = fun(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return torch.autograd.grad(y[-1], tx)[0].numpy()
    return gradient


def gmm(data, size):
    """The PyTorch tool's objective (m = 0, gamma = 1), gradients in alpha, mu, q, l."""
    d, k, n = size
    targs = [torch.tensor(data[name], requires_grad=True) for name in ("alpha", "mu", "q", "l")]
    tx = torch.tensor(data["x"])
    cols = torch.repeat_interleave(torch.arange(d - 1), torch.arange(d - 1, 0, -1))
    rows = torch.cat([torch.arange(c + 1, d) for c in range(d - 1)])
    constant = gb_gmm.log_wishart_prior(k, d, 1.0, 0, np.zeros(k), np.zeros((k, d)), np.zeros((k, 0)))

    def gradient():
        alpha, mu, q, l = targs  # noqa: E741 - the eval's name
        Qdiags, sum_qs = torch.exp(q), torch.sum(q, 1)
        Ls = torch.zeros((k, d, d))
        Ls[:, rows, cols] = l
        xc = tx[:, None, :] - mu[None]
        Lxc = Qdiags * xc + torch.einsum("ijk,mik->mij", Ls, xc)
        inner = alpha + sum_qs - 0.5 * torch.sum(Lxc ** 2, 2)
        prior = -torch.sum(0.5 * (torch.sum(Qdiags ** 2, 1) + torch.sum(l ** 2, 1))) + constant
        value = (-n * d * 0.5 * np.log(2 * np.pi) + torch.sum(torch.logsumexp(inner, 1))
                 - n * torch.logsumexp(alpha, 0) + prior)
        return tuple(g.numpy() for g in torch.autograd.grad(value, targs))
    return gradient


def lstm(args):
    tw, tw2 = (torch.tensor(a, requires_grad=True) for a in args[:2])
    ts, tseq = torch.tensor(args[2]), torch.tensor(args[3])

    def cell(weight, bias, hidden, c, inp):
        gates = torch.cat((inp, hidden, inp, hidden)) * weight + bias
        hs = hidden.shape[0]
        c = c * torch.sigmoid(gates[:hs]) + torch.sigmoid(gates[hs:2 * hs]) * torch.tanh(gates[3 * hs:])
        return torch.sigmoid(gates[2 * hs:3 * hs]) * torch.tanh(c), c

    def gradient():
        state, total, inp = ts, 0.0, tseq[0]
        for t in range(tseq.shape[0] - 1):
            s2, x = state.clone(), inp * tw2[0]
            for i in range(0, state.shape[0], 2):
                s2[i], s2[i + 1] = cell(tw[i], tw[i + 1], state[i], state[i + 1], x)
                x = s2[i]
            state, y = s2, x * tw2[1] + tw2[2]
            total = total + torch.sum(tseq[t + 1] * (y - torch.log(torch.sum(torch.exp(y)) + 2)))
            inp = tseq[t + 1]  # the next step reads the observed character, as the eval's tools do
        loss = -total / ((tseq.shape[0] - 1) * tseq.shape[1])
        return tuple(g.numpy() for g in torch.autograd.grad(loss, (tw, tw2)))
    return gradient


def ba(args):
    """One observation's 2 x 15 Jacobian block (a rotation away from zero, as in the eval's data)."""
    targs = tuple(torch.tensor(a) for a in args)

    def rotate(rot, X):
        theta = torch.sqrt(torch.sum(rot ** 2))
        w = rot / theta
        return (X * torch.cos(theta) + torch.linalg.cross(w, X) * torch.sin(theta)
                + w * torch.dot(w, X) * (1 - torch.cos(theta)))

    def reproj_err(cam, X, w, feat):
        Xcam = rotate(cam[:3], X - cam[3:6])
        p = Xcam[:2] / Xcam[2]
        rsq = torch.sum(p ** 2)
        p = p * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return w * (p * cam[6] + cam[7:9] - feat)
    jac = jacrev(reproj_err, argnums=(0, 1, 2))
    return lambda: tuple(j.numpy() for j in jac(*targs))


def ht(args, complicated):
    """The hand model's residuals' Jacobian in theta (and us), by reverse mode one row at a time (torch.func)."""
    jac = jacrev(gradbench_hand.residuals(gradbench_hand.torch_ns(), args, complicated))
    params = torch.tensor(args[0])
    return lambda: jac(params).numpy().reshape(args[7].shape[0], 3, -1)


def _argmin(f, grad_f, x):
    """GradBench's descent (cpp/gradbench/gd.hpp) on torch tensors; the same path as gb_solver's."""
    fx, gx, i, eta = f(x), grad_f(x), 0, 1e-5
    while True:
        if torch.sqrt(torch.sum(gx * gx)) <= 1e-5:
            return x
        if i == 10:
            eta, i = eta * 2, 0
            continue
        x_prime = x - eta * gx
        if torch.sqrt(torch.sum((x - x_prime) ** 2)) <= 1e-5:
            return x
        fx_prime = f(x_prime)
        if fx_prime < fx:
            x, fx, gx, i = x_prime, fx_prime, grad_f(x_prime), i + 1
        else:
            eta, i = eta / 2, 0


def _reverse_grad(f):
    """Reverse mode that can itself be differentiated (create_graph), as nested descents need."""
    def gradient(x):
        with torch.enable_grad():
            x = x if x.requires_grad else x.detach().requires_grad_(True)
            return torch.autograd.grad(f(x), x, create_graph=True)[0]
    return gradient


def saddle(start):
    """The rr variant: reverse mode outside and inside."""
    start = torch.tensor(start)

    def objective(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def r1_cost(p1):
        def neg(p2):
            return -objective(p1, p2)
        return objective(p1, _argmin(neg, _reverse_grad(neg), start))

    def solve():
        r1 = _argmin(r1_cost, _reverse_grad(r1_cost), start).detach()

        def neg(p2):
            return -objective(r1, p2)
        r2 = _argmin(neg, _reverse_grad(neg), start).detach()
        return torch.cat([r1, r2]).numpy()
    return solve

