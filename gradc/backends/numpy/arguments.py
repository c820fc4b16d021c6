"""The argument checks at the top of each emitted NumPy function.

One inline ``if`` per array (its type, shape and dtype, the dtype compared by identity
with a module-level ``np.dtype``), one for all float scalars, each calling a helper of
``runtime_helpers`` only when an argument is wrong or must be converted; a named size is
bound by name (``n = X.shape[0]``) where first read.

>>> import numpy as np
>>> from gradc.backends.numpy.emit import Function, emit_module
>>> from gradc.trace import trace
>>> src = emit_module([Function("f", trace(lambda x, s: np.sum(x) / s, np.ones(2), 1.0), "f.")])
>>> print(src[src.index("def f"):src.index("    try")])
def f(x, s):
    \"\"\"f.\"\"\"
    if type(x) is not np.ndarray or x.shape != (2,) or x.dtype is not _float64:
        _check_array('f', 'x', x, (2,), _float64)
    if type(s) is not float:
        s = _scalar_argument('f', 's', s, None)
<BLANKLINE>
"""
from __future__ import annotations

import ast

from gradc.backends.numpy.names import user
from gradc.ir.graph import Var
from gradc.ops import spell


class ArgumentChecks:
    """The checks of a function emitter (``fn``, ``graph``, ``state`` and ``numpy_scalars`` are its)."""

    def checks(self) -> list:
        inputs = {v.name: v for v in self.graph.inputs}
        self.sizes_bound = []  # the named sizes read so far, in order
        out = []
        floats = [v for v in self.graph.inputs if v.type.shape == () and v.type.dtype == "f64"]
        for name in self.graph.params:
            if name in inputs and inputs[name] in floats:
                if inputs[name] is floats[0]:
                    out.append(self.check_floats(floats))
            elif name in inputs:
                check = self.check_input(inputs[name])
                out.extend(check if isinstance(check, list) else [check])
            else:
                value = self.graph.static[name]
                self.state.helpers.add("static")
                test = ast.Compare(ast.Name(user(name), ast.Load()), [ast.NotEq()], [spell.literal(value)])
                if value is None or isinstance(value, bool):
                    test = ast.Compare(ast.Name(user(name), ast.Load()), [ast.IsNot()], [ast.Constant(value)])
                raise_it = ast.Expr(spell.call("_bad_static", *map(ast.Constant, (self.fn.name, name)),
                                               ast.Name(user(name), ast.Load()), spell.literal(value)))
                out.append(ast.If(test, [raise_it], []))
        return out

    def convert_scalar(self, var: Var) -> ast.stmt:
        """``x = _scalar_argument(...)``: a scalar argument converted to its dtype, or a ValueError.

        A float64 scalar becomes a Python float in all-scalar code (see fallback.py), else an ``np.float64``,
        so that ``x / y`` of two scalar arguments follows NumPy (inf, nan and a warning where Python raises).
        """
        self.state.helpers.update({"bad", "scalar"})
        math_float = var.type.dtype == "f64" and not self.numpy_scalars
        dtype = ast.Constant(None) if math_float else spell.dotted(f"np.{var.type.np_dtype.name}")
        return spell.assign(user(var.name), spell.call("_scalar_argument", ast.Constant(self.fn.name),
                                                       ast.Constant(var.name), ast.Name(user(var.name), ast.Load()),
                                                       dtype))

    def check_floats(self, floats: list) -> ast.stmt:
        """One test for all float64 scalars: ``if type(x) is not float or type(y) is not float:`` convert
        (``np.float64`` outside all-scalar code)."""
        kind = spell.dotted("np.float64") if self.numpy_scalars else ast.Name("float", ast.Load())
        tests = [ast.Compare(spell.call("type", ast.Name(user(v.name), ast.Load())), [ast.IsNot()], [kind])
                 for v in floats]
        test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)
        return ast.If(test, [self.convert_scalar(v) for v in floats], [])

    def check_input(self, var: Var):
        t = var.type
        if t.shape == ():
            return self.convert_scalar(var)
        if t.is_symbolic:
            return self.check_sized(var)
        name = ast.Name(user(var.name), ast.Load())
        self.state.helpers.update({"bad", "array"})
        dtype = ast.Name(self.state.dtype_name(t.np_dtype), ast.Load())
        test = ast.BoolOp(ast.Or(), [
            ast.Compare(spell.call("type", name), [ast.IsNot()], [spell.dotted("np.ndarray")]),
            ast.Compare(ast.Attribute(name, "shape", ast.Load()), [ast.NotEq()], [spell.literal(t.shape)]),
            ast.Compare(ast.Attribute(name, "dtype", ast.Load()), [ast.IsNot()], [dtype])])
        check = ast.Expr(spell.call("_check_array", ast.Constant(self.fn.name), ast.Constant(var.name), name,
                                    spell.literal(t.shape), dtype))
        return ast.If(test, [check], [])

    def check_sized(self, var: Var) -> list:
        """An array with named sizes: an inline test of what is known, then each new size bound by name
        (``n = X.shape[0]``); later arguments and the body read ``n``."""
        t, name = var.type, ast.Name(user(var.name), ast.Load())
        self.state.helpers.update({"bad", "sized"})
        dtype = ast.Name(self.state.dtype_name(t.np_dtype), ast.Load())
        bound = self.sizes_bound

        def axis_of(k):
            return ast.Subscript(ast.Attribute(name, "shape", ast.Load()), ast.Constant(k), ast.Load())
        tests = [ast.Compare(spell.call("type", name), [ast.IsNot()], [spell.dotted("np.ndarray")]),
                 ast.Compare(ast.Attribute(name, "ndim", ast.Load()), [ast.NotEq()], [ast.Constant(t.ndim)])]
        fresh = []
        for k, d in enumerate(t.shape):
            if isinstance(d, int) or d in bound:
                tests.append(ast.Compare(axis_of(k), [ast.NotEq()], [spell.literal(d)]))
            elif d not in fresh:
                fresh.append(d)
                tests.append(ast.Compare(axis_of(k), [ast.Lt()], [ast.Constant(1)]))
        tests.append(ast.Compare(ast.Attribute(name, "dtype", ast.Load()), [ast.IsNot()], [dtype]))
        pattern = ast.Tuple([ast.Constant(d if isinstance(d, int) else d.name) for d in t.shape], ast.Load())
        known = ast.Dict([ast.Constant(s.name) for s in bound], [ast.Name(user(s.name), ast.Load()) for s in bound])
        check = ast.Expr(spell.call("_check_sized", ast.Constant(self.fn.name), ast.Constant(var.name), name,
                                    pattern, dtype, known))
        out = [ast.If(ast.BoolOp(ast.Or(), tests), [check], [])]
        for d in fresh:
            out.append(spell.assign(user(d.name), axis_of(t.shape.index(d))))
            bound.append(d)
        return out
