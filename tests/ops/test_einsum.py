"""np.einsum and the contractions: every form of NumPy's einsum documentation against np.einsum itself,
with gradients against central differences (the op table has one case per lowering; this is the breadth)."""
from __future__ import annotations

import numpy as np
import pytest
from op_cases import make_loss

import gradc
from gradc.errors import GradcError
from gradc.trace import trace

R = np.random.default_rng(7)
A55, B5, C23, D3 = R.standard_normal((5, 5)), R.standard_normal(5), R.standard_normal((2, 3)), R.standard_normal(3)
T345, T432 = R.standard_normal((3, 4, 5)), R.standard_normal((4, 3, 2))
S3 = R.standard_normal((2, 3, 3))

# (subscripts, operands) from the numpy.einsum docstring's examples, plus batched/broadcast ellipsis forms
FORMS = [
    ("ii", [A55]), ("ii->i", [A55]), ("ij->i", [A55]), ("...j->...", [A55]), ("ji", [C23]), ("ij->ji", [C23]),
    ("ij,j", [A55, B5]), ("...j,j", [A55, B5]), ("i,i", [B5, B5]), ("ij,kj", [A55, A55]), ("i,j", [D3, B5]),
    ("ij,jk", [C23, R.standard_normal((3, 4))]), (",ij", [np.array(3.0), C23]), ("ijk,jil->kl", [T345, T432]),
    ("ki,jk->ij", [C23, R.standard_normal((4, 2))]), ("ki,...k->i...", [C23, R.standard_normal((4, 5, 2))]),
    ("k...,jk", [C23, R.standard_normal((4, 2))]), ("...ii->...i", [S3]), ("i...i", [S3.transpose(1, 0, 2)]),
    ("bn,anm,bm->ba", [R.standard_normal((2, 3)), R.standard_normal((4, 3, 5)), R.standard_normal((2, 5))]),
    ("...ij,...jk->...ik", [R.standard_normal((2, 1, 3, 4)), R.standard_normal((5, 4, 2))]),
    ("iij->j", [R.standard_normal((3, 3, 2))]), ("ijk->kji", [T345]), ("i->", [B5]), ("ij,ij->ij", [C23, C23]),
]


def _check(fn, operands, rtol=1e-7):
    """gradc's value equals NumPy's; its gradient equals central differences of NumPy's function."""
    expected = np.asarray(fn(*operands))
    ct = R.standard_normal(expected.shape)
    loss = make_loss(fn, len(operands))
    wrt = tuple(f"a{i}" for i in range(len(operands)))
    value, grads = gradc.value_and_grad(loss, wrt=wrt)(*operands, ct)
    np.testing.assert_allclose(value, np.sum(expected * ct), rtol=1e-12, atol=1e-12)
    for i, g in enumerate(grads):
        v = R.standard_normal(np.shape(operands[i]))

        def at(t, i=i, v=v):
            shifted = list(operands)
            shifted[i] = operands[i] + t * v
            return float(np.sum(np.asarray(fn(*shifted)) * ct))
        fd = (at(1e-6) - at(-1e-6)) / 2e-6
        assert abs(np.sum(g * v) - fd) <= rtol * (1 + abs(fd)), (i, np.sum(g * v), fd)


@pytest.mark.parametrize("subscripts,operands", FORMS, ids=[f[0] or "scalar" for f in FORMS])
def test_einsum_form_matches_numpy(subscripts, operands):
    _check(lambda *xs: np.einsum(subscripts, *xs), operands)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
def test_optimize_sets_the_contraction_order(optimize):
    a, b, c = R.standard_normal((2, 30)), R.standard_normal((30, 40)), R.standard_normal((40, 3))
    _check(lambda x, y, z: np.einsum("ij,jk,kl->il", x, y, z, optimize=optimize), [a, b, c])
    g = trace(lambda x, y, z: np.einsum("ij,jk,kl->il", x, y, z, optimize=optimize), a, b, c)
    first = next(e for e in g.eqns if e.op == "matmul")
    # NumPy's path contracts the small (2x30)(30x40) pair... first either way here; the shapes tell which
    shapes = tuple(i.type.shape for i in first.inputs)
    expected = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)[0][1] if optimize else (0, 1)
    pair = {(0, 1): ((2, 30), (30, 40)), (1, 2): ((30, 40), (40, 3))}[tuple(sorted(expected))]
    assert shapes == pair


