"""``gradc compile --mode vjp|jvp|jacobian|hessian|hvp``: the unit of FUNC and FUNC_<mode>, and its ``--check``.

``--mode hvp`` adds FUNC_grad_and_hvp (the gradient and the Hessian-vector product from one call).

The functions come from ``gradc.derivatives.modes``. ``--check`` (``gradc.check``) compares the
value with FUNC run by NumPy and each mode with central finite differences of FUNC itself on
random inputs: vjp entry by entry, jvp and the Jacobian along a random direction (every output),
the Hessian and the Hessian-vector product by mixed second differences, so no gradc code is in
the reference.

>>> MODES
('grad', 'vjp', 'jvp', 'jacobian', 'hessian', 'hvp')
"""
from __future__ import annotations

from gradc.cli.check import run_check
from gradc.cli.load import Job
from gradc.derivatives.modes import MODES, SCALAR_MODES, grad_and_hvp_function, mode_functions
from gradc.stages import stage

__all__ = ["MODES", "compile_mode"]


def compile_mode(args, interval, header_lines):
    """``(status, outputs, notes)`` of ``gradc compile --mode MODE`` (any mode but grad)."""
    from gradc.backends.numpy.emit import Function, emit_module

    job = Job(args, scalar_output=args.mode in SCALAR_MODES)
    header = header_lines(job, args)
    name = job.graph.name
    if getattr(args, "sparse", False):
        from gradc.cli.sparse_mode import compile_sparse

        return compile_sparse(job, args, header, interval)
    with stage("gradc.transforms", f"differentiating {name} ({args.mode}, wrt {', '.join(job.wrt)})"):
        functions = mode_functions(job.func, job.graph, job.examples, job.wrt, args.mode)
        if args.mode == "hvp":  # and FUNC_grad_and_hvp: the gradient and the product from one call
            functions.append(grad_and_hvp_function(job.graph, job.wrt))
    if args.target == "c":
        from gradc.backends.c.unit import CUnit, more_functions, unit_sources

        with stage("gradc.backends.c", f"emitting C for {name} ({args.mode})"):
            source, c_header = unit_sources(functions[:2], job.graph, job.wrt, args.mode, header=header,
                                            max_trips=job.max_trips,
                                            more=more_functions(functions[2:], job.graph, job.wrt))
        status = 0
        if args.check:
            unit = CUnit(functions, job.graph, job.wrt, args.mode, max_trips=job.max_trips)
            status = check_mode(job, args.mode, unit, interval)
        outputs = [(args.dest, source)] + ([(args.header_dest, c_header)] if args.header_dest else [])
        return status, outputs, [args.header_note] if args.header_note else []
    with stage("gradc.backends.numpy", f"emitting {name} ({args.mode})"):
        source = emit_module([Function(fname, graph, doc, returns=returns) for fname, graph, doc, returns in functions],
                             header)
    status = check_mode(job, args.mode, _Loaded(source, job.graph.name, args.mode, job.wrt), interval) \
        if args.check else 0
    return status, [(args.dest, source)], []


def check_mode(job, mode, unit, interval):
    """--check of FUNC_<mode> (``unit``: a loaded unit, NumPy or C) against FUNC; print one verdict line."""
    return run_check(job, unit, interval)


class _Loaded:
    """The emitted NumPy unit, loaded: ``forward`` and the function named by the mode, as ``gradc.check`` reads them."""

    def __init__(self, source, name, mode, wrt):
        from gradc.backends.numpy.load import load_source

        namespace = load_source(source, name)
        self.name, self.mode, self.wrt = name, mode, tuple(wrt)
        self.forward = namespace[name]
        setattr(self, mode, namespace[f"{name}_{mode}"])
        if mode == "hvp":
            self.grad_and_hvp = namespace[f"{name}_grad_and_hvp"]
