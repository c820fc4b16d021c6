"""Contractions: ``einsum`` and friends, lowered to diagonals, sums, transposes, reshapes and matmul.

No op of its own: an einsum becomes the ops a person would write by hand (one
batched matmul per pair of operands), so its derivative, forward mode, batching and
C lowering come from theirs. The pairwise order is left to right, or
``np.einsum_path``'s when ``optimize=`` asks for one (NumPy's own choice of order).

>>> import numpy as np
>>> einsum("ij,jk->ik", np.eye(2), np.arange(4.0).reshape(2, 2))
array([[0., 1.],
       [2., 3.]])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as red
import gradc.ops.shape as sh
from gradc.errors import ShapeError, TraceError
from gradc.ir import dims
from gradc.ops.complex_numbers import conj
from gradc.ops.linalg import matmul
from gradc.ops.linalg_api import as_float
from gradc.ops.values import aval, broadcast_shapes, normalize_axes

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------- parsing
def _sublist_form(args):
    """``einsum(x, [0, 1], y, [1, 2], [0, 2])`` as a subscripts string and the operands."""
    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)
    operands, parts = list(args[0::2]), [letters(s) for s in args[1::2]]
    if len(args) % 2:
        return ",".join(parts) + "->" + letters(args[-1]), operands[:-1]
    return ",".join(parts), operands


def parse(subscripts, shapes):
    """The label tuples of the inputs and of the output; ellipsis dimensions become labels ``0``, ``1``, ..."""
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"np.einsum: {len(terms)} operand subscripts for {len(shapes)} operands",
                         hint="give one comma-separated term per operand")
    n_ell = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0)
    labels = []
    for term, shape in zip(terms, shapes):
        head, dots, tail = term.partition("...")
        if not (head + tail).isalpha() and head + tail:
            raise ShapeError(f"np.einsum: invalid subscript term {term!r}", hint="use letters and at most one ...")
        k = len(shape) - len(head) - len(tail) if dots else 0
        if k < 0 or (not dots and len(term) != len(shape)):
            raise ShapeError(f"np.einsum: term {term!r} does not match an operand of shape {tuple(shape)}",
                             hint="give one letter per axis")
        labels.append(tuple(head) + tuple(str(n_ell - k + j) for j in range(k)) + tuple(tail))
    ell = tuple(str(j) for j in range(n_ell))
    if arrow:
        head, dots, tail = rhs.partition("...")
        if n_ell and not dots:
            raise ShapeError(f"np.einsum: the inputs have ... axes but the output {rhs!r} does not name them",
                             hint="write ... in the output too (or sum those axes explicitly)")
        out = tuple(head) + (ell if dots else ()) + tuple(tail)
    else:
        counts = {}
        for ls in labels:
            for lab in ls:
                counts[lab] = counts.get(lab, 0) + 1
        out = ell + tuple(sorted(lab for lab, c in counts.items() if c == 1 and not lab.isdigit()))
    every = {lab for ls in labels for lab in ls}
    if len(set(out)) != len(out) or not set(out) <= every:
        raise ShapeError(f"np.einsum: output subscripts {rhs!r} repeat a label or name one no input has",
                         hint="name each output label once, from the inputs")
    return labels, out


# ---------------------------------------------------------------- steps
def _diagonals(x, labels):
    """Take the diagonal for every label repeated within one operand (``ii->i``)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        lab = next(lb for lb in labels if labels.count(lb) > 1)
        p = labels.index(lab)
        q = labels.index(lab, p + 1)
        x = diagonal(x, 0, p, q)
        labels = [lb for i, lb in enumerate(labels) if i not in (p, q)] + [lab]
    return x, labels


def _sum_out(x, labels, keep):
    axes = tuple(i for i, lab in enumerate(labels) if lab not in keep)
    if not axes:
        return x, labels
    return red.sum_(x, axes), [lab for lab in labels if lab in keep]


def _permute(x, labels, order):
    return sh.transpose(x, [labels.index(lab) for lab in order])


