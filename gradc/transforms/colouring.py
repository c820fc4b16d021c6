"""Colourings of a Jacobian's columns (or rows) into structurally orthogonal groups, as ColPack does.

Two columns may share a colour when no row has a nonzero in both: the columns of one colour are then
summed in one forward sweep (the seed is their indicator) and every nonzero is read back from the
compressed Jacobian ``B = J @ S`` at ``B[row, colour[column]]``. This is a distance-1 colouring of the
column intersection graph (a distance-2 colouring of the bipartite row/column graph), found greedily
in a vertex ordering: ``largest_first`` (by degree in the intersection graph) or ``smallest_last``
(the reverse of repeatedly removing a vertex of least remaining degree, which tends to use fewer
colours); ``natural`` keeps column order. Rows are coloured the same way on the transpose, for
reverse sweeps. For a Hessian, gradc colours the columns of its pattern the same way (direct recovery,
one Hessian-vector product per colour); a star colouring would use the symmetry to need fewer colours.

>>> import numpy as np, scipy.sparse as sp
>>> pattern = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], bool))
>>> colour_columns(pattern).tolist()
[0, 1, 0, 0]
"""
from __future__ import annotations

import heapq

import numpy as np

ORDERINGS = ("largest_first", "smallest_last", "natural")


def intersection_graph(pattern):
    """The column intersection graph of a boolean pattern: columns adjacent when they share a row (CSR, no loops)."""
    import scipy.sparse as sp  # only for sparse Jacobians

    p = sp.csr_matrix(pattern, dtype=np.int32)
    p.data[:] = 1
    g = (p.T @ p).tocsr()
    g.setdiag(0)
    g.eliminate_zeros()
    g.sort_indices()
    return g


def _order(graph, ordering: str) -> np.ndarray:
    degrees = np.diff(graph.indptr)
    n = len(degrees)
    if ordering == "natural":
        return np.arange(n)
    if ordering == "largest_first":
        return np.lexsort((np.arange(n), -degrees))  # ties in column order: deterministic
    if ordering == "smallest_last":
        return _smallest_last(graph, degrees)
    raise ValueError(f"unknown ordering {ordering!r}; use one of {', '.join(ORDERINGS)}")


def _smallest_last(graph, degrees) -> np.ndarray:
    left = degrees.astype(np.int64).copy()
    removed = np.zeros(len(left), bool)
    heap = [(int(d), v) for v, d in enumerate(left)]
    heapq.heapify(heap)
    removal = []
    while heap:
        d, v = heapq.heappop(heap)
        if removed[v] or d != left[v]:
            continue  # a stale entry
        removed[v] = True
        removal.append(v)
        nbrs = graph.indices[graph.indptr[v]:graph.indptr[v + 1]]
        nbrs = nbrs[~removed[nbrs]]
        left[nbrs] -= 1
        for u in nbrs.tolist():
            heapq.heappush(heap, (int(left[u]), u))
    return np.array(removal[::-1], dtype=np.int64)


def greedy_colouring(graph, ordering: str = "largest_first") -> np.ndarray:
    """Each vertex gets the least colour none of its already-coloured neighbours has."""
    n = graph.shape[0]
    colours = np.full(n, -1, dtype=np.int64)
    mark = np.full(n + 1, -1, dtype=np.int64)
    for v in _order(graph, ordering).tolist():
        used = colours[graph.indices[graph.indptr[v]:graph.indptr[v + 1]]]
        mark[used[used >= 0]] = v
        free = np.nonzero(mark[:len(used) + 1] != v)[0]
        colours[v] = free[0]
    return colours


def colour_columns(pattern, ordering: str = "largest_first") -> np.ndarray:
    """A colour per column of ``pattern`` such that columns of one colour share no row."""
    return greedy_colouring(intersection_graph(pattern), ordering)


def colour_rows(pattern, ordering: str = "largest_first") -> np.ndarray:
    """A colour per row of ``pattern`` such that rows of one colour share no column (for reverse sweeps)."""
    return colour_columns(pattern.T.tocsr(), ordering)


def is_structurally_orthogonal(pattern, colours) -> bool:
    """Whether no row has nonzeros in two columns of one colour (the condition decompression relies on)."""
    import scipy.sparse as sp

    coo = sp.coo_matrix(pattern)
    pairs = np.stack([coo.row, colours[coo.col]], axis=1)
    return len(np.unique(pairs, axis=0)) == coo.nnz
