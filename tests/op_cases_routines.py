"""Per-op table entries for NumPy's routines and SciPy's signal/linear-algebra functions built as compositions.

(gradc/trace/routines_dispatch.py, arrangement_dispatch.py, gradc/ops/signal.py, linalg_sylvester.py; merged into
``op_cases``, see its docstring for the checks: VJP against central differences, the interpreter and the emitted
NumPy against NumPy, and tests/backends/c/test_c_op_table.py the C target.) No new primitive: each case names the
registry ops its composition must use. SciPy's calls are routed as ``gradc.grad`` routes them (``routed``).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.signal
from op_cases import Case, distinct, normal, positive, uniform

from gradc.trace.scipy_dispatch import rebind


def routed(fn):
    return rebind(fn)


def spd_matrix(n):
    def make(rng):
        a = rng.standard_normal((n, n))
        return a @ a.T / n + np.eye(n)
    return make


def band_storage(rows, n):
    """Band storage whose main diagonal (row ``rows // 2``) dominates: a well-conditioned banded matrix."""
    def make(rng):
        ab = rng.uniform(-0.5, 0.5, (rows, n))
        ab[rows // 2] += 4.0
        return ab
    return make


def sym_band_upper(rows, n):
    def make(rng):
        ab = rng.uniform(-0.3, 0.3, (rows, n))
        ab[-1] = rng.uniform(3.0, 4.0, n)  # upper storage: the main diagonal is the last row
        return ab
    return make


def with_fill_diagonal(a, v):
    b = a * 1.0
    np.fill_diagonal(b, v)
    return b


def with_put_along(a, v):
    b = a * 1.0
    np.put_along_axis(b, np.array([[2], [0], [1]]), v, axis=1)
    return b


def repeated_write(a, v):
    b = a * 1.0
    b[np.array([0, 2, 0, 1])] = v  # position 0 twice: the second write wins
    return b


DIFF_CASES = [
    Case("polyval", lambda p, x: np.polyval(p, x), [normal(4), normal(5)], ("mul", "add", "index")),
    Case("polyder_polyint", lambda p: np.polyint(np.polyder(p), k=0.5) * 1.0, [normal(4)], ("mul", "div")),
    Case("gradient_uniform", lambda a: np.gradient(a, 0.5), [normal(6)], ("concatenate", "sub")),
    Case("gradient_edge2_axis", lambda a: np.gradient(a, axis=1, edge_order=2), [normal(3, 5)], ("concatenate",)),
    Case("gradient_coords", lambda a, x: np.gradient(a, x, edge_order=2)[0] * 1.0,
         [normal(5), lambda rng: np.cumsum(rng.uniform(0.5, 1.5, 5))], ("concatenate", "div")),
    Case("gradient_traced_spacing", lambda a, h: np.stack(np.gradient(a, h, 2.0)), [normal(3, 4), positive()],
         ("concatenate", "div")),
    Case("ediff1d", lambda a: np.ediff1d(a, to_begin=a[0], to_end=[1.0, 2.0]), [normal(2, 3)], ("sub",)),
    Case("linspace_traced", lambda a: np.linspace(a[0], a[1], 5), [normal(2)], ("mul", "add", "concatenate")),
    Case("linspace_retstep_axis", lambda a, b: np.linspace(a, b, 4, endpoint=False, retstep=True, axis=1)[0],
         [normal(3), normal(3)], ("mul",)),
    Case("logspace_traced", lambda a: np.logspace(a[0], a[1], 4, base=2.0), [uniform(-1, 1, 2)], ("pow",)),
    Case("geomspace_traced", lambda a: np.geomspace(a[0], a[1], 5), [uniform(0.5, 3.0, 2)], ("pow", "log10")),
    Case("select", lambda a: np.select([a < -0.5, a > 0.5], [a * a, 2.0 * a], default=a), [distinct(6)],
         ("where",)),
    Case("broadcast_arrays", lambda a, b: np.add(*np.broadcast_arrays(a, b)) * np.broadcast_arrays(a, b)[0],
         [normal(3, 1), normal(4)], ("broadcast_to",)),
    Case("rot90", lambda a: np.rot90(a) + np.rot90(a, 2, axes=(1, 0)).T * 0.0 + np.rot90(a, -1)[::-1],
         [normal(3, 3)], ("transpose", "index")),
    Case("rot90_3d", lambda a: np.rot90(a, 3, axes=(0, 2)), [normal(2, 3, 4)], ("transpose",)),
    Case("fill_diagonal", with_fill_diagonal, [normal(4, 3), normal(3)], ("index_update",)),
    Case("put_along_axis", with_put_along, [normal(3, 4), normal(3, 1)], ("index_update",)),
    Case("repeated_write", repeated_write, [normal(3), normal(4)], ("index_update",)),
    Case("signal_convolve_full", routed(lambda a, v: scipy.signal.convolve(a, v)), [normal(6), normal(3)],
         ("index_add",)),
    Case("signal_convolve_same_2d", routed(lambda a, v: scipy.signal.convolve(a, v, mode="same")),
         [normal(4, 5), normal(2, 3)], ("index_add",)),
    Case("signal_correlate_valid_2d", routed(lambda a, v: scipy.signal.correlate(a, v, mode="valid")),
         [normal(4, 5), normal(2, 3)], ("index_add",)),
    Case("solve_sylvester", routed(lambda a, b, q: scipy.linalg.solve_sylvester(a, b, q)),
         [spd_matrix(3), spd_matrix(2), normal(3, 2)], ("solve",)),
    Case("solve_banded", routed(lambda ab, b: scipy.linalg.solve_banded((1, 2), ab, b)),
         [band_storage(4, 5), normal(5)], ("solve", "gather")),
    Case("solveh_banded", routed(lambda ab, b: scipy.linalg.solveh_banded(ab, b)),
         [sym_band_upper(2, 4), normal(4, 2)], ("solve", "gather")),
    Case("toeplitz_hankel", routed(lambda c, r: scipy.linalg.toeplitz(c, r) + scipy.linalg.hankel(c, r)[:, ::-1]),
         [normal(3), normal(3)], ("gather",)),
    Case("circulant_block_diag", routed(lambda c, m: scipy.linalg.block_diag(scipy.linalg.circulant(c), m, c[0])),
         [normal(3), normal(2, 2)], ("gather",)),
    Case("polymul_vander", lambda a, x: np.polymul(a, x) * np.vander(x, 2).sum(), [normal(3), normal(2)],
         ("index_add", "mul")),
    Case("sqrtm", routed(lambda a: scipy.linalg.sqrtm(a)), [spd_matrix(3)], ("custom_call",), rtol=1e-5),
]
NONDIFF_CASES: list = []