def contract_pair(x, lx, y, ly, keep):
    """``x`` and ``y`` contracted over their shared labels not in ``keep``: (result, its labels)."""
    x, lx = _sum_out(x, lx, set(ly) | keep)
    y, ly = _sum_out(y, ly, set(lx) | keep)
    batch = [lab for lab in lx if lab in ly and lab in keep]
    summed = [lab for lab in lx if lab in ly and lab not in keep]
    fx = [lab for lab in lx if lab not in ly]
    fy = [lab for lab in ly if lab not in lx]
    size = dict(zip(lx, aval(x).shape)) | dict(zip(ly, aval(y).shape))
    if not fx and not fy:  # a batched dot: multiply and sum, no tiny matrices
        prod = ew.mul(_permute(x, lx, batch + summed), _permute(y, ly, batch + summed))
        return (red.sum_(prod, tuple(range(len(batch), len(batch) + len(summed)))) if summed else prod), batch

    def count(labs):
        return dims.prod([size[lab] for lab in labs])

    lead = (count(batch),) if batch else ()
    xm = sh.reshape(_permute(x, lx, batch + fx + summed), lead + (count(fx), count(summed)))
    ym = sh.reshape(_permute(y, ly, batch + summed + fy), lead + (count(summed), count(fy)))
    out = matmul(xm, ym)
    return sh.reshape(out, tuple(size[lab] for lab in batch + fx + fy)), batch + fx + fy


def _path(subscripts, shapes, optimize):
    """Pairs of operand positions to contract in turn (each result goes to the end of the list)."""
    n = len(shapes)
    if optimize is False or n <= 2:
        return [(0, 1)] * (n - 1)
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        return [tuple(p) for p in optimize[1:]]
    dummies = [np.broadcast_to(np.zeros((), np.float64), s) for s in shapes]
    path, _ = np.einsum_path(subscripts, *dummies, optimize=optimize)
    return [tuple(p) for p in path[1:]]


def einsum(*args, optimize=False, **kwargs):
    """``np.einsum`` on traced operands (any form NumPy accepts: repeats, ellipsis, implicit output)."""
    if kwargs.get("out") is not None:
        raise TraceError("np.einsum(..., out=...) writes in place", hint="drop out= and assign the result")
    subscripts, operands = (args[0], list(args[1:])) if isinstance(args[0], str) else _sublist_form(args)
    if kwargs.get("dtype") is not None:
        from gradc.ir.types import dtype_name
        operands = [ew.astype(x, dtype_name(kwargs["dtype"])) for x in operands]
    operands = as_float(*operands)
    shapes = [aval(x).shape for x in operands]
    labels, out = parse(subscripts, shapes)
    operands, labels = _broadcast_ellipsis(operands, labels)
    sizes: dict = {}
    for x, ls in zip(operands, labels):
        for lab, d in zip(ls, aval(x).shape):
            if sizes.setdefault(lab, d) != d:
                raise ShapeError(f"np.einsum: label {lab!r} has sizes {sizes[lab]} and {d}",
                                 hint="axes with one label must have one length")
    items = [_diagonals(x, ls) for x, ls in zip(operands, labels)]
    canonical = ",".join("".join(_LETTERS[26 + int(c)] if c.isdigit() else c for c in ls) for _, ls in items)
    for i, j in _path(canonical, [aval(x).shape for x, _ in items], optimize):
        (x, lx), (y, ly) = items[i], items[j]
        rest = [it for k, it in enumerate(items) if k not in (i, j)]
        keep = set(out) | {lab for _, ls in rest for lab in ls}
        items = rest + [contract_pair(x, list(lx), y, list(ly), keep)]
    x, lx = _sum_out(*items[0], set(out))
    return _permute(x, list(lx), list(out))


def _broadcast_ellipsis(operands, labels):
    """Ellipsis axes of length 1 broadcast against the others (NumPy broadcasting within ``...``)."""
    ell = sorted({lab for ls in labels for lab in ls if lab.isdigit()}, key=int)
    if not ell:
        return operands, labels
    sizes = {lab: [] for lab in ell}
    for x, ls in zip(operands, labels):
        for lab, d in zip(ls, aval(x).shape):
            if lab.isdigit():
                sizes[lab].append(d)
    full = {lab: broadcast_shapes(*[(d,) for d in ds], what="np.einsum ... axes")[0] for lab, ds in sizes.items()}
    out = [sh.broadcast_to(x, tuple(full.get(lab, d) for lab, d in zip(ls, aval(x).shape)))
           for x, ls in zip(operands, labels)]
    return out, labels


