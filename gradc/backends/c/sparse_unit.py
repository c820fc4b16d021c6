"""The C unit of ``gradc compile --mode jacobian --sparse --target c`` (and ``--mode hessian``): the sparse
derivative decompressed in C, as CSR arrays.

Three functions under the C target's ABI (``unit``): FUNC (the value); FUNC_<mode>, writing the ``nnz``
nonzeros of the Jacobian (Hessian) in CSR order (row by row, columns ascending) into one caller buffer: one
compressed evaluation (one sweep per colour, the seed built in the function from the colouring), then a
gather; and FUNC_<mode>_pattern, writing the pattern's CSR ``indptr`` (``m + 1`` entries) and ``indices``
(``nnz``), which do not change from call to call. ``values``, ``indices`` and ``indptr`` are the three arrays of
``scipy.sparse.csr_matrix((values, indices, indptr), shape=(m, n))`` (or of a CSR matrix of any library).

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.derivatives.sparse import SparseJacobian
>>> sj = SparseJacobian(trace(lambda x: x[1:] * x[:-1], np.ones(4)), ["x"], [None])
>>> [g.name for g, *_ in sparse_functions(sj, "jacobian")]
['lambda_', 'lambda__jacobian', 'lambda__jacobian_pattern']
>>> g = sparse_functions(sj, "jacobian")[1][0]
>>> from gradc.ir.interpret import evaluate
>>> evaluate(g, np.arange(4.0))[0]
array([1., 0., 2., 1., 3., 2.])
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import Builder
from gradc.ir.graph import Const
from gradc.ir.interpret import evaluate
from gradc.ops import elementwise as ew
from gradc.ops.values import lift
from gradc.passes import optimize
from gradc.trace.tracer import Tracer


def values_graph(sj, name: str):
    """``(inputs...) -> nonzeros in CSR order``: the compressed sweeps with the seed made from the colouring (no
    seed literal: a colour per column is ``width`` integers, the seed ``colours x width`` doubles), then a
    gather at ``sj.take``."""
    cg = sj.compressed_graph
    b = Builder(taken={v.name for v in cg.inputs})
    inputs = [Tracer(b, b.input(v.name, v.type)) for v in cg.inputs[:-1]]
    width = sj.seed.shape[1]
    colours = lift(np.asarray(sj.colours, dtype=np.int64).reshape(1, width), inputs[0])
    rows = np.arange(sj.n_colours, dtype=np.int64).reshape(sj.n_colours, 1)
    seed = ew.astype(ew.equal(colours, rows), "f64")  # one-hot: seed[colour of j, j] = 1
    (compressed,) = evaluate(cg, *inputs, seed)
    values = compressed.reshape(-1)[np.asarray(sj.take, dtype=np.int64)]
    graph = b.graph(name, [values.atom], params=[v.name for v in cg.inputs[:-1]], static=sj.graph.static,
                    origin=sj.graph.origin)
    return optimize(graph)


def pattern_graph(sj, name: str):
    """``() -> (indptr, indices)``: the CSR pattern as constants of the unit."""
    b = Builder(taken=set())
    indptr = Const(np.asarray(sj.pattern.indptr, dtype=np.int64))
    indices = Const(np.asarray(sj.pattern.indices, dtype=np.int64))
    return b.graph(name, [indptr, indices], params=[])


def sparse_functions(sj, mode: str) -> list:
    """``(graph, doc)`` of FUNC, FUNC_<mode> and FUNC_<mode>_pattern (see the module docstring)."""
    if sj.compressed_graph is None:
        raise ValueError(f"the {mode} of {sj.graph.name} is structurally zero: nothing to compile")
    from gradc.backends.c.names import symbol

    base = sj.graph.name
    m, n = sj.shape
    nnz = sj.pattern.nnz
    what = "Hessian" if sj.hessian else "Jacobian"
    return [(optimize(sj.graph), f"Value of {base}."),
            (values_graph(sj, f"{base}_{mode}"),
             f"The {nnz} nonzeros of the {m} x {n} {what} of {base} in CSR order ({sj.n_colours} "
             f"{'forward' if sj.mode == 'fwd' else 'reverse'} sweeps, then a gather); its pattern: "
             f"{symbol(base + '_' + mode + '_pattern')}."),
            (pattern_graph(sj, f"{base}_{mode}_pattern"),
             f"The CSR pattern of {symbol(base + '_' + mode)}: indptr ({m + 1} entries: row i's nonzeros are "
             f"values[indptr[i]] to values[indptr[i + 1] - 1]) and indices (their {nnz} columns, ascending in each "
             "row).")]


__all__ = ["pattern_graph", "sparse_functions", "values_graph"]
