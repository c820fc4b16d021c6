"""Sorting and searching in C: ``argsort`` (so ``np.sort``, ``median``, ``quantile``... which gather at its
indices) and ``searchsorted`` (so ``np.interp`` and ``np.digitize``).

``SortLowerings`` is a mixin of the C function emitter (``gradc.backends.c.emit``). Each op calls a
``static`` helper, defined once per translation unit and element type, on each row along the op's axis
(read through its stride: transposed and sliced views cost no copy).

Order: NumPy's. Values compare with ``<``, except that NaN sorts after every other value (NumPy's
``sort``, ``argsort`` and ``searchsorted`` agree on it), so ``less(a, b) = a < b || (isnan(b) && !isnan(a))``.
``argsort`` is a bottom-up merge sort of positions, stable: ties (``-0.0`` and ``0.0`` too, NaN among
NaN) keep their order, which is NumPy's order for ``kind='stable'``; for NumPy's default (unstable)
kind the order of ties is NumPy's to choose and may differ, the sorted values never do. Its work is two
arrays of ``n`` int64 (the emitter places them like any other). ``searchsorted`` is a binary search: the
count of entries ``less`` than ``v`` (``side='left'``) or not greater than it (``'right'``); on an
unsorted ``a`` the result, as NumPy's, is unspecified.

>>> "isnan(b)" in helper_text("argsort", "f64")
True
"""
from __future__ import annotations

from gradc.backends.c.values import C_TYPES, dim_c, eqn_text, loops, ptr

_LESS = {True: "#define GRADC_LESS(a, b) ((a) < (b) || (isnan(b) && !isnan(a)))",
         False: "#define GRADC_LESS(a, b) ((a) < (b))"}

_HELPERS = {
    "argsort": """
/* out[k*os] = the stable ascending order of the n values x[k*xs] (NaN last): a bottom-up merge sort of the
 * positions, in idx and its merge buffer tmp (n int64 each) */
static void gradc_argsort_SUFFIX(long n, const T *restrict x, long xs, int64_t *restrict out, long os,
                                 int64_t *idx, int64_t *tmp)
{
    for (long k = 0; k < n; ++k) {
        idx[k] = k;
    }
    for (long width = 1; width < n; width *= 2) {
        for (long lo = 0; lo < n; lo += 2 * width) {
            const long mid = lo + width < n ? lo + width : n;
            const long hi = lo + 2 * width < n ? lo + 2 * width : n;
            long i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {  /* the right run's element goes first only when strictly less */
                tmp[k++] = GRADC_LESS(x[idx[j]*xs], x[idx[i]*xs]) ? idx[j++] : idx[i++];
            }
            while (i < mid) {
                tmp[k++] = idx[i++];
            }
            while (j < hi) {
                tmp[k++] = idx[j++];
            }
        }
        int64_t *const t = idx; idx = tmp; tmp = t;
    }
    for (long k = 0; k < n; ++k) {
        out[k*os] = idx[k];
    }
}""",
    "searchsorted": """
/* the number of the n sorted values a[k*as] less than v (right == 0) or not greater than v (right != 0) */
static int64_t gradc_searchsorted_SUFFIX(long n, const T *restrict a, long as, T v, int right)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        const T m = a[mid*as];
        if (right ? !GRADC_LESS(v, m) : GRADC_LESS(m, v)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}""",
}


def helper_text(kind: str, dtype: str) -> str:
    """The C source of helper ``kind`` for elements of ``dtype`` (its comparison a macro, undefined after it).

    >>> helper_text("searchsorted", "i64").splitlines()[2]
    'static int64_t gradc_searchsorted_i64(long n, const int64_t *restrict a, long as, int64_t v, int right)'
    """
    text = _HELPERS[kind].replace("SUFFIX", dtype).replace("const T ", f"const {C_TYPES[dtype]} ")
    text = text.replace("T *", f"{C_TYPES[dtype]} *").replace(" T v", f" {C_TYPES[dtype]} v")
    return f"{_LESS[dtype in ('f32', 'f64')]}{text}\n#undef GRADC_LESS"


class SortLowerings:
    """The lowerings of ``argsort`` and ``searchsorted`` (see the module docstring)."""

    def sort_helper(self, kind, dtype):
        return self.module.helper(("gradc_sort", kind, dtype), f"gradc_{kind}_{dtype}",
                                  lambda: "\n" + helper_text(kind, dtype))

    def op_argsort(self, e):
        x = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        axis = e.params["axis"]
        n = x.shape[axis]
        fn = self.sort_helper("argsort", x.dtype)
        rest = [a for a in range(len(x.shape)) if a != axis]
        lines, idx = loops([x.shape[a] for a in rest])
        work = self.work("i64", 2 * n, e.out.name + "_order")
        self.emit(f"/* {eqn_text(e)}{': one sort per row along axis ' + str(axis) if lines else ''} */")
        self.open(lines)
        xp = ptr(x.name, x.offset, [(x.strides[a], i) for a, i in zip(rest, idx)])
        op = ptr(out.name, out.offset, [(out.strides[a], i) for a, i in zip(rest, idx)])
        self.emit(f"{fn}({dim_c(n)}, {xp}, {dim_c(x.strides[axis])}, {op}, {dim_c(out.strides[axis])}, {work}, "
                  f"{work} + {dim_c(n)});")
        self.close(len(lines))

    def op_searchsorted(self, e):
        a = self.matrix_operand(e.inputs[0])
        v = self.atom_loc(e.inputs[1])
        out = self.storage(e.out)
        fn = self.sort_helper("searchsorted", a.dtype)
        right = int(e.params["side"] == "right")
        self.emit(f"/* {eqn_text(e)}: a binary search per value */")
        self.declare_local(out)
        lines, idx = loops(out.shape)
        self.open(lines)
        self.emit(f"{self.target(out, idx)} = {fn}({dim_c(a.shape[0])}, {ptr(a.name, a.offset, [])}, "
                  f"{dim_c(a.strides[0])}, {v.at(idx)}, {right});")
        self.close(len(lines))