# ---------------------------------------------------------------- the other contractions
def tensordot(a, b, axes=2):
    """``np.tensordot``: one pairwise contraction.

    >>> tensordot(np.ones((2, 3)), np.ones((3, 4)), 1).shape
    (2, 4)
    """
    a, b = as_float(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(na - axes, na)), list(range(int(axes)))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    ax_a, ax_b = [int(i) % na for i in ax_a], [int(i) % nb for i in ax_b]
    if len(ax_a) != len(ax_b) or any(aval(a).shape[i] != aval(b).shape[j] for i, j in zip(ax_a, ax_b)):
        raise ShapeError(f"np.tensordot: axes {ax_a} of {aval(a)} and {ax_b} of {aval(b)} do not match",
                         hint="the summed axes must have equal lengths")
    la = [f"a{i}" for i in range(na)]
    lb = [f"b{i}" for i in range(nb)]
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    keep = {lab for lab in la + lb if lab not in [la[i] for i in ax_a]}
    out, labels = contract_pair(a, la, b, lb, keep)
    order = [lab for lab in la if lab in keep] + [lab for lab in lb if lab in keep and lab not in la]
    return _permute(out, labels, order)


def inner(a, b):
    """``np.inner``: the last axes contracted.

    >>> float(inner(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    if aval(a).ndim == 0 or aval(b).ndim == 0:
        return ew.mul(a, b)
    return tensordot(a, b, ([-1], [-1]))


def vdot(a, b):
    """``np.vdot``: the flattened dot product, the first operand conjugated.

    >>> float(vdot(np.ones((2, 2)), np.ones((2, 2))))
    4.0
    """
    a, b = as_float(a, b)
    a = conj(a)
    return red.sum_(ew.mul(sh.reshape(a, (aval(a).size,)), sh.reshape(b, (aval(b).size,))))


def kron(a, b):
    """``np.kron``: a broadcast product, reshaped.

    >>> kron(np.array([1.0, 2.0]), np.array([1.0, 10.0]))
    array([ 1., 10.,  2., 20.])
    """
    a, b = as_float(a, b)
    nd = max(aval(a).ndim, aval(b).ndim)
    sa = (1,) * (nd - aval(a).ndim) + aval(a).shape
    sb = (1,) * (nd - aval(b).ndim) + aval(b).shape
    a = sh.reshape(a, tuple(d for s in sa for d in (s, 1)))
    b = sh.reshape(b, tuple(d for s in sb for d in (1, s)))
    return sh.reshape(ew.mul(a, b), tuple(x * y for x, y in zip(sa, sb)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal``: the diagonal as the last axis, as a gather (its transpose scatters back).

    >>> diagonal(np.arange(4.0).reshape(2, 2))
    array([0., 3.])
    """
    t = aval(a)
    axis1, axis2 = normalize_axes(axis1, t.ndim)[0], normalize_axes(axis2, t.ndim)[0]
    if axis1 == axis2:
        raise ShapeError("np.diagonal: axis1 and axis2 cannot be the same", hint="pass two different axes")
    rest = [i for i in range(t.ndim) if i not in (axis1, axis2)]
    a = sh.transpose(a, rest + [axis1, axis2])
    n1, n2 = t.shape[axis1], t.shape[axis2]
    if not (isinstance(n1, int) and isinstance(n2, int)):
        return _named_diagonal(a, offset, n1, n2)
    r0, c0 = max(-offset, 0), max(offset, 0)
    k = max(0, min(n1 - r0, n2 - c0))
    spec = (sh.slice_item(None, None, None),) * len(rest) + (("array", 0), ("array", 1))
    return sh.gather(a, [np.arange(r0, r0 + k), np.arange(c0, c0 + k)], spec)


