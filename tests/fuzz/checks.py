"""Checking a generated case on both targets against NumPy and central differences.

``check_numpy(case)`` compiles through the public ``gradc.compile``; ``check_c(cases)`` builds one C
unit for a batch (a build is ~1 s) from the same graphs. Each raises ``AssertionError`` naming the
case's source on a disagreement; a case gradc refuses with a ``GradcError`` is reported back (a clear
refusal is not a wrong result).
"""
from __future__ import annotations

import ctypes
import re

import numpy as np

import gradc


def tolerance(dtype):
    return 3e-4 if dtype == np.float32 else 1e-9


def assert_close(got, want, tol, what, case):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}\n{case!r}"
    scale = 1.0 + np.max(np.abs(want), initial=0.0)
    err = np.max(np.abs(got - want), initial=0.0)
    assert err <= tol * scale, f"{what}: error {err:.3g} (scale {scale:.3g})\n{case!r}\ngot {got}\nwant {want}"


def central_differences(f, args, i, h):
    x = np.asarray(args[i], np.float64)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        hi = [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a for a in args]
        lo = list(hi)
        hi[i], lo[i] = up, down
        g[j] = (np.sum(f(*hi)) - np.sum(f(*lo))) / (2 * h)  # (the sum: a program may return an array)
    return g


def check_fd(case, f, grads, what):
    """Gradients against central differences in float64; entries on a kink (steps disagree) are skipped."""
    tol = 3e-3 if case.dtype == np.float32 else 2e-5
    with np.errstate(all="ignore"):
        for i, g in zip(case.wrt, grads):
            coarse = central_differences(f, case.args, i, 1e-5)
            fine = central_differences(f, case.args, i, 1e-6)
            smooth = np.abs(coarse - fine) <= 1e-5 * (1.0 + np.abs(fine))
            g = np.asarray(g, np.float64)
            assert g.shape == fine.shape, f"{what} gradient {i}: shape {g.shape} != {fine.shape}\n{case!r}"
            scale = 1.0 + np.max(np.abs(fine), initial=0.0)
            bad = smooth & ~(np.abs(g - fine) <= tol * scale)  # a NaN gradient is bad too
            assert not np.any(bad), f"{what} gradient {i} vs finite differences\n{case!r}\ngot {g}\nwant {fine}"


def params(case):
    import inspect

    return list(inspect.signature(case.function()).parameters)


def check_numpy(case):
    """The NumPy target's value and gradient against NumPy and central differences."""
    f = case.function()
    wrt = tuple(params(case)[i] for i in case.wrt)
    compiled = gradc.compile(f, *case.args, wrt=wrt)
    kept = [a.copy() if isinstance(a, np.ndarray) else a for a in case.args]
    with np.errstate(all="ignore"):
        want = f(*kept)
        value, grads = compiled.value_and_grad(*case.args)
        forward = compiled.forward(*case.args)
    for a, k in zip(case.args, kept):  # compiled code never writes into its caller's arrays
        np.testing.assert_array_equal(a, k, err_msg=f"the NumPy target wrote into an argument\n{case!r}")
    grads = grads if isinstance(grads, tuple) else (grads,)
    tol = tolerance(case.dtype)
    assert_close(value, want, tol, "NumPy target value", case)
    assert_close(forward, want, tol, "NumPy target forward", case)
    check_fd(case, f, grads, "NumPy target")
    return grads


def check_c(cases):
    """Build the cases' value-and-gradient functions into one C unit and check each."""
    from gradc.backends.c.build import _CFunction, build, function_names, output_names
    from gradc.backends.c.emit import emit_c
    from gradc.passes import optimize
    from gradc.trace import trace
    from gradc.transforms import reverse as ad

    functions, graphs = [], []
    for n, case in enumerate(cases):
        graph = trace(case.function(), *case.args).replace(name=f"case{n}")
        names = [v.name for v in graph.inputs]
        wrt = [p for i, p in enumerate(params(case)) if i in case.wrt and p in names]
        vg = optimize(ad.value_and_grad_graph(graph, wrt, name=f"case{n}_value_and_grad"))
        value, bars = output_names(graph, wrt)
        _, grad_name = function_names(graph.name)
        functions.append((vg, grad_name, [value] + bars, "gradient"))
        graphs.append((grad_name, vg, names))
    source, _ = emit_c(functions, ["fuzz sweep"], "GRADC_SWEEP_H")
    lib = ctypes.CDLL(build(source, "sweep"))
    for case, (grad_name, vg, _) in zip(cases, graphs):
        work = int(re.search(rf"size_t {grad_name}_work_size\(void\)\n{{\n    return (\d+);", source).group(1))
        fn = _CFunction(lib, grad_name, vg, work)
        f = case.function()
        kept = [a.copy() if isinstance(a, np.ndarray) else a for a in case.args]
        with np.errstate(all="ignore"):
            outs = fn(*case.args)  # static parameters are passed too
            want = f(*kept)
        for a, k in zip(case.args, kept):
            np.testing.assert_array_equal(a, k, err_msg=f"the C target wrote into an argument\n{case!r}")
        assert_close(outs[0], want, tolerance(case.dtype), "C target value", case)
        check_fd(case, f, outs[1:], "C target")


def check_hvp(case, rng):
    """``gradc.hvp`` (forward over reverse) against central differences of the NumPy target's gradient
    (itself checked against central differences of the program) along a random direction (float64)."""
    if case.dtype != np.float64 or any(np.asarray(a).dtype == np.float32 for a in case.args):
        return
    f = case.function()
    names = params(case)
    wrt = tuple(names[i] for i in case.wrt)
    grad = gradc.compile(f, *case.args, wrt=wrt).grad
    tangents = tuple(rng.standard_normal(np.shape(a)) if i in case.wrt else None for i, a in enumerate(case.args))
    with np.errstate(all="ignore"):
        got = gradc.hvp(f, tuple(case.args), tangents, wrt=wrt)
    got = got if isinstance(got, tuple) else (got,)
    h = 1e-5

    def moved(sign):
        args = [np.asarray(a, np.float64) + sign * h * t if t is not None else a for a, t in zip(case.args, tangents)]
        args = [float(a) if np.ndim(a) == 0 and t is not None else a for a, t in zip(args, tangents)]
        with np.errstate(all="ignore"):
            g = grad(*args)
        return g if isinstance(g, tuple) else (g,)

    up, down = moved(1), moved(-1)
    tol = 2e-2 if case.dtype == np.float32 else 1e-4
    for n, (g, a, b) in enumerate(zip(got, up, down)):
        want = (np.asarray(a, np.float64) - np.asarray(b, np.float64)) / (2 * h)
        scale = 1.0 + np.max(np.abs(want), initial=0.0)
        assert np.shape(g) == np.shape(want), f"hvp {n}: shape {np.shape(g)} != {np.shape(want)}\n{case!r}"
        assert np.max(np.abs(np.asarray(g, np.float64) - want), initial=0.0) <= tol * scale, \
            f"hvp {n} vs differences of the gradient\n{case!r}\ngot {g}\nwant {want}"
