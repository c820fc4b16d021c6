"""``gradc compile --mode vjp|jvp|jacobian|hessian|hvp``: the unit of FUNC and FUNC_<mode>, and its ``--check``.

The functions come from ``gradc.derivatives.modes``. ``--check`` compares each mode with
finite differences of FUNC itself on random inputs, through random projections:
``<u, J v>`` for vjp, jvp and the Jacobian, ``<u, H v>`` (a mixed second difference) for
the Hessian and the Hessian-vector product, so no gradc code is in the reference.

>>> MODES
('grad', 'vjp', 'jvp', 'jacobian', 'hessian', 'hvp')
"""
from __future__ import annotations

import sys

import numpy as np

from gradc.cli.check import EXIT_CHECK_FAILED, random_value
from gradc.cli.load import Job
from gradc.derivatives.modes import MODES, SCALAR_MODES, mode_functions

__all__ = ["MODES", "compile_mode"]


def compile_mode(args, interval, header_lines):
    """``(status, outputs, notes)`` of ``gradc compile --mode MODE`` (any mode but grad)."""
    from gradc.backends.numpy.emit import Function, emit_module

    job = Job(args, scalar_output=args.mode in SCALAR_MODES)
    header = header_lines(job, args)
    functions = mode_functions(job.func, job.graph, job.examples, job.wrt, args.mode)
    if args.target == "c":
        from gradc.backends.c.unit import CUnit, unit_sources

        source, c_header = unit_sources(functions, job.graph, job.wrt, args.mode, header=header,
                                        max_trips=job.max_trips)
        status = 0
        if args.check:
            unit = CUnit(functions, job.graph, job.wrt, args.mode, max_trips=job.max_trips)
            status = check_mode(job, args.mode, (unit.forward, getattr(unit, args.mode)), interval)
        outputs = [(args.dest, source)] + ([(args.header_dest, c_header)] if args.header_dest else [])
        return status, outputs, [args.header_note] if args.header_note else []
    source = emit_module([Function(name, graph, doc, returns=returns) for name, graph, doc, returns in functions],
                         header)
    status = check_mode(job, args.mode, source, interval) if args.check else 0
    return status, [(args.dest, source)], []


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [np.asarray(value, dtype=np.float64)]


def check_mode(job, mode, code, interval, h=1e-5):
    """Run the emitted FUNC_<mode> on random inputs against finite differences of FUNC; print one verdict line.

    ``code`` is the emitted NumPy module's source, or the pair ``(FUNC, FUNC_<mode>)`` (the C target's).
    """
    from gradc.backends.numpy.load import load_source

    name = job.graph.name
    if isinstance(code, str):
        namespace = load_source(code, name)
        f, derivative = namespace[name], namespace[f"{name}_{mode}"]
    else:
        f, derivative = code
    rng = np.random.default_rng(0)
    types = {p: t for p, t in job.types.items()}
    values = {p: random_value(t, rng, interval) for p, t in types.items()}
    wrt = list(job.wrt)
    order = list(types)

    def at(shift):
        args = [values[p] + shift.get(p, 0.0) for p in order]
        return _flat(f(*args))

    def tangent():
        return {w: rng.standard_normal(np.shape(values[w])) for w in wrt}

    v = tangent()
    base = [values[p] for p in order]
    outs = at({})
    u = [rng.standard_normal(o.shape) for o in outs]

    def proj(vecs, out):  # <u, out> over every output
        return sum(float(np.sum(a * b)) for a, b in zip(vecs, out))

    def directional(vdict, step):  # d/dt <u, f(x + t v)> by central differences
        plus = at({w: step * vdict[w] for w in wrt})
        minus = at({w: -step * vdict[w] for w in wrt})
        return (proj(u, plus) - proj(u, minus)) / (2 * step)

    if mode in ("jvp", "vjp", "jacobian"):
        expected = directional(v, h)
        if mode == "jvp":
            dots = _flat(derivative(*base, *[v[w] for w in wrt]))[len(outs):]
            got = proj(u, dots)
        elif mode == "vjp":
            grads = _flat(derivative(*base, *[ui if ui.shape else float(ui) for ui in u]))[len(outs):]
            got = sum(float(np.sum(g * v[w])) for g, w in zip(grads, wrt))
        else:
            jacs = _flat(derivative(*base))
            got = 0.0
            k = 0
            for out_index, o in enumerate(outs):
                for w in wrt:
                    j = jacs[k].reshape(o.size, -1)
                    got += float(u[out_index].ravel() @ j @ np.ravel(v[w]))
                    k += 1
    else:  # hessian, hvp: <u, H v> by a mixed second difference of f
        uu = tangent()
        hh = 1e-4

        def value(a, b):
            return float(at({w: a * hh * uu[w] + b * hh * v[w] for w in wrt})[0])
        expected = (value(1, 1) - value(1, -1) - value(-1, 1) + value(-1, -1)) / (4 * hh * hh)
        if mode == "hvp":
            hv = _flat(derivative(*base, *[v[w] for w in wrt]))
            got = sum(float(np.sum(a * uu[w])) for a, w in zip(hv, wrt))
        else:
            blocks = _flat(derivative(*base))  # JAX's nesting, flattened: (wi, wj) in order
            pairs = [(wi, wj) for wi in wrt for wj in wrt]
            got = sum(float(np.ravel(uu[wi]) @ block.reshape(np.size(values[wi]), -1) @ np.ravel(v[wj]))
                      for (wi, wj), block in zip(pairs, blocks))
    if not (np.isfinite(got) and np.isfinite(expected)):
        print(f"gradc: check: NOT FINITE: {mode} gave {got}, finite differences {expected}; outside the function's "
              "domain?; sample elsewhere with --check-range LO,HI", file=sys.stderr)
        return EXIT_CHECK_FAILED
    error = abs(got - expected)
    tol = 1e-5 * (1.0 + abs(expected)) if mode in ("jvp", "vjp", "jacobian") else 1e-3 * (1.0 + abs(expected))
    if error > tol:
        print(f"gradc: check: MISMATCH: {mode}: a random projection gives {got!r}, finite differences of "
              f"{name} give {expected!r}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    print(f"gradc: check: ok: {mode} agrees with finite differences of {name} on a random projection "
          f"(error {error:.2e})", file=sys.stderr)
    return 0
