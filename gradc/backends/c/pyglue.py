"""A CPython extension wrapper around the emitted C functions (the fast in-process call path).

ctypes costs microseconds per call (pointer extraction, argument objects), far
more than a small gradient. When Python's headers are installed, the emitted
translation unit is linked with this glue into one extension module: each
entry point checks NumPy arrays / floats with NumPy's C API, allocates the
results with ``PyArray_SimpleNew`` and calls the C function directly. Anything
unusual (wrong shape or dtype, non-contiguous arrays, Python ints) goes to the
ctypes-based ``fallback`` path, which converts or raises the clear error. The
emitted C source itself is unchanged and stays Python-free.

>>> "Python.h" in glue_source("m", [])
True
"""
from __future__ import annotations

import math
import os
import sysconfig
from typing import Any

from gradc.backends.c import values as c_values
from gradc.backends.c.bounds import work_guard

_CTYPES = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "bool": "unsigned char",
           "c128": "double _Complex", "c64": "float _Complex"}


def python_include() -> str | None:
    """Python's include directory when Python.h is installed (NumPy's headers come with NumPy)."""
    inc = sysconfig.get_paths().get("include")
    return inc if inc and os.path.exists(os.path.join(inc, "Python.h")) else None


def numpy_include() -> str:
    import numpy as np

    return np.get_include()


def supported(graph) -> bool:
    """Graphs the glue handles: every input is one of the parameters (static parameters, compile-time constants
    such as a Python int step count, are compared with the value compiled in: a different one goes to the slow
    path, which raises the clear error)."""
    names = set(graph.params)
    return all(v.name in names for v in graph.inputs) and set(graph.static) <= names


def argument_positions(graph) -> list:
    """The position among the call's arguments of each graph input (static parameters are not inputs).

    >>> import gradc
    >>> from gradc.trace import trace
    >>> argument_positions(trace(lambda n, x: x[:n].sum(), 2, gradc.spec("f64[4]")))
    [1]
    """
    return [graph.params.index(v.name) for v in graph.inputs]


def size_names(graph) -> list:
    """The named sizes of ``graph``'s inputs in the order the C function takes them (by name).

    >>> import gradc
    >>> from gradc.trace import trace
    >>> size_names(trace(lambda x, z: x @ z, gradc.spec("f64[n,k]"), gradc.spec("f64[k]")))
    ['k', 'n']
    """
    from gradc.ir.dims import symbols_of

    return [s.name for s in symbols_of([d for v in graph.inputs for d in getattr(v.type, "shape", None) or ()])]


def _sized_input(i, t, slot, seen, arg=None) -> list:
    """C reading argument ``arg`` (``i`` by default; an array with named sizes) into ``p[i]``, its sizes into ``sz``
    (checked: at least 1, equal to the earlier ones); anything else goes to the slow path, which raises the clear
    error."""
    arg = i if arg is None else arg
    a = f"((PyArrayObject *)args[{arg}])"
    lines = [f"    if (!PyArray_CheckExact(args[{arg}]) || PyArray_TYPE({a}) != {t.np_dtype.num} || "
             f"PyArray_NDIM({a}) != {t.ndim} ||", f"        !PyArray_ISCARRAY_RO({a}) || !PyArray_ISNOTSWAPPED({a})) "
             "goto slow;"]
    for axis, d in enumerate(t.shape):
        got = f"PyArray_DIMS({a})[{axis}]"
        if not hasattr(d, "free_symbols"):
            lines.append(f"    if ({got} != {d}) goto slow;")
        elif d.name in seen:
            lines.append(f"    if ({got} != sz[{slot[d.name]}]) goto slow;  /* {d.name} */")
        else:
            seen.add(d.name)
            lines.append(f"    if ((sz[{slot[d.name]}] = {got}) < 1) goto slow;  /* {d.name} */")
    return lines + [f"    p[{i}] = PyArray_DATA({a});"]


_HELPERS = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>

/* The Python objects the entry points need (the ctypes fallbacks), set once by setup() and kept in
   the module's own state: no static mutable data, and each loaded module object has its own. */
#define NOBJ %(nobj)d
static PyObject **objects(PyObject *module)
{
    return (PyObject **)PyModule_GetState(module);
}

