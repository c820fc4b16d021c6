"""``gradc compile --mode jacobian --sparse`` (and ``--mode hessian --sparse``): a module whose FUNC_<mode>
returns a ``scipy.sparse`` CSR matrix (``gradc.derivatives.sparse_module``).

``--target c`` emits the C of FUNC, FUNC_<mode> (the nonzeros in CSR order: the batched sweeps, their seed
made from the colouring, then the gather that decompresses them) and FUNC_<mode>_pattern (the CSR indptr and
indices): ``gradc.backends.c.sparse_unit``. ``--check`` compares FUNC_<mode> (made dense) with central finite
differences of FUNC.
"""
from __future__ import annotations

import numpy as np

from gradc.cli.check import run_check
from gradc.cli.load import CliError
from gradc.derivatives.sparse import SparseJacobian
from gradc.derivatives.sparse_module import sparse_module_source
from gradc.stages import stage


def compile_sparse(job, args, header, interval):
    """``(status, outputs, notes)`` of ``gradc compile --mode jacobian|hessian --sparse``."""
    name, mode = job.graph.name, args.mode
    with stage("gradc.transforms", f"sparsity, colouring and compressed sweeps of {name} ({mode})"):
        sj = SparseJacobian(job.graph, job.wrt, [None] * len(job.graph.inputs), hessian=mode == "hessian")
    if sj.compressed_graph is None:
        raise CliError(f"the {mode} of {name} is structurally zero: nothing to compile", where="",
                       hint="check --wrt: the outputs do not depend on the arguments chosen")
    if args.target == "c":
        from gradc.backends.c.sparse_unit import sparse_functions
        from gradc.backends.c.unit import CUnit, unit_sources

        (base, base_doc), (values, values_doc), (pattern, pattern_doc) = sparse_functions(sj, mode)
        functions = [(name, base, base_doc, 0), (values.name, values, values_doc, 0)]
        more = [(pattern, pattern_doc, ["indptr", "indices"])]
        source, c_header = unit_sources(functions, job.graph, job.wrt, mode, header=header, max_trips=job.max_trips,
                                        more=more)
        status = 0
        if args.check:
            unit = CUnit(functions, job.graph, job.wrt, mode, max_trips=job.max_trips)
            status = run_check(job, _Dense(sj, getattr(unit, mode), unit.forward, mode), interval)
        outputs = [(args.dest, source)] + ([(args.header_dest, c_header)] if args.header_dest else [])
        notes = [args.header_note] if args.header_note else []
        return status, outputs, notes + [f"note: {sj.n_colours} colours ({sj.mode} sweeps); FUNC_{mode} writes the "
                                         f"{sj.pattern.nnz} nonzeros in CSR order, FUNC_{mode}_pattern the indptr "
                                         "and indices"]
    source = sparse_module_source(sj, mode, header)
    status = 0
    if args.check:
        from gradc.backends.numpy.load import load_source

        namespace = load_source(source, name)
        compressed = namespace[sj.compressed_graph.name]
        status = run_check(job, _Dense(sj, lambda *a: compressed(*a, sj.seed).ravel()[sj.take], namespace[name],
                                       mode), interval)
    return status, [(args.dest, source)], []


class _Dense:
    """The sparse unit as ``gradc.check`` reads a unit: FUNC_<mode> made dense in JAX's shapes."""

    def __init__(self, sj, nonzeros, forward, mode):
        if len(sj.wrt) != 1 or len(sj.graph.outputs) != 1:
            raise CliError("--check of --sparse takes one output and one --wrt argument", where="",
                           hint="check without --sparse, or compile with one --wrt")
        self.name, self.mode, self.wrt = sj.graph.name, mode, tuple(sj.wrt)
        self.forward = forward
        out_shape = sj.graph.outputs[0].type.shape if mode == "jacobian" else ()
        in_shape = next(v.type.shape for v in sj.graph.inputs if v.name == sj.wrt[0])

        def dense(*args):
            values = np.asarray(nonzeros(*args)).ravel()
            full = np.zeros(sj.shape)
            coo = sj.pattern.tocoo()
            full[coo.row, coo.col] = values
            return full.reshape(tuple(out_shape if mode == "jacobian" else in_shape) + tuple(in_shape))

        setattr(self, mode, dense)
