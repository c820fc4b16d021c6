"""Sparse Jacobians and Hessians: ``gradc.jacobian(f, sparse=True)`` and ``gradc.hessian(f, sparse=True)``.

Per signature (and per value of the integer inputs, which steer indexing), gradc reads the Jacobian's
sparsity pattern off the graph (``gradc.transforms.sparsity``; or takes the user's: ``sparse=pattern``,
a ``scipy.sparse`` matrix or boolean array, checked for shape), colours structurally orthogonal columns
(forward sweeps) or rows (reverse sweeps), whichever needs fewer colours (``gradc.transforms.colouring``),
emits the compressed Jacobian as one batched function of the arguments and a seed matrix
(``gradc.transforms.compressed``) on the NumPy or C target, and decompresses its result into a
``scipy.sparse.csr_matrix`` of shape (output entries, wrt entries): outputs and chosen arguments
flattened (C order) and concatenated. A Hessian is the sparse Jacobian of the gradient (forward over
reverse, one Hessian-vector product per colour), its pattern symmetrised.

>>> import numpy as np
>>> f = lambda x: np.sin(x[1:]) * x[:-1]
>>> J = SparseJacobian.of(f, (np.ones(4),), [0])
>>> J.n_colours, J.mode
(2, 'fwd')
>>> J(np.ones(4)).toarray().round(2)
array([[0.84, 0.54, 0.  , 0.  ],
       [0.  , 0.84, 0.54, 0.  ],
       [0.  , 0.  , 0.84, 0.54]])
"""
from __future__ import annotations

import zlib

import numpy as np

from gradc.errors import ArgumentError, ShapeError
from gradc.passes import optimize
from gradc.trace import def_location, trace
from gradc.transforms import reverse
from gradc.transforms.colouring import colour_columns, colour_rows
from gradc.transforms.compressed import compressed_graph
from gradc.transforms.sparsity import jacobian_pattern


def _scipy_sparse():
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is installed wherever the tests run
        raise ArgumentError("sparse=True returns scipy.sparse matrices and needs SciPy",
                            hint="pip install scipy, or use the dense Jacobian") from None
    return sp


def integer_key(args) -> int:
    """A checksum of the integer and boolean inputs' values: the pattern is recomputed when they change."""
    crc = 0
    for a in args:
        a = np.asarray(a)
        if a.dtype.kind in "biu":
            crc = zlib.crc32(np.ascontiguousarray(a).tobytes(), zlib.crc32(str(a.shape).encode(), crc))
    return crc


def user_pattern(pattern, shape):
    """The user's pattern as a boolean CSR matrix of ``shape``, or a clear error."""
    sp = _scipy_sparse()
    p = sp.csr_matrix(pattern, dtype=bool) if not sp.issparse(pattern) else pattern.tocsr().astype(bool)
    if p.shape != shape:
        raise ShapeError(f"the sparsity pattern given has shape {p.shape}; this Jacobian has shape {shape} "
                         "(output entries x wrt entries, flattened and concatenated)",
                         hint=f"pass a scipy.sparse matrix or boolean array of shape {shape}, or sparse=True")
    p.eliminate_zeros()
    return p


def _cheaper_colouring(pattern, hessian):
    """``(mode, colours)``: columns (forward sweeps) or rows (reverse sweeps), whichever needs fewer colours.

    A side's colours are at least its lower bound (the most nonzeros of one row, for columns; of one column,
    for rows): the side with the smaller bound is coloured first, the other only when its bound could win
    (colouring the rows of a Jacobian with a dense column builds a dense row intersection graph)."""
    row_bound = int(np.diff(pattern.tocsc().indptr).max(initial=0))
    column_bound = int(np.diff(pattern.indptr).max(initial=0))
    if hessian or column_bound <= row_bound:
        columns = colour_columns(pattern)
        if hessian or row_bound >= int(columns.max(initial=-1)) + 1:
            return "fwd", columns
        rows = colour_rows(pattern)
        return ("fwd", columns) if columns.max(initial=-1) <= rows.max(initial=-1) else ("rev", rows)
    rows = colour_rows(pattern)
    if column_bound >= int(rows.max(initial=-1)) + 1:
        return "rev", rows
    columns = colour_columns(pattern)
    return ("fwd", columns) if columns.max(initial=-1) <= rows.max(initial=-1) else ("rev", rows)


