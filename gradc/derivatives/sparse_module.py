"""The NumPy module of ``gradc compile --mode jacobian --sparse`` (or ``--mode hessian --sparse``).

FUNC, FUNC_compressed (the batched sweeps, a seed matrix as its last argument) and FUNC_<mode>, which
returns a ``scipy.sparse.csr_matrix``. The pattern (CSR ``indptr``/``indices``) and the colouring are
module data: each array zlib-compressed and base64-encoded on one line, decoded once at import (no array
literal grows with the problem), and the seed and the gather positions are rebuilt from them. The
pattern was read off the program from the argument types alone: an index taken from an integer input is
counted as reaching every entry (conservative; the library's ``gradc.jacobian(f, sparse=True)`` reads the
integer inputs' values and is sparser there).

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.derivatives.sparse import SparseJacobian
>>> g = trace(lambda x: x[1:] * x[:-1], np.ones(4))
>>> ns = {}
>>> exec(sparse_module_source(SparseJacobian(g, ["x"], [None]), "jacobian", ["test"]), ns)
>>> ns["lambda__jacobian"](np.arange(4.0)).toarray()
array([[1., 0., 0., 0.],
       [0., 2., 1., 0.],
       [0., 0., 3., 2.]])
"""
from __future__ import annotations

import base64
import zlib

import numpy as np

from gradc.backends.numpy.emit import Function, emit_module
from gradc.passes import optimize

_TAIL = '''

# ---------------------------------------------------------------- sparsity (module data)
# The pattern of the {title} ({m} x {n}, {nnz} nonzeros, CSR) and the colouring: {n_colours} {side} colours,
# one {sweep} sweep each. Each array is zlib-compressed and base64-encoded.
import base64 as _base64
import zlib as _zlib


def _unpack(text):
    return np.frombuffer(_zlib.decompress(_base64.b64decode(text)), dtype=np.int64)


_INDPTR = _unpack({indptr!r})
_INDICES = _unpack({indices!r})
_COLOURS = _unpack({colours!r})
_SHAPE = ({m}, {n})
_ROWS = np.repeat(np.arange({m}), np.diff(_INDPTR))
_SEED = np.zeros(({n_colours}, {width}))
_SEED[_COLOURS, np.arange({width})] = 1.0
_TAKE = {take}


def {name}({params}):
    """{title} of {base} as a scipy.sparse.csr_matrix ({m} x {n}): outputs and {wrt} flattened and concatenated."""
    import scipy.sparse

    values = {compressed}({params}, _SEED).ravel()[_TAKE]
    return scipy.sparse.csr_matrix((values, _INDICES, _INDPTR), shape=_SHAPE)
'''


def _packed(a) -> str:
    return base64.b64encode(zlib.compress(np.ascontiguousarray(a, dtype=np.int64).tobytes(), 9)).decode("ascii")


def sparse_module_source(sj, mode: str, header: list) -> str:
    """The module's source for the :class:`gradc.derivatives.sparse.SparseJacobian` ``sj``."""
    graph = sj.graph
    base = graph.name
    functions = [Function(base, optimize(graph), f"Value of {base}.",
                          returns=0 if len(graph.outputs) == 1 else tuple(range(len(graph.outputs))))]
    if sj.compressed_graph is None:
        raise ValueError(f"the {mode} of {base} is structurally zero: nothing to compile")
    cname = sj.compressed_graph.name
    functions.append(Function(cname, sj.compressed_graph, "The compressed derivative: one sweep per row of seed.",
                              returns=0))
    source = emit_module(functions, header)
    m, n = sj.shape
    take = "_COLOURS[_INDICES] * {m} + _ROWS" if sj.mode == "fwd" else "_COLOURS[_ROWS] * {n} + _INDICES"
    params = ", ".join(v.name for v in graph.inputs)
    title = "Hessian" if sj.hessian else "Jacobian"
    return source.rstrip("\n") + "\n" + _TAIL.format(
        title=title, m=m, n=n, nnz=sj.pattern.nnz, n_colours=sj.n_colours,
        side="column" if sj.mode == "fwd" else "row", sweep="forward" if sj.mode == "fwd" else "reverse",
        indptr=_packed(sj.pattern.indptr), indices=_packed(sj.pattern.indices), colours=_packed(sj.colours),
        width=n if sj.mode == "fwd" else m, take=take.format(m=m, n=n), name=f"{base}_{mode}", params=params,
        base=base, wrt=", ".join(sj.wrt), compressed=cname)
