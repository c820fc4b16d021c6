"""One graph as one C function, built and loaded: the C target of ``gradc.jit``.

The unit holds the function alone (``gradc_fn_NAME(inputs..., outputs...)``, the grad
target's ABI). When Python's headers are installed it is also linked as an extension
module (``gradc.backends.c.pyglue``) whose entry point checks NumPy arrays and floats in C
and calls the function directly; anything unusual goes to the ctypes path, which converts
or raises the clear error.

>>> import numpy as np
>>> from gradc.trace import trace
>>> c = CFunction(trace(lambda x: np.sin(x) * 2.0, np.zeros(2)), "Value.", ["Example."])
>>> c(np.zeros(2)), "gradc_fn_lambda_" in c.source
(array([0., 0.]), True)
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.machinery
import importlib.util

from gradc.backends.c import pyglue
from gradc.backends.c.blas import connect as connect_blas
from gradc.backends.c.build import _CFunction, _raiser, _work_bytes, build, header_guard
from gradc.backends.c.cache import cache_dir
from gradc.backends.c.control import loop_limits
from gradc.backends.c.emit import emit_c
from gradc.backends.c.names import fresh, symbol
from gradc.errors import EmitError
from gradc.passes import optimize


class CFunction:
    """``graph`` optimised, emitted as C and loaded; calling it returns the outputs (a tuple when several).

    ``source`` is the C text, ``header`` its header, ``graph`` the optimised graph, ``fast``
    whether calls go through the extension module.
    """

    def __init__(self, graph, doc: str, header_lines: list):
        self.graph = optimize(graph)
        self.name = graph.name
        cname = symbol(graph.name)
        taken = {v.name for v in self.graph.inputs}
        n_out = len(self.graph.outputs)
        outs = []
        for k in range(n_out):
            outs.append(fresh("value" if n_out == 1 else f"value{k}", taken))
            taken.add(outs[-1])
        lines = header_lines + ["", "ABI: arrays are row-major, contiguous, of the dtype and shape traced;",
                                "scalars are passed as pointers to one element. Outputs must not overlap inputs.",
                                f"  {cname}(inputs..., {', '.join(outs)}) writes the value."]
        self.source, self.header = emit_c([(self.graph, cname, outs, doc)], lines, header_guard(cname))
        self.c_source = self.source
        work = _work_bytes(self.source, cname)
        limits = loop_limits(self.graph)
        raiser = _raiser({lim.code: functools.partial(lim.error, graph.name) for lim in limits}) if limits else None
        structure = 0 if n_out == 1 else tuple(range(n_out))
        entries = [("call", cname, self.graph, structure, work, raiser)]
        self.fast = bool(pyglue.python_include()) and pyglue.supported(self.graph)
        glue = objs = None
        source = self.source
        module = "_gradc_" + hashlib.sha256(self.source.encode()).hexdigest()[:16]
        if self.fast:
            glue, objs = pyglue.glue_source(module, entries)
            source += pyglue.entry_table(pyglue.c_functions(entries)) + "\n"
        self.library_path = build(source, graph.name, glue)
        try:
            lib = ctypes.CDLL(self.library_path)
        except OSError as exc:
            raise EmitError(f"could not load the compiled C ({exc})", where="",
                            hint=f"delete {self.library_path} (or the cache {cache_dir()}) and compile again") from None
        self.blas = connect_blas(lib, cname)
        self._slow = _CFunction(lib, cname, self.graph, work if isinstance(work, int) else 0, limits, graph.name)
        self.fn = self._slow_call
        if self.fast:
            loader = importlib.machinery.ExtensionFileLoader(module, self.library_path)
            spec = importlib.util.spec_from_file_location(module, self.library_path, loader=loader)
            ext = importlib.util.module_from_spec(spec)
            loader.exec_module(ext)
            items = [self._slow_call if isinstance(key, tuple) and key[0] == "fallback" else item
                     for key, item in zip(objs.keys, objs.items)]
            ext.setup(tuple(items))
            self.fn = ext.call

    def _slow_call(self, *args):
        outs = self._slow(*args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return f"<gradc.CFunction {self.name}>"
