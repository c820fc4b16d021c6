"""``torch.linalg.eig``/``eigvals`` (complex results, their ``grad_fn`` and gradients), torch's refusal of matrix
products of two dtypes, and of ``abs_`` on complex tensors, under torch and gradc.

    python tests/facade/spec/gen_eig_products.py torch > tests/facade/spec/eig_products.expected.txt  # torch 2.13.0
    python tests/facade/spec/gen_eig_products.py gradc.torch      # the same cases under gradc

A complex value is written as its ``[real, imag]`` pair. Eigenvector losses use ``|V|^2`` (invariant under each
eigenvector's phase, which torch requires of a differentiable loss).
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()


def v(x):
    """A tensor as ``[dtype, shape, values]`` (complex values as ``[re, im]``)."""
    flat = np.asarray(x.detach().resolve_conj().numpy()).reshape(-1)
    values = [[float(z.real), float(z.imag)] for z in flat] if np.iscomplexobj(flat) else [float(z) for z in flat]
    return [str(x.dtype).replace("torch.", ""), list(x.shape), values]


def _matrix(T, seed, shape, dtype="float64"):
    a = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(a, dtype=getattr(T, dtype), requires_grad=True)


def _eig_case(T, seed, shape, dtype, complex_input=False):
    a = _matrix(T, seed, shape, dtype)
    x = T.complex(a, a.flip(-1)) if complex_input else a
    w, V = T.linalg.eig(x)
    rng = np.random.default_rng(seed + 100)
    cw = T.tensor(rng.standard_normal(tuple(w.shape) + (2,)), dtype=a.dtype)
    cv = T.tensor(rng.standard_normal(tuple(V.shape)), dtype=a.dtype)
    loss = (w.real * cw[..., 0]).sum() + (w.imag * cw[..., 1]).sum() + (V.abs() ** 2 * cv).sum()
    loss.backward()
    return {"w": v(w), "V_abs": v(V.abs()), "grad_fn": [type(w.grad_fn).__name__, type(V.grad_fn).__name__],
            "grad": v(a.grad)}


@case
def eig_real_float64(T):
    return _eig_case(T, 1, (4, 4), "float64")


@case
def eig_real_float32(T):
    out = _eig_case(T, 2, (3, 3), "float32")
    return {"w_dtype": out["w"][0], "grad_fn": out["grad_fn"]}


@case
def eig_batched(T):
    return _eig_case(T, 3, (2, 3, 3), "float64")


@case
def eig_complex_input(T):
    return _eig_case(T, 4, (3, 3), "float64", complex_input=True)


@case
def eig_rotation(T):
    w, V = T.linalg.eig(T.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=T.float64))
    return {"w": v(w), "V": v(V)}


@case
def eigvals_values_and_grad(T):
    a = _matrix(T, 5, (4, 4))
    w = T.linalg.eigvals(a)
    (w.real.sum() + (w.imag ** 2).sum()).backward()
    return {"w": v(w), "grad_fn": type(w.grad_fn).__name__, "grad": v(a.grad)}


@case
def eig_repr(T):
    return [repr(T.linalg.eig(T.tensor([[2.0, 1.0], [0.0, 3.0]]))), repr(T.linalg.eigvals(T.eye(2)))]


@case
def eig_refusals(T):
    out = []
    for x in (T.ones(2, 3), T.ones(3), T.ones(2, 2, dtype=T.int64)):
        try:
            T.linalg.eig(x)
            out.append("ok")
        except Exception as e:  # noqa: BLE001 - recorded
            out.append(f"{type(e).__name__}: {e}")
    return out


_OTHER = {"double": lambda T, t: t.double(), "complex": lambda T, t: T.complex(t, t), "long": lambda T, t: t.long()}


@case
def matmul_two_dtypes(T):
    f, m, b = T.ones(2), T.ones(2, 2), T.ones(3, 2, 2)
    out = []
    for other in ("double", "complex", "long"):
        for name, x, y in (("1@1", f, f), ("2@1", m, f), ("1@2", f, m), ("2@2", m, m), ("3@2", b, m),
                           ("2@3", m, b), ("3@3", b, b), ("3@1", b, f), ("1@3", f, b)):
            for left, right in ((x, _OTHER[other](T, y)), (_OTHER[other](T, x), y)):
                try:
                    T.matmul(left, right)
                    out.append(f"{name} ok")
                except RuntimeError as e:
                    out.append(f"{name} {e}")
    return out


@case
def products_two_dtypes(T):
    f, m, b = T.ones(2), T.ones(2, 2), T.ones(3, 2, 2)
    calls = [lambda: T.mm(m, m.double()), lambda: m.double().mm(m), lambda: T.mv(m, f.double()),
             lambda: T.dot(f, f.double()), lambda: T.bmm(b, b.double()), lambda: m @ T.complex(m, m),
             lambda: T.addmm(m, m, m.double()), lambda: T.addmm(m.double(), m, m), lambda: T.addmm(m, m.double(), m),
             lambda: T.nn.functional.linear(m, m.double()), lambda: T.complex(m, m) @ T.complex(m, m).conj()]
    out = []
    for call in calls:
        try:
            out.append(str(call().dtype))
        except RuntimeError as e:
            out.append(str(e))
    return out


@case
def complex_abs_in_place(T):
    z = T.complex(T.tensor([3.0, 0.0]), T.tensor([4.0, -1.0]))
    try:
        z.abs_()
        refused = "ok"
    except RuntimeError as e:
        refused = str(e)
    r = T.tensor([-1.5, 2.0])
    r.abs_()
    return [refused, v(z), v(r)]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
