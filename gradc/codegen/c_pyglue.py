"""A CPython extension wrapper around the emitted C functions (the fast in-process call path).

ctypes costs microseconds per call (pointer extraction, argument objects), far
more than a small gradient. When Python's headers are installed, the emitted
translation unit is linked with this glue into one extension module: each
entry point takes NumPy arrays / floats through the buffer protocol, allocates
the results with ``numpy.empty`` and calls the C function directly. Anything
unusual (wrong shape or dtype, non-contiguous arrays, Python ints) goes to the
ctypes-based ``fallback`` path, which converts or raises the clear error. The
emitted C source itself is unchanged and stays Python-free.

>>> "Python.h" in glue_source("m", [], [])
True
"""
from __future__ import annotations

import os
import sysconfig

_FORMATS = {"f64": ("d", 8), "f32": ("f", 4), "i64": ("lq", 8), "i32": ("i", 4), "bool": ("?", 1)}
_CTYPES = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "bool": "unsigned char"}


def python_include() -> str | None:
    inc = sysconfig.get_paths().get("include")
    return inc if inc and os.path.exists(os.path.join(inc, "Python.h")) else None


def supported(graph) -> bool:
    """Graphs the glue handles: no static parameters, scalar outputs only float64."""
    return not graph.static and all(o.type.shape != () or o.type.dtype == "f64" for o in graph.outputs)


_HELPERS = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *g_obj[%(nobj)d];

static int get_in(PyObject *obj, Py_buffer *view, const char *fmts, Py_ssize_t itemsize, int ndim,
                  const Py_ssize_t *shape)
{
    int i;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->itemsize != itemsize || view->ndim != ndim || view->format == NULL ||
        strchr(fmts, view->format[view->format[0] == '=' || view->format[0] == '<' ? 1 : 0]) == NULL) {
        PyBuffer_Release(view);
        return 0;
    }
    for (i = 0; i < ndim; ++i) {
        if (view->shape[i] != shape[i]) {
            PyBuffer_Release(view);
            return 0;
        }
    }
    return 1;
}