class SparseJacobian:
    """The sparse Jacobian of one traced function at one signature: pattern, colouring, compressed function.

    ``pattern`` (CSR booleans), ``colours`` (per column for ``mode == "fwd"``, per row for ``"rev"``),
    ``n_colours`` (the sweeps), ``compressed`` (the emitted function of the arguments and ``seed``),
    ``source`` (its module); calling it returns a ``scipy.sparse.csr_matrix``.
    """

    def __init__(self, graph, wrt, args, target="numpy", pattern=None, hessian=False):
        sp = _scipy_sparse()
        self.graph, self.wrt, self.target, self.hessian = graph, list(wrt), target, hessian
        swept = graph
        if hessian:
            reverse.check_differentiable_output(graph, what="hessian")
            swept = reverse.grad_graph(graph, self.wrt)
        n = sum(int(v.type.size) for v in graph.inputs if v.name in self.wrt)
        m = sum(int(o.type.size) for o in swept.outputs)
        if pattern is None:
            pattern = jacobian_pattern(swept, self.wrt, args)
            if hessian:
                pattern = (pattern + pattern.T).astype(bool).tocsr()
        else:
            pattern = user_pattern(pattern, (m, n))
        pattern.sort_indices()
        self.pattern, self.shape = pattern, (m, n)
        self.mode, self.colours = _cheaper_colouring(pattern, hessian)
        self.n_colours = int(self.colours.max(initial=-1)) + 1
        coo = pattern.tocoo()  # CSR order: rows, then columns sorted
        if self.mode == "fwd":  # B = seed @ J.T: B[colour of column, row]
            self.take = self.colours[coo.col] * m + coo.row
            seed = np.zeros((self.n_colours, n))
            seed[self.colours, np.arange(n)] = 1.0
        else:  # C = seed @ J: C[colour of row, column]
            self.take = self.colours[coo.row] * n + coo.col
            seed = np.zeros((self.n_colours, m))
            seed[self.colours, np.arange(m)] = 1.0
        self.seed = seed
        self.compressed, self.source = self._emit(swept, target)
        self._sp = sp

    @classmethod
    def of(cls, f, args, argnums, target="numpy", pattern=None, hessian=False) -> "SparseJacobian":
        """For a Python function ``f`` at ``args``, differentiated in the parameters at ``argnums``."""
        graph = trace(f, *args)
        wrt = [graph.params[a] for a in argnums]
        for name in wrt:
            v = next((v for v in graph.inputs if v.name == name), None)
            if v is None or not v.type.is_float:
                raise ArgumentError(f"{name} is not a float array input of {graph.name}; a sparse Jacobian is "
                                    "taken in float inputs", where=def_location(f),
                                    hint="choose float arguments with argnums, or pass float arrays")
        values = [a for a, p in zip(args, graph.params) if p in {v.name for v in graph.inputs}]
        return cls(graph, wrt, values, target, pattern, hessian)

    def _emit(self, swept, target):
        name = f"{self.graph.name}_compressed"
        self.compressed_graph = None
        if self.n_colours == 0:
            return None, ""
        cgraph = self.compressed_graph = optimize(compressed_graph(swept, self.wrt, self.n_colours, self.mode,
                                                                   name=name))
        doc = (f"Compressed {'Hessian' if self.hessian else 'Jacobian'} of {self.graph.name}: one "
               f"{'forward' if self.mode == 'fwd' else 'reverse'} sweep per row of seed.")
        if target == "c":
            from gradc.backends.c.unit import CUnit  # only the C target needs sympy and ctypes

            base = (self.graph.name, optimize(self.graph), f"Value of {self.graph.name}.", 0)
            unit = CUnit([base, (name, cgraph, doc, 0)], self.graph, self.wrt, "jacobian")
            return unit.jacobian, unit.source
        from gradc.backends.numpy.emit import Function, emit_module
        from gradc.backends.numpy.load import load_source

        source = emit_module([Function(name, cgraph, doc, returns=0)],
                             [f"Generated by gradc from {self.graph.origin} (compressed Jacobian, "
                              f"{self.n_colours} {'columns' if self.mode == 'fwd' else 'rows'} of seed). Do not edit."])
        return load_source(source, name)[name], source

    def values(self, *args) -> np.ndarray:
        """The pattern's nonzeros (CSR order) at ``args``: one compressed evaluation, then a gather."""
        if self.n_colours == 0:
            return np.zeros(0)
        compressed = np.asarray(self.compressed(*args, self.seed))
        return compressed.ravel()[self.take]

    def __call__(self, *args):
        data = self.values(*args)
        return self._sp.csr_matrix((data, self.pattern.indices, self.pattern.indptr), shape=self.shape)