/* After the objects, in the module's state: one kept work buffer per C function (NWORK of them), reused by the
   next call instead of a fresh allocation each time (whose pages the kernel maps and zeroes again on first touch:
   most of a large function's time). Taken and given back with the GIL held; a call finding it taken (another
   thread's, or a re-entrant call) allocates its own, and the larger of two is kept. Freed with the module. */
#define NWORK %(nwork)d
typedef struct { void *data; size_t bytes; } kept_work;
static kept_work *work_kept(PyObject *module)
{
    return (kept_work *)(objects(module) + NOBJ);
}

/* A work buffer of at least `bytes` (uninitialised: the C functions write before they read); *held: its size. */
static void *work_take(PyObject *module, int k, size_t bytes, size_t *held)
{
    kept_work *kept = work_kept(module) + k;
    void *w = kept->data;
    if (w != NULL && kept->bytes >= bytes) {
        kept->data = NULL;
        *held = kept->bytes;
        return w;
    }
    *held = bytes;
    return PyMem_RawMalloc(bytes);
}

/* Give back a buffer of work_take: kept when none is, or when it is larger than the one kept; else freed. */
static void work_give(PyObject *module, int k, void *w, size_t held)
{
    kept_work *kept = work_kept(module) + k;
    if (w == NULL)
        return;
    if (kept->data == NULL || kept->bytes < held) {
        PyMem_RawFree(kept->data);
        kept->data = w;
        kept->bytes = held;
        return;
    }
    PyMem_RawFree(w);
}

/* A NumPy scalar of exactly this type copied into *slot (16 bytes, enough for any supported dtype); else NULL. */
static void *scalar_data(PyObject *obj, int typenum, double *slot)
{
    PyArray_Descr *d;
    int same;
    if (!PyArray_IsScalar(obj, Generic))
        return NULL;
    d = PyArray_DescrFromScalar(obj);
    if (d == NULL) {
        PyErr_Clear();
        return NULL;
    }
    same = d->type_num == typenum && PyArray_ISNBO(d->byteorder);
    Py_DECREF(d);
    if (!same)
        return NULL;
    PyArray_ScalarAsCtype(obj, slot);
    return slot;
}

/* A 0-d result as a NumPy scalar of its dtype (float64 results are Python floats). */
static PyObject *scalar_result(void *data, int typenum)
{
    PyArray_Descr *d = PyArray_DescrFromType(typenum);
    PyObject *r;
    if (d == NULL)
        return NULL;
    r = PyArray_Scalar(data, d, NULL);
    Py_DECREF(d);
    return r;
}

/* The data of an exact ndarray of this type and shape, native byte order, aligned, C-contiguous; else NULL. */
static void *array_data(PyObject *obj, int typenum, int ndim, const npy_intp *shape)
{
    PyArrayObject *a = (PyArrayObject *)obj;
    int i;
    if (!PyArray_CheckExact(obj) || PyArray_TYPE(a) != typenum || PyArray_NDIM(a) != ndim ||
        !PyArray_ISCARRAY_RO(a) || !PyArray_ISNOTSWAPPED(a))
        return NULL;
    for (i = 0; i < ndim; ++i) {
        if (PyArray_DIMS(a)[i] != shape[i])
            return NULL;
    }
    return PyArray_DATA(a);
}