static PyObject *setup(PyObject *self, PyObject *objs)
{
    Py_ssize_t i;
    (void)self;
    if (!PyTuple_Check(objs) || PyTuple_GET_SIZE(objs) != %(nobj)d) {
        PyErr_SetString(PyExc_TypeError, "setup takes a tuple of the glue's objects");
        return NULL;
    }
    for (i = 0; i < %(nobj)d; ++i) {
        Py_XDECREF(g_obj[i]);
        g_obj[i] = PyTuple_GET_ITEM(objs, i);
        Py_INCREF(g_obj[i]);
    }
    Py_RETURN_NONE;
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


def _entry(objs, entry, cfunc, graph, structure, work, fallback_key):
    """C code of one METH_FASTCALL entry point; ``structure`` nests output positions like the NumPy target."""
    import numpy as np

    nin, nout = len(graph.inputs), len(graph.outputs)
    empty = objs.index("empty", np.empty)
    fb = objs.index(fallback_key, None)
    L = [f"static PyObject *{entry}(PyObject *self, PyObject *const *args, Py_ssize_t nargs)", "{",
         f"    Py_buffer in[{nin or 1}], ob[{nout}];", f"    double s[{nin or 1}], so[{nout}];",
         f"    const void *p[{nin or 1}];", f"    void *q[{nout}];", f"    PyObject *o[{nout}];",
         "    PyObject *result = NULL;", "    int got = 0, ogot = 0, i;", "    void *w = NULL;",
         "    (void)self; (void)s; (void)so; (void)p;",
         f"    for (i = 0; i < {nout}; ++i) o[i] = NULL;",
         f"    if (nargs != {nin}) goto slow;"]
    for i, v in enumerate(graph.inputs):
        t = v.type
        fmts, size = _FORMATS[t.dtype]
        shape = "{" + ", ".join(str(d) for d in t.shape) + "}" if t.shape else "{0}"
        L.append("    {")
        L.append(f"        static const Py_ssize_t shape[] = {shape};")
        if t.shape == () and t.dtype == "f64":
            L.append(f"        if (PyFloat_Check(args[{i}])) {{ s[{i}] = PyFloat_AS_DOUBLE(args[{i}]); "
                     f"p[{i}] = &s[{i}]; }}")
            L.append(f"        else if (get_in(args[{i}], &in[got], \"{fmts}\", {size}, 0, shape)) "
                     f"p[{i}] = in[got++].buf;")
        else:
            L.append(f"        if (get_in(args[{i}], &in[got], \"{fmts}\", {size}, {t.ndim}, shape)) "
                     f"p[{i}] = in[got++].buf;")
        L.append("        else goto slow;")
        L.append("    }")
    for j, out in enumerate(graph.outputs):
        t = out.type
        if t.shape == ():
            L.append(f"    q[{j}] = &so[{j}];")
            continue
        shp = objs.index(("shape", t.shape), tuple(t.shape))
        dt = objs.index(("dtype", t.dtype), t.np_dtype)
        L.append(f"    o[{j}] = PyObject_CallFunctionObjArgs(g_obj[{empty}], g_obj[{shp}], g_obj[{dt}], NULL);")
        L.append(f"    if (o[{j}] == NULL || PyObject_GetBuffer(o[{j}], &ob[ogot], PyBUF_WRITABLE | "
                 "PyBUF_C_CONTIGUOUS) < 0) goto fail;")
        L.append(f"    q[{j}] = ob[ogot++].buf;")
    if work:
        L.append(f"    w = PyMem_Malloc({work});")
        L.append("    if (w == NULL) { PyErr_NoMemory(); goto fail; }")
    args = [f"({_CTYPES[v.type.dtype]} *)p[{i}]" for i, v in enumerate(graph.inputs)]
    args += [f"({_CTYPES[o.type.dtype]} *)q[{j}]" for j, o in enumerate(graph.outputs)]
    if work:
        args.append("(double *)w")
    L.append("    Py_BEGIN_ALLOW_THREADS" if work else "    {")
    L.append(f"    {cfunc}({', '.join(args)});")
    L.append("    Py_END_ALLOW_THREADS" if work else "    }")
    for j, out in enumerate(graph.outputs):
        if out.type.shape == ():
            L.append(f"    o[{j}] = PyFloat_FromDouble(so[{j}]);")
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
            L.append(f"        PyObject *part{k} = {build(part) if not isinstance(part, int) else f'o[{part}]'};")
        L.append(f"        result = PyTuple_Pack({len(structure)}, "
                 f"{', '.join(f'part{k}' for k in range(len(structure)))});")
        for k, part in enumerate(structure):
            if not isinstance(part, int):
                L.append(f"        Py_XDECREF(part{k});")
        L.append("    }")
    L += ["fail:", "    for (i = 0; i < got; ++i) PyBuffer_Release(&in[i]);",
          "    for (i = 0; i < ogot; ++i) PyBuffer_Release(&ob[i]);",
          f"    for (i = 0; i < {nout}; ++i) Py_XDECREF(o[i]);", "    PyMem_Free(w);", "    return result;",
          "slow:", "    for (i = 0; i < got; ++i) PyBuffer_Release(&in[i]);",
          f"    return PyObject_Vectorcall(g_obj[{fb}], args, (size_t)nargs, NULL);", "}"]
    return "\n".join(L)


def glue_source(module_name, entries, prototypes):
    """``entries``: ``(entry_name, c_function, graph, structure, work_bytes)``; returns C source and objects.

    The source is returned alone when ``entries`` is empty (used by the doctest).
    """
    import numpy as np

    objs = _Objects()
    objs.index("empty", np.empty)
    bodies = [_entry(objs, e, cf, g, st, w, ("fallback", e)) for e, cf, g, st, w in entries]
    methods = [f'    {{"{e}", (PyCFunction)(void (*)(void)){e}, METH_FASTCALL, NULL}},' for e, *_ in entries]
    text = "\n".join(
        [_HELPERS % {"nobj": max(len(objs.keys), 1)}] + [p + ";" for p in prototypes] + [""] + bodies + [
            "static PyMethodDef methods[] = {",
            '    {"setup", (PyCFunction)setup, METH_O, NULL},', *methods, "    {NULL, NULL, 0, NULL}", "};",
            f'static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{module_name}", NULL, -1, methods, '
            "NULL, NULL, NULL, NULL};",
            f"PyMODINIT_FUNC PyInit_{module_name}(void)", "{", "    return PyModule_Create(&module);", "}", ""])
    if not entries:
        return text
    return text, objs
