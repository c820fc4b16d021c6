"""Check every applicable gradc transform of a small function against central finite differences.

A corpus case is a plain function, example arguments and which argument is differentiated. The
reference is the function itself run by NumPy: its Jacobian by central differences (h = 1e-6, in
float64) in the chosen argument, flattened; pytrees (lists, tuples, dicts of arrays and floats)
are flattened here, independently of gradc's own tree utilities. Each transform is then compared:

``grad`` / ``value_and_grad``  the Jacobian's only row (outputs of size 1, whatever their shape)
``jvp``                        J v for a random tangent v
``vjp``                        J^T c for a random cotangent c
``hessian``                    second central differences (h = 1e-4), for cases of order 2
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable

import numpy as np
import pytest

import gradc

TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "hessian")


@dataclasses.dataclass
class Case:
    """One function of a corpus: ``fun(*args)``, differentiated in ``args[argnum]``."""

    name: str
    fun: Callable
    args: tuple
    argnum: int = 0
    order: int = 1  # 2: the Hessian too (scalar output, array or float argument)
    rtol: float = 1e-5
    atol: float = 1e-7
    skip: tuple = ()  # transforms that do not apply (e.g. a Hessian of a kinked function)

    def transforms(self) -> list[str]:
        out_size = ravel(self.fun(*self.args))[0].size
        names = ["jvp", "vjp"]
        if out_size == 1:
            names = ["grad", "value_and_grad"] + names
            if self.order == 2 and not isinstance(self.args[self.argnum], (list, tuple, dict)):
                names.append("hessian")  # (of an array or float argument: a pytree's Hessian nests)
        return [t for t in names if t not in self.skip]


# ---------------------------------------------------------------- pytrees, flattened here
def ravel(tree: Any) -> tuple[np.ndarray, Callable]:
    """``(flat float64 vector, unravel)`` for floats, arrays, lists, tuples and dicts (keys sorted)."""
    if isinstance(tree, dict):
        keys = sorted(tree)
        parts = [ravel(tree[k]) for k in keys]
        flat = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)

        def unravel_dict(v):
            out, start = {}, 0
            for k, (leaf, undo) in zip(keys, parts):
                out[k] = undo(v[start:start + leaf.size])
                start += leaf.size
            return out
        return flat, unravel_dict
    if isinstance(tree, (list, tuple)):
        parts = [ravel(t) for t in tree]
        flat = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
        kind = type(tree)

        def unravel_seq(v):
            out, start = [], 0
            for leaf, undo in parts:
                out.append(undo(v[start:start + leaf.size]))
                start += leaf.size
            return kind(out)
        return flat, unravel_seq
    array = np.asarray(tree, dtype=np.float64)
    if isinstance(tree, (float, int, np.floating)):  # a number stays one: `b = x; b += x` must not write into x
        return array.ravel().copy(), lambda v: type(tree)(v[0])
    shape = array.shape
    return array.ravel().copy(), lambda v: np.asarray(v, dtype=np.float64).reshape(shape)


def with_arg(args: tuple, argnum: int, value: Any) -> tuple:
    """``args`` with position ``argnum`` (negative counts from the end, as JAX's ``argnums``) replaced.

    >>> with_arg((1, 2, 3), -1, 9), with_arg((1, 2, 3), 0, 9)
    ((1, 2, 9), (9, 2, 3))
    """
    argnum = range(len(args))[argnum]  # an IndexError for a position past the end
    return args[:argnum] + (value,) + args[argnum + 1:]


def fd_jacobian(case: Case, h: float = 1e-6) -> np.ndarray:
    """Rows: flattened outputs; columns: the flattened chosen argument."""
    x, unravel = ravel(case.args[case.argnum])
    cols = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = h
        up = ravel(case.fun(*with_arg(case.args, case.argnum, unravel(x + step))))[0]
        down = ravel(case.fun(*with_arg(case.args, case.argnum, unravel(x - step))))[0]
        cols.append((up - down) / (2 * h))
    return np.stack(cols, axis=1) if cols else np.zeros((ravel(case.fun(*case.args))[0].size, 0))


def fd_hessian(case: Case, h: float = 1e-4) -> np.ndarray:
    x, unravel = ravel(case.args[case.argnum])

    def f(v):
        return float(ravel(case.fun(*with_arg(case.args, case.argnum, unravel(v))))[0][0])
    n = x.size
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = h
            ej[j] = h
            hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h * h)
    return hess


# ---------------------------------------------------------------- the checks
def _close(got, want, case, what, scale=1.0):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{case.name} {what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want, rtol=case.rtol * scale, atol=case.atol * scale,
                               err_msg=f"{case.name} {what}: WRONG against central differences")


def _same_structure(got, want, case, what):
    """gradc's result has the argument's structure (list stays list, dict stays dict)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{case.name} {what}: structure {got!r}"
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{case.name} {what}: structure {got!r}"


def check(case: Case, transform: str) -> None:
    """Raise AssertionError (a wrong result) or gradc's own error (a refusal)."""
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    x = case.args[case.argnum]
    flat_x, unravel_x = ravel(x)
    out = case.fun(*case.args)
    flat_out, unravel_out = ravel(out)
    jac = fd_jacobian(case)
    if transform == "grad":
        g = gradc.grad(case.fun, argnums=case.argnum)(*case.args)
        _same_structure(g, x, case, "grad")
        _close(ravel(g)[0], jac[0], case, "grad")
    elif transform == "value_and_grad":
        value, g = gradc.value_and_grad(case.fun, argnums=case.argnum)(*case.args)
        _close(ravel(value)[0], flat_out, case, "value", scale=1e-3)
        _close(ravel(g)[0], jac[0], case, "value_and_grad")
    elif transform == "jvp":
        v = rng.standard_normal(flat_x.size)
        chosen = range(len(case.args))[case.argnum]  # argnum may count from the end
        tangents = tuple(unravel_x(v) if i == chosen else None for i in range(len(case.args)))
        primal_out, tangent_out = gradc.jvp(case.fun, case.args, tangents, argnums=case.argnum)
        _close(ravel(primal_out)[0], flat_out, case, "jvp primal", scale=1e-3)
        _close(ravel(tangent_out)[0], jac @ v, case, "jvp tangent")
    elif transform == "vjp":
        c = rng.standard_normal(flat_out.size)
        primal_out, pullback = gradc.vjp(case.fun, *case.args, argnums=case.argnum)
        _close(ravel(primal_out)[0], flat_out, case, "vjp primal", scale=1e-3)
        ct = pullback(unravel_out(c))
        _same_structure(ct, x, case, "vjp")
        _close(ravel(ct)[0], jac.T @ c, case, "vjp cotangent")
    elif transform == "hessian":
        hess = gradc.hessian(case.fun, argnums=case.argnum)(*case.args)
        _close(np.reshape(hess, (flat_x.size, flat_x.size)), fd_hessian(case), case, "hessian", scale=100.0)
    else:
        raise ValueError(transform)


def parametrize(cases: list[Case], known: dict[str, tuple]) -> list:
    """One pytest param per (case, transform); ``known`` maps ``name/transform`` to (part, what fails).

    A refusal must be a gradc error (or a TypeError: a callable or option the API does not take yet);
    an entry's optional third element names another exception expected instead (itself a defect:
    the user gets no gradc message). A wrong number (AssertionError) is never an expected failure.
    """
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    params = []
    for case in cases:
        for transform in case.transforms():
            key = f"{case.name}/{transform}"
            marks = ()
            if key in known:
                part, what, *raises = known[key]
                marks = pytest.mark.xfail(strict=True, raises=tuple(raises) or (gradc.GradcError, TypeError),
                                          reason=f"issue 26 {part}: {what}")
            params.append(pytest.param(case, transform, id=key, marks=marks))
    unknown = set(known) - {p.id for p in params}
    assert not unknown, f"known refusals name no case: {sorted(unknown)}"
    return params