def _named_diagonal(a, offset, n1, n2):
    """The main diagonal of square matrices of a named size: the sum of each row times the identity's."""
    from gradc.ops.linalg_decomp import eye_like
    if offset != 0 or n1 != n2:
        raise ShapeError(f"np.diagonal with offset {offset} of ({n1}, {n2}) matrices: its length is not a fixed "
                         "expression of the named sizes", hint="take the main diagonal of square matrices")
    return red.sum_(ew.mul(a, eye_like(a)), -1)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``np.trace``: the sum of ``diagonal``.

    >>> float(trace(np.arange(4.0).reshape(2, 2)))
    3.0
    """
    return red.sum_(diagonal(a, offset, axis1, axis2), -1)


def diag(v, k=0):
    """``np.diag``: a vector placed on a diagonal (a scatter), or a matrix's diagonal.

    >>> diag(np.array([1.0, 2.0]))
    array([[1., 0.],
           [0., 2.]])
    """
    t = aval(v)
    if t.ndim == 2:
        return diagonal(v, k)
    if t.ndim != 1:
        raise ShapeError(f"np.diag needs a 1-D or 2-D array, not {t}", hint="use np.diagonal for more axes")
    if not isinstance(t.shape[0], int) and k == 0:  # a named size: the identity scaled by v, row by row
        from gradc.ops.linalg_decomp import eye_like
        n = t.shape[0]
        return ew.mul(eye_like(sh.broadcast_to(sh.reshape(v, (1, n)), (n, n))), sh.reshape(v, (1, n)))
    n = t.shape[0] + abs(k)
    rows = np.arange(t.shape[0]) + max(-k, 0)
    return sh.gather_grad(v, [rows, rows - max(-k, 0) + max(k, 0)], (("array", 0), ("array", 1)), (n, n))


def vecdot(x1, x2, axis=-1):
    """``np.vecdot``: the first operand conjugated, as NumPy's.

    >>> vecdot(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    x1, x2 = as_float(x1, x2)
    x1 = conj(x1)
    prod = ew.mul(x1, x2)
    return red.sum_(prod, normalize_axes(axis, aval(prod).ndim))


def swapaxes(a, axis1, axis2):
    """``np.swapaxes`` as a transpose.

    >>> swapaxes(np.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    nd = aval(a).ndim
    perm = list(range(nd))
    i, j = normalize_axes(axis1, nd)[0], normalize_axes(axis2, nd)[0]
    perm[i], perm[j] = perm[j], perm[i]
    return sh.transpose(a, perm)


def moveaxis(a, source, destination):
    """``np.moveaxis`` as a transpose.

    >>> moveaxis(np.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    nd = aval(a).ndim
    src = [int(s) % nd for s in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [int(d) % nd for d in (destination if isinstance(destination, (tuple, list)) else [destination])]
    if len(src) != len(dst):
        raise ShapeError("np.moveaxis: source and destination need the same number of axes",
                         hint="pass as many destinations as sources")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(a, order)


def dot(a, b, out=None):
    """``np.dot``: matmul for matrices; for stacks, a's last axis contracted with b's second-to-last.

    >>> dot(np.ones((2, 3, 4)), np.ones((5, 4, 6))).shape
    (2, 3, 5, 6)
    """
    if out is not None:
        raise TraceError("np.dot(..., out=...) writes in place", hint="drop out= and assign the result")
    ta, tb = aval(a), aval(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ew.mul(a, b)
    if ta.ndim <= 2 and tb.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([-1], [0 if tb.ndim == 1 else -2]))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 3-vectors: the components are gathers, the product elementwise.

    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_float(a, b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if aval(a).shape[-1] != 3 or aval(b).shape[-1] != 3:
        raise ShapeError(f"np.cross of {aval(a)} and {aval(b)}: gradc supports 3-vectors",
                         hint="pad 2-vectors with a zero third component")

    def take(x, order):
        spec = (sh.slice_item(None, None, None),) * (aval(x).ndim - 1) + (("array", 0),)
        return sh.gather(x, [np.array(order)], spec)
    c = ew.sub(ew.mul(take(a, [1, 2, 0]), take(b, [2, 0, 1])), ew.mul(take(a, [2, 0, 1]), take(b, [1, 2, 0])))
    return moveaxis(c, -1, axisc)


def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """``np.einsum_path`` on traced operands: it needs only their shapes.

    >>> einsum_path("ij,jk", np.ones((2, 3)), np.ones((3, 4)))[0]
    ['einsum_path', (0, 1)]
    """
    shapes = [np.broadcast_to(np.zeros((), np.float64), aval(x).shape) if not isinstance(x, str) else x
              for x in operands]
    return np.einsum_path(*shapes, optimize=optimize)
