"""What every GradBench port's test needs: finite-difference references, tolerances, the C marker, known refusals."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def known_refusal(part: str, what: str, raises=gradc.GradcError):
    """A case gradc refuses today (issue 26, ``part``): strict, and only a gradc refusal counts.

    A wrong number raises AssertionError, which ``raises=GradcError`` does not accept: a wrong
    gradient can never pass as an expected failure. ``raises=TypeError`` is for options the API
    does not have yet (an unexpected keyword argument).
    """
    return pytest.mark.xfail(strict=True, raises=raises, reason=f"issue 26 {part}: {what}")


def fd_jacobian(f, args, argnum, h=1e-6):
    """Central differences of ``f(*args)`` (any array shape) in ``args[argnum]``: shape out.shape + arg.shape."""
    args = list(args)
    x = np.asarray(args[argnum], dtype=np.float64)
    out_shape = np.shape(f(*args))
    jac = np.zeros(out_shape + x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = h
        args[argnum] = x + step
        up = np.asarray(f(*args), dtype=np.float64)
        args[argnum] = x - step
        down = np.asarray(f(*args), dtype=np.float64)
        jac[(Ellipsis,) + i] = (up - down) / (2 * h)
    return jac


def assert_agrees(got, want, rtol=1e-6, atol=1e-8, what="gradient"):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