static PyObject *setup(PyObject *self, PyObject *objs)
{
    Py_ssize_t i;
    if (!PyTuple_Check(objs) || PyTuple_GET_SIZE(objs) != NOBJ) {
        PyErr_SetString(PyExc_TypeError, "setup takes a tuple of the glue's objects");
        return NULL;
    }
    for (i = 0; i < NOBJ; ++i) {
        PyObject *old = objects(self)[i];
        objects(self)[i] = PyTuple_GET_ITEM(objs, i);
        Py_INCREF(objects(self)[i]);
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

static int traverse(PyObject *module, visitproc visit, void *arg)
{
    int i;
    for (i = 0; i < NOBJ; ++i)
        Py_VISIT(objects(module)[i]);
    return 0;
}

static int clear(PyObject *module)
{
    int i;
    for (i = 0; i < NOBJ; ++i)
        Py_CLEAR(objects(module)[i]);
    return 0;
}

static void free_module(void *module)
{
    int k;
    clear((PyObject *)module);
    for (k = 0; k < NWORK; ++k) {
        PyMem_RawFree(work_kept((PyObject *)module)[k].data);
        work_kept((PyObject *)module)[k].data = NULL;
    }
}
"""


class _Objects:
    """The Python objects the glue needs (numpy.empty, shapes, dtypes, fallbacks), by index."""

    def __init__(self):
        self.keys, self.items = [], []

    def index(self, key, value):
        if key not in self.keys:
            self.keys.append(key)
            self.items.append(value)
        return self.keys.index(key)


def _comment(text: str) -> str:
    """``text`` safe inside a C comment (a parameter's name is a Python identifier; kept ASCII and closed)."""
    return "".join(c if c.isascii() and c.isprintable() else "?" for c in text).replace("*/", "* /")


def _fn_type(graph, work, status=False) -> str:
    """The C type of a pointer to the emitted function computing ``graph`` (parameter names left out).

    ``status``: the function returns ``int`` (it has bounded loops, see ``control.loop_limits``).
    """
    params = ["long"] * len(size_names(graph)) + [f"const {_CTYPES[v.type.dtype]} *" for v in graph.inputs]
    params += [f"{_CTYPES[o.type.dtype]} *" for o in graph.outputs] + ["double *"] * bool(work)
    return f"{'int' if status else 'void'} (*)({', '.join(params)})"


def entry_table(cfuncs) -> str:
    """C appended to the unit when it is built with the glue: its functions by position.

    The glue calls them through this table, so it never names a user's function (a function
    called ``setup`` or ``PyObject`` would clash with the glue or with Python's headers).

    >>> print(entry_table(["f", "f_grad"]))
    <BLANKLINE>
    /* The functions above by position, for the Python glue. */
    void (*const gradc_entries[])(void) = {(void (*)(void))f, (void (*)(void))f_grad};
    """
    items = ", ".join(f"(void (*)(void)){name}" for name in cfuncs)
    return f"\n/* The functions above by position, for the Python glue. */\n" \
           f"void (*const gradc_entries[])(void) = {{{items}}};"


def _entry(objs, entry, cfuncs, cfunc, graph, structure, work, fallback_key, raiser=None):
    """C code of one METH_FASTCALL entry point (keywords go to the fallback); ``structure`` nests output
    positions like the NumPy target.

    ``cfunc`` is the position of the C function in ``gradc_entries`` (see ``entry_table``; ``cfuncs`` lists
    them). ``work``: the bytes of its work buffer, or the name of its ``NAME_work_size`` function (named sizes).
    ``raiser``: for a function returning a status, the Python callable raising the error of a nonzero one.
    """
    nin, nout = len(graph.inputs), len(graph.outputs)
    fb = objs.index(fallback_key, None)
    slot = {name: k for k, name in enumerate(size_names(graph))}  # named sizes: read into sz[k]
    seen: set = set()
    L = [f"static PyObject *{entry}(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)",
         "{",
         f"    double s[2 * {nin or 1}], so[2 * {nout}];  /* two doubles a slot: a complex128 */",
         f"    void *p[{nin or 1}], *q[{nout}];",
         f"    PyObject *o[{nout}];", "    PyObject *result = NULL;", "    int i, status = 0;", "    void *w = NULL;",
         "    size_t bytes = 0, held = 0;", "    (void)s; (void)so; (void)p; (void)bytes; (void)held;",
         f"    for (i = 0; i < {nout}; ++i) o[i] = NULL;",
         f"    if (nargs != {len(graph.params)} || kwnames != NULL) goto slow;  /* keywords, defaults: in Python */"]
    if slot:
        L.insert(2, f"    long sz[{len(slot)}];")
    for name, value in graph.static.items():  # compiled in: another value goes to the slow path, which says so
        k = objs.index(("static", name), value)
        L.append(f"    if (PyObject_RichCompareBool(args[{graph.params.index(name)}], objects(self)[{k}], Py_EQ) != 1) "
                 "{ PyErr_Clear(); goto slow; }  /* " + _comment(name) + " */")
    for i, (v, arg) in enumerate(zip(graph.inputs, argument_positions(graph))):
        t = v.type
        if any(hasattr(d, "free_symbols") for d in t.shape):
            L += _sized_input(i, t, slot, seen, arg)
            continue
        shape = "{" + ", ".join(str(d) for d in t.shape) + "}" if t.shape else "{0}"
        L.append("    {")
        L.append(f"        static const npy_intp shape[] = {shape};")
        get = f"p[{i}] = array_data(args[{arg}], {t.np_dtype.num}, {t.ndim}, shape)"
        if t.shape == () and t.dtype == "f64":
            L.append(f"        if (PyFloat_Check(args[{arg}])) {{ s[{2 * i}] = PyFloat_AS_DOUBLE(args[{arg}]); "
                     f"p[{i}] = &s[{2 * i}]; }}")
            L.append(f"        else if (({get}) == NULL) goto slow;")
        elif t.shape == ():
            L.append(f"        if ((p[{i}] = scalar_data(args[{arg}], {t.np_dtype.num}, &s[{2 * i}])) == NULL && "
                     f"({get}) == NULL) goto slow;")
        else:
            L.append(f"        if (({get}) == NULL) goto slow;")
        L.append("    }")
    if isinstance(work, str):  # named sizes: the unit's NAME_work_size says how much, or SIZE_MAX: too large
        size_fn = f"((size_t (*)({', '.join(['long'] * len(slot))}))gradc_entries[{cfuncs.index(work)}])"
        L.append(f"    bytes = {size_fn}({', '.join(f'sz[{k}]' for k in range(len(slot)))});")
        L.append("    if (bytes == (size_t)-1) goto slow;  /* the slow path raises the error */")
    elif work:
        L.append(f"    bytes = {work};")
    for out in graph.outputs:  # an output of named sizes past 2**62 bytes: the slow path's NumPy refuses it
        t = out.type
        if any(hasattr(d, "free_symbols") for d in t.shape):
            nbytes = math.prod(t.shape) * t.np_dtype.itemsize
            L.append(f"    if ({work_guard(nbytes, {name: f'sz[{k}]' for name, k in slot.items()})}) goto slow;")
    for j, out in enumerate(graph.outputs):
        t = out.type
        if t.shape == ():
            L.append(f"    q[{j}] = &so[{2 * j}];")
            continue
        L.append("    {")
        if any(hasattr(d, "free_symbols") for d in t.shape):
            with c_values.size_names({name: f"sz[{k}]" for name, k in slot.items()}):
                L.append(f"        npy_intp shape[] = {{{', '.join(c_values.dim_c(d) for d in t.shape)}}};")
        else:
            L.append(f"        static const npy_intp shape[] = {{{', '.join(str(d) for d in t.shape)}}};")
        L.append(f"        o[{j}] = PyArray_SimpleNew({t.ndim}, (npy_intp *)shape, {t.np_dtype.num});")
        L.append(f"        if (o[{j}] == NULL) goto fail;")
        L.append(f"        q[{j}] = PyArray_DATA((PyArrayObject *)o[{j}]);")
        L.append("    }")
    if work:
        L.append(f"    w = work_take(self, {cfunc}, bytes, &held);")
        L.append("    if (w == NULL) { PyErr_NoMemory(); goto fail; }")
    args = [f"sz[{k}]" for k in range(len(slot))] + [f"({_CTYPES[v.type.dtype]} *)p[{i}]"
                                                     for i, v in enumerate(graph.inputs)]
    args += [f"({_CTYPES[o.type.dtype]} *)q[{j}]" for j, o in enumerate(graph.outputs)]
    if work:
        args.append("(double *)w")
    L.append("    Py_BEGIN_ALLOW_THREADS" if work else "    {")
    call = f"(({_fn_type(graph, work, raiser is not None)})gradc_entries[{cfunc}])({', '.join(args)});"
    L.append(f"    status = {call}" if raiser is not None else f"    {call}")
    L.append("    Py_END_ALLOW_THREADS" if work else "    }")
    L.append("    (void)status;")
    if raiser is not None:  # a loop ran into its bound: the Python side raises the error naming it
        r = objs.index(("raiser", cfunc), raiser)
        L.append(f"    if (status) {{ Py_XDECREF(PyObject_CallFunction(objects(self)[{r}], \"i\", status)); "
                 "goto fail; }")
    for j, out in enumerate(graph.outputs):
        if out.type.shape == () and out.type.dtype == "f64":
            L.append(f"    o[{j}] = PyFloat_FromDouble(so[{2 * j}]);")
            L.append(f"    if (o[{j}] == NULL) goto fail;")
        elif out.type.shape == ():
            L.append(f"    o[{j}] = scalar_result(&so[{2 * j}], {out.type.np_dtype.num});")
            L.append(f"    if (o[{j}] == NULL) goto fail;")

    def build(node):
        if isinstance(node, int):
            return f"o[{node}]"  # PyTuple_Pack takes its own references
        return f"PyTuple_Pack({len(node)}, {', '.join(build(n) for n in node)})"

    if isinstance(structure, int):
        L.append(f"    result = o[{structure}];")
        L.append(f"    o[{structure}] = NULL;")
    else:
        L.append("    {")
        for k, part in enumerate(structure):
            L.append(f"        PyObject *part{k} = {build(part)};")
        L.append(f"        result = PyTuple_Pack({len(structure)}, "
                 f"{', '.join(f'part{k}' for k in range(len(structure)))});")
        for k, part in enumerate(structure):
            if not isinstance(part, int):
                L.append(f"        Py_XDECREF(part{k});")
        L.append("    }")
    L += ["fail:", f"    for (i = 0; i < {nout}; ++i) Py_XDECREF(o[i]);", f"    work_give(self, {cfunc}, w, held);",
          "    return result;",
          "slow:", f"    return PyObject_Vectorcall(objects(self)[{fb}], args, (size_t)nargs, kwnames);", "}"]
    return "\n".join(L)


def glue_source(module_name, entries):
    """``entries``: ``(entry_name, c_function, graph, structure, work[, raiser])``; returns C source and objects
    (``work``: bytes, or the name of the C function giving them, see ``_entry``).

    The unit must be built with ``entry_table`` of ``c_functions(entries)`` appended.
    The source is returned alone when ``entries`` is empty (used by the doctest).
    """
    objs = _Objects()
    cfuncs = c_functions(entries)
    bodies = [_entry(objs, e, cfuncs, cfuncs.index(cf), g, st, w, ("fallback", e), *rest)
              for e, cf, g, st, w, *rest in entries]
    methods = [f'    {{"{e}", (PyCFunction)(void (*)(void)){e}, METH_FASTCALL | METH_KEYWORDS, NULL}},'
               for e, *_ in entries]
    text = "\n".join(
        [_HELPERS % {"nobj": max(len(objs.keys), 1), "nwork": max(len(cfuncs), 1)},
         "/* The unit's functions by position (see entry_table) */",
         "extern void (*const gradc_entries[])(void);", ""] + bodies + [
            "static PyMethodDef methods[] = {",
            '    {"setup", (PyCFunction)setup, METH_O, NULL},', *methods, "    {NULL, NULL, 0, NULL}", "};",
            f'static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{module_name}", NULL, '
            "NOBJ * sizeof(PyObject *) + NWORK * sizeof(kept_work), methods, NULL, traverse, clear, free_module};",
            f"PyMODINIT_FUNC PyInit_{module_name}(void)", "{", "    import_array();",
            "    return PyModule_Create(&module);", "}", ""])
    if not entries:
        return text
    return text, objs


def c_functions(entries) -> list:
    """The distinct C functions ``entries`` call (and the work-size functions they ask), in order of first use.

    >>> c_functions([("forward", "f", None, 0, 0), ("grad", "f_grad", None, 1, "f_grad_work_size"),
    ...              ("vg", "f_grad", None, 0, "f_grad_work_size")])
    ['f', 'f_grad', 'f_grad_work_size']
    """
    names = [name for _, cf, _, _, work, *_ in entries for name in (cf, work) if isinstance(name, str)]
    return list(dict.fromkeys(names))


def load_entries(module: str, library_path: str, objs, slow: dict) -> Any:
    """Load the built extension ``module`` from ``library_path`` and give it its objects; ``slow`` maps an entry's
    name to the Python callable its fallback calls. Returns the module (its entries are its attributes)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader(module, library_path)
    spec = importlib.util.spec_from_file_location(module, library_path, loader=loader)
    ext = importlib.util.module_from_spec(spec)
    loader.exec_module(ext)
    items = [slow[key[1]] if isinstance(key, tuple) and key[0] == "fallback" else item
             for key, item in zip(objs.keys, objs.items)]
    ext.setup(tuple(items))
    return ext