def test_explicit_path_is_followed():
    a, b, c = R.standard_normal((2, 3)), R.standard_normal((3, 4)), R.standard_normal((4, 5))
    g = trace(lambda x, y, z: np.einsum("ij,jk,kl->il", x, y, z, optimize=["einsum_path", (1, 2), (0, 1)]), a, b, c)
    first = next(e for e in g.eqns if e.op == "matmul")
    assert tuple(i.type.shape for i in first.inputs) == ((3, 4), (4, 5))
    assert not {e.op for e in g.eqns} - {"matmul", "reshape", "transpose"}  # lowered, no opaque op


def test_sublist_form():
    a, b = R.standard_normal((3, 3)), R.standard_normal((3, 4))
    _check(lambda x: np.einsum(x, [0, 0]), [a])
    _check(lambda x, y: np.einsum(x, [0, 1], y, [1, 2], [0, 2]), [a, b])
    _check(lambda x, y: np.einsum(x, [Ellipsis, 1], y, [1, Ellipsis]), [a, a.T.copy()])


@pytest.mark.parametrize("name,fn,operands", [
    ("tensordot_int", lambda a, b: np.tensordot(a, b), [R.standard_normal((3, 4, 2)), R.standard_normal((4, 2, 5))]),
    ("tensordot_0", lambda a, b: np.tensordot(a, b, 0), [D3, C23]),
    ("inner_nd", lambda a, b: np.inner(a, b), [T345, R.standard_normal((2, 5))]),
    ("vdot", lambda a, b: np.vdot(a, b), [C23, C23]),
    ("kron_mixed_ndim", lambda a, b: np.kron(a, b), [D3, T345]),
    ("trace_axes", lambda a: np.trace(a, -1, 1, 2), [T345]),
    ("diag_of_matrix", lambda a: np.diag(a, 2), [A55]),
    ("diagonal_offset", lambda a: np.diagonal(a, -1), [C23]),
    ("moveaxis_many", lambda a: np.moveaxis(a, [0, 1], [-1, -2]), [T345]),
    ("linalg_vecdot", lambda a, b: np.linalg.vecdot(a, b), [C23, C23]),
    ("matrix_transpose", lambda a: np.linalg.matrix_transpose(a), [T345]),
    ("dot_nd", lambda a, b: np.dot(a, b), [T345, R.standard_normal((2, 5, 3))]),
    ("dot_nd_vector", lambda a, b: np.dot(a, b), [T345, R.standard_normal(5)]),
    ("cross", lambda a, b: np.cross(a, b), [R.standard_normal((4, 3)), R.standard_normal(3)]),
    ("cross_axis", lambda a, b: np.cross(a, b, axis=0), [R.standard_normal((3, 2)), R.standard_normal((3, 2))]),
])
def test_contractions_match_numpy(name, fn, operands):
    _check(fn, operands)


@pytest.mark.parametrize("subscripts,operands,match", [
    ("ij,jk", [C23], "2 operand subscripts for 1 operands"),
    ("ij->ik", [C23], "output subscripts"),
    ("ij,ij", [C23, A55], "label 'i' has sizes 2 and 5"),
    ("...i->i", [T345], "does not name them"),
])
def test_bad_subscripts_are_clear_errors_at_the_users_line(subscripts, operands, match):
    def f(x):
        return np.sum(np.einsum(subscripts, x, *operands[1:]))
    with pytest.raises(GradcError, match=match) as info:
        gradc.grad(f)(operands[0])
    assert "test_einsum.py:" in str(info.value)


def test_einsum_path_of_traced_operands_is_numpys():
    a, b, c = R.standard_normal((2, 30)), R.standard_normal((30, 40)), R.standard_normal((40, 3))

    def f(x, y, z):
        path, _ = np.einsum_path("ij,jk,kl->il", x, y, z, optimize="optimal")
        return np.sum(np.einsum("ij,jk,kl->il", x, y, z, optimize=path))
    assert np.isclose(gradc.value_and_grad(f)(a, b, c)[0], f(a, b, c), rtol=1e-12)
