"""``scipy.linalg.sqrtm`` on traced values: the Denman-Beavers iteration as a traced loop, differentiated by its rule.

The principal square root ``y`` of ``a`` is computed by a fixed number of Denman-Beavers
steps (``y <- (y + z^-1) / 2``, ``z <- (z + y^-1) / 2`` from ``y = a``, ``z = I``: quadratic
convergence for matrices without eigenvalues on the closed negative real axis), one ``scan``
equation in the graph. Its derivative is not that of the iteration but the rule of
``gradc.ops.linalg_sylvester``'s Sylvester equations (a ``custom_call``): ``da = dy y + y dy``.
The rule computes the root again from its operand, so that its own derivative (second order)
is this rule again. This module sits above the dispatch tables (it builds a loop), so it
registers itself with ``gradc.trace.scipy_dispatch`` when ``gradc.trace`` is imported.

A real matrix with an eigenvalue on the negative real axis has no real principal root
(SciPy returns a complex array, a dtype known only from the values), and there the real
iteration does not converge: the compiled code checks that the root squares back to the
matrix and raises ``LinAlgError`` when it does not, never returning a wrong root.

>>> import numpy as np
>>> root = sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]]))
>>> np.round(root, 12)
array([[2., 0.],
       [0., 3.]])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import user_location
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import linalg as la
from gradc.ops import linalg_api as lin
from gradc.ops import linalg_sylvester as sylvester
from gradc.ops import reduce as red
from gradc.ops.autodiff import Rule, custom_call, register_rule, stop_gradient
from gradc.ops.linalg_decomp import eye_like, mT
from gradc.ops.values import aval
from gradc.trace import checks
from gradc.trace.control import fori_loop
from gradc.trace.scipy_dispatch import _plain, _refuse, register

STEPS = 40  # enough for eigenvalues from 1e-10 to 1e10 (each step halves a far one, then doubles the digits)
TOLERANCE = 1e-6  # relative residual |Y Y - A| / max(|A|, |Y|^2) (Frobenius) above which no root was found
NO_REAL_ROOT = ("scipy.linalg.sqrtm: the iteration found no real square root of the matrix (an eigenvalue on or near "
                "the negative real axis, where SciPy returns a complex root); gradc's iteration has no root there")
NO_ROOT = ("scipy.linalg.sqrtm: the iteration found no principal square root of the matrix (an eigenvalue on or "
           "near the closed negative real axis)")


def sqrtm(A, disp=None, blocksize=None):
    """``scipy.linalg.sqrtm(A)`` (see the module docstring)."""
    if disp is not None or blocksize is not None:
        _refuse("scipy.linalg.sqrtm", "disp= or blocksize= (deprecated by SciPy)", "drop them")
    n = sylvester.check_square(A, "scipy.linalg.sqrtm")
    a = A if aval(A).dtype in ("f64", "f32", "c128", "c64") else ew.astype(A, "f64")
    if not n:
        return a
    start = stop_gradient(a)

    def step(i, yz):
        y, z = yz
        return ew.mul(ew.add(y, lin.inv(z)), 0.5), ew.mul(ew.add(z, lin.inv(y)), 0.5)
    root, _ = fori_loop(0, STEPS, step, (start, eye_like(start)), names=("root", "inverse_root"))
    _require_root(root, start)
    return custom_call(root, [], [a], rule=RULE)


def _require_root(root, a) -> None:
    """Raise ``LinAlgError`` (now, or in the compiled code) unless ``root @ root`` is ``a`` to :data:`TOLERANCE`."""
    def squares(x):  # sum |x|^2: a real number for real and complex entries alike
        return red.sum_(ew.square(ew.abs_(x)))
    residual = squares(ew.sub(la.matmul(root, root), a))
    scale = ew.maximum(squares(a), ew.square(squares(root)))
    failed = ew.logical_not(ew.less_equal(residual, ew.mul(scale, TOLERANCE ** 2)))  # NaN fails too
    message = NO_ROOT if aval(a).dtype in ("c128", "c64") else NO_REAL_ROOT
    if not isinstance(failed, Traced):
        if bool(failed):
            raise np.linalg.LinAlgError(message)
        return
    builder = checks._builder(failed)
    checks.record(builder, checks._atom_in(builder, failed),
                  {"exception": "LinAlgError", "args": (message,), "where": user_location()})


def _vjp(root_bar, residuals, xs):
    root = sqrtm(xs[0])
    return [sylvester.solve_sylvester(mT(root), mT(root), root_bar, what="scipy.linalg.sqrtm")]


def _jvp(tangents, residuals, xs, out):
    if tangents[0] is None:
        return None
    root = sqrtm(xs[0])
    return sylvester.solve_sylvester(root, root, tangents[0], what="scipy.linalg.sqrtm")


RULE = register_rule(Rule("scipy.linalg.sqrtm", vjp=_vjp, jvp=_jvp))
register("scipy.linalg.sqrtm", _plain("scipy.linalg.sqrtm", sqrtm))
