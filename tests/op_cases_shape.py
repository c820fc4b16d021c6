"""Per-op table entries for the shape family (merged into ``op_cases``; see its docstring for the checks).

NumPy's shape functions (``gradc.trace.shape_dispatch``) are compositions of the shape ops, so
their cases name those ops; index assignment (``gradc.trace.inplace``) binds ``index_update``.
"""
from __future__ import annotations

import numpy as np
from op_cases import Case, const, distinct, labels, normal

from gradc.ops import index_add, shape_extra


def set_row_then_entries(a, v):
    out = np.zeros_like(a)
    out[0] = v  # a row, broadcast
    out[1:, 1] = a[1:, 0] * 2.0
    out[np.array([2, 0, 2]), 0] = v[np.array([0, 1, 1])] * 3.0  # position 2 twice: NumPy keeps the last write
    return out * a


def add_into_copy(a, v):
    y = a.copy()
    y[np.array([0, 1, 0])] += v  # buffered: the repeated row gets v[2] added once
    y[:, ::2] *= 3.0
    return y


def masked_assign(a):
    y = a * 1.0
    y[np.array([[True, False], [False, True], [True, True]])] = a[0, 0] ** 2
    return y


def view_writes_through(a):
    y = a + 0.0
    row = y[1]
    row[1:] = a[0, :2] * 5.0  # a view: y changes too
    y[1, 0] -= row[2]
    return y * row


def index_add_direct(a, v):
    return index_add.index_add(a, v, [np.array([0, 3, 0])], (("array", 0),))


def index_add_traced_index(a, v, i):
    return index_add.index_add(a, v, [i], (("slice", None, None, None), ("array", 0)))


def index_update_direct(a, v):
    return shape_extra.index_update(a, v, [np.array([[0], [2]])], (("array", 0), ("slice", None, None, -1)))


def index_update_traced_index(a, v, i):
    return shape_extra.index_update(a, v, [i], (("slice", None, None, None), ("array", 0)))


def pad_mixed(a):
    constant = np.pad(a, ((1, 0), (2, 1)), constant_values=((0.5, 0.0), (-1.0, 2.0)))
    return constant + np.pad(a, ((0, 1), (1, 2)), mode="reflect")


def splits(a):
    left, right = np.hsplit(a, [1])
    top, rest = np.array_split(a, 2)
    return np.concatenate([left.ravel(), right.ravel() * 2.0, top.ravel() ** 2, rest.ravel()])


def joins(a, b):
    return np.concatenate([np.hstack([a, b]).ravel(), np.vstack([a, b]).ravel() ** 2,
                           np.dstack([a, b]).ravel(), np.column_stack([a[0], b[0]]).ravel()])


DIFF_CASES = [
    Case("flip", lambda a: np.flip(a) * np.fliplr(a) + np.flipud(a), [normal(3, 4)], ("index",)),
    Case("roll", lambda a: np.roll(a, 2) * np.roll(a, (1, -1), axis=(0, 1)), [normal(3, 4)],
         ("concatenate", "index", "reshape")),
    Case("rollaxis", lambda a: np.rollaxis(a, 2) * 2.0, [normal(2, 3, 4)], ("transpose",)),
    Case("tile", lambda a: np.tile(a, (2, 1, 3)), [normal(3, 2)], ("broadcast_to", "reshape")),
    Case("repeat_int_axis", lambda a: np.repeat(a, 2, axis=1), [normal(3, 2)], ("broadcast_to",)),
    Case("repeat_per_element", lambda a: a.repeat([1, 0, 3]), [normal(3)], ("gather",)),
    Case("pad_constant_and_reflect", pad_mixed, [normal(2, 3)], ("concatenate", "gather")),
    Case("pad_edge_wrap_symmetric", lambda a: np.pad(a, (1, 2), "edge") * np.pad(a, (1, 2), "wrap")
         + np.pad(a, (2, 1), "symmetric"), [normal(4, 3)], ("gather",)),
    Case("triu_tril", lambda a: np.triu(a, 1) + np.tril(a, -1) * 2.0 + np.tril(a[0]), [normal(3, 3)],
         ("tri_mask",)),
    Case("take", lambda a: np.take(a, [0, 2, 2], axis=1) * np.take(a, [[5, -1, 7]], mode="wrap"), [normal(2, 3)],
         ("gather",)),
    Case("take_traced_indices", lambda a, i: a.take(i, axis=0), [normal(4, 2), labels(5, 4)], ("gather",)),
    Case("split_family", splits, [normal(4, 3)], ("index", "concatenate")),
    Case("stack_family", joins, [normal(2, 3), normal(2, 3)], ("concatenate", "reshape")),
    Case("block", lambda a, b: np.block([[a, b], [b, a]]), [normal(2, 2), normal(2, 1)], ("concatenate",)),
    Case("append_insert_delete", lambda a, b: np.concatenate([
        np.append(a, b), np.insert(a, [1, 1, 2], b[:1], axis=1).ravel(), np.delete(a, [0, 2], axis=1).ravel()]),
        [normal(2, 3), normal(2)], ("gather", "concatenate")),
    Case("sliding_window_view", lambda a: np.lib.stride_tricks.sliding_window_view(a, (2, 2)) ** 2, [normal(3, 4)],
         ("gather",)),
    Case("static_bool_mask", lambda a: a[np.array([True, False, True])] * a[np.eye(3, dtype=bool)][None, :],
         [normal(3, 3)], ("gather",)),
    Case("atleast_nd", lambda a: np.atleast_3d(a) * np.atleast_2d(a)[..., None] + np.atleast_1d(a[0]), [normal(3)],
         ("reshape",)),
    Case("diagflat", lambda a: np.diagflat(a, 1), [normal(2, 2)], ("gather_grad",)),
    Case("meshgrid", lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1] + np.meshgrid(a, b, indexing="ij")[0].T,
         [normal(3), normal(4)], ("broadcast_to",)),
    # ---- index assignment (functional updates, gradc/trace/inplace.py)
    Case("setitem_rows_entries_repeats", set_row_then_entries, [normal(3, 2), normal(2)], ("index_update",)),
    Case("setitem_augmented_repeats", add_into_copy, [normal(2, 3), normal(3, 3)], ("index_update", "gather")),
    Case("setitem_static_mask", masked_assign, [normal(3, 2)], ("index_update",)),
    Case("setitem_view_writes_through", view_writes_through, [normal(2, 3)], ("index_update",)),
    Case("index_update", index_update_direct, [normal(3, 2), normal(2, 1, 1)], ("index_update",)),
    Case("index_update_traced_index", index_update_traced_index, [normal(2, 4), normal(2), const(np.int64(2))],
         ("index_update",)),
    Case("add_at_repeats", lambda a, v: add_at(a, v), [normal(4), distinct(5)], ("gather_grad",)),
    # ---- index_add (the in-place pass writes acc + scatter as it: gradc/passes/in_place.py)
    Case("index_add_repeats", index_add_direct, [normal(4, 2), normal(3, 2)], ("index_add",)),
    Case("index_add_slice", lambda a, v: index_add.index_add(a, v, [], (("int", 1), ("slice", 1, None, None))),
         [normal(3, 4), normal(3)], ("index_add",)),
    Case("index_add_traced_index", index_add_traced_index, [normal(2, 4), normal(2), const(np.int64(2))],
         ("index_add",)),
]



def add_at(a, v):
    out = a * 1.0
    np.add.at(out, np.array([0, 3, 3, 1, 3]), v)  # the traced target: Tracer.__array_ufunc__("at")
    return out


NONDIFF_CASES: list = []  # the family's ops are all differentiable