def sparse_jacobian_fn(f, argnums, sparse, hessian=False, what="gradc.jacobian"):
    """The function behind ``jacobian(f, sparse=...)``/``hessian(f, sparse=...)``: a :class:`SparseJacobian` per
    signature and integer inputs' values, called. ``sparse`` is True or the user's pattern."""
    table = {}
    given = None if sparse is True else sparse
    if given is not None and not (hasattr(given, "shape") and hasattr(given, "nonzero")):
        raise ArgumentError(f"{what}: sparse= takes True or a sparsity pattern (a scipy.sparse matrix or a boolean "
                            f"array), not {type(sparse).__name__}", where=def_location(f),
                            hint="pass sparse=True to read the pattern off the program")
    chosen = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)

    def jac(*args, **kwargs):
        if kwargs:  # by keyword: in the parameters' order
            from gradc.trace import bind_arguments

            args = tuple(bind_arguments(f, args, kwargs).values())
        arrays = [np.asarray(a) if isinstance(a, (np.ndarray, np.generic, float, int)) else a for a in args]
        key = (tuple((getattr(a, "shape", None), getattr(a, "dtype", type(a))) for a in arrays), integer_key(
            [a for a in arrays if isinstance(a, np.ndarray)]))
        entry = table.get(key)
        if entry is None:
            entry = table[key] = SparseJacobian.of(f, tuple(arrays), chosen, pattern=given, hessian=hessian)
        return entry(*[a for a, p in zip(arrays, entry.graph.params) if p in {v.name for v in entry.graph.inputs}])

    jac.compiled = lambda *args: SparseJacobian.of(f, args, chosen, pattern=given, hessian=hessian)
    return jac


def compile_sparse(f, args, kwargs, selection, target, mode, sparse):
    """``gradc.compile(f, *args, mode="jacobian"|"hessian", sparse=...)``: a :class:`SparseJacobian` whose
    attribute named by the mode (and its call) takes the arguments that are arrays and returns CSR.

    >>> import numpy as np, gradc
    >>> c = gradc.compile(lambda x: x[1:] * x[:-1], np.ones(3), mode="jacobian", sparse=True)
    >>> c.jacobian(np.array([1.0, 2.0, 3.0])).toarray()
    array([[2., 1., 0.],
           [0., 3., 2.]])
    """
    from gradc.trace import bind_arguments
    from gradc.trace.selection import float_inputs

    if mode not in ("jacobian", "hessian"):
        raise ArgumentError(f"gradc.compile: sparse= goes with mode='jacobian' or mode='hessian', not {mode!r}",
                            where=def_location(f), hint="pass mode='jacobian' (or 'hessian'), or drop sparse=")
    if target not in ("numpy", "c"):
        raise ArgumentError(f"gradc.compile: sparse= emits target='numpy' or 'c', not {target!r}",
                            where=def_location(f), hint="use target='numpy' or target='c'")
    given = None if sparse is True else sparse
    bound = bind_arguments(f, args, kwargs)
    graph = trace(f, *args, **kwargs)
    names = float_inputs(selection, graph, def_location(f))
    values = [np.asarray(bound[v.name]) if v.name in bound else None for v in graph.inputs]
    sj = SparseJacobian(graph, list(names), values, target, given, hessian=mode == "hessian")
    setattr(sj, mode, sj.__call__)
    return sj
