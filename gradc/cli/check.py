"""``gradc compile --check``: the emitted code against central finite differences on random inputs."""
from __future__ import annotations

import sys

import numpy as np

from gradc.ir.types import TensorType

EXIT_CHECK_FAILED = 3
CHECK_TOLERANCE = 1e-4


def random_value(t, rng):
    """A random argument for --check: floats in [0.5, 1.5] (inside log/sqrt domains), ints zero."""
    if not isinstance(t, TensorType):
        return t
    if t.is_float:
        value = rng.uniform(0.5, 1.5, size=t.shape).astype(t.np_dtype)
        return float(value) if t.shape == () and t.dtype == "f64" else value
    return np.zeros(t.shape, dtype=t.np_dtype)


def run_check(job, source=None, functions=None):
    """Run the emitted code on random inputs against central finite differences; print the largest error.

    ``source`` is an emitted NumPy module; ``functions`` a ``(forward, value_and_grad)`` pair instead
    (the compiled C library).
    """
    if functions is None:
        from gradc.backends.numpy.load import load_source

        namespace = load_source(source, job.func_name)
        functions = namespace[job.func_name], namespace[f"{job.func_name}_value_and_grad"]
    forward, grad = functions
    rng = np.random.default_rng(0)
    names = list(job.types)
    values = [random_value(job.types[n], rng) for n in names]
    _, grads = grad(*values)
    if len(job.wrt) == 1:
        grads = (grads,)
    worst_abs = worst_rel = 0.0
    checked = 0
    for name, g in zip(job.wrt, grads):
        i = names.index(name)
        t = job.types[name]
        h = 1e-6 if t.dtype == "f64" else 1e-2
        base = values[i]
        flat_count = int(np.prod(t.shape)) if t.shape else 1
        picks = range(flat_count) if flat_count <= 50 else sorted(rng.choice(flat_count, 50, replace=False))
        for k in picks:
            def shifted(delta, base=base, k=k, t=t):
                if t.shape == () and t.dtype == "f64":
                    return base + delta
                arr = np.array(base, copy=True)
                arr.reshape(-1)[k] += delta
                return arr
            plus = list(values)
            minus = list(values)
            plus[i], minus[i] = shifted(h), shifted(-h)
            fd = (float(forward(*plus)) - float(forward(*minus))) / (2 * h)
            got = float(np.asarray(g).reshape(-1)[k]) if t.shape else float(g)
            err = abs(got - fd)
            worst_abs = max(worst_abs, err)
            worst_rel = max(worst_rel, err / max(1.0, abs(fd)))
            checked += 1
    ok = worst_rel <= (CHECK_TOLERANCE if all(job.types[n].dtype == "f64" for n in job.wrt) else 1e-2)
    verdict = "ok" if ok else "MISMATCH"
    print(f"gradc: check: {verdict}: largest error {worst_abs:.3g} (relative {worst_rel:.3g}) over {checked} "
          f"gradient entries against central finite differences", file=sys.stderr)
    return 0 if ok else EXIT_CHECK_FAILED
