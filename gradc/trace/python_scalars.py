"""Traced values that stand for Python numbers of the user's code: a kept loop's counter (``for i in range(n)``)
and a loop carry begun as ``total = 0.0``. NumPy promotes Python numbers weakly (NEP 50: ``0.0 + float32`` is
float32, ``i * x`` keeps a float32 ``x`` float32), and arithmetic between Python numbers gives a Python number
again, so these tracers say ``weak_python`` (read by ``gradc.ops.values.result_dtype``) and keep it through
``+ - * / // % **`` with Python numbers; ``total += v`` rebinds, as it does for a number.

>>> python_scalar_types()[1].weak_python
True
"""
from __future__ import annotations

_TYPES: list = []


def python_scalar_types() -> tuple:
    """``(Rebinding, PythonNumber)``: a tracer whose ``+=`` rebinds (a NumPy scalar the loop made), and one that
    is also a Python number (weak in promotion). Made on first use (the tracer module imports the ops)."""
    if _TYPES:
        return tuple(_TYPES)
    from gradc.trace.tracer import Tracer

    class Rebinding(Tracer):
        __slots__ = ()
        weak_python = False

        def __iadd__(self, o): return self + o
        def __isub__(self, o): return self - o
        def __imul__(self, o): return self * o
        def __itruediv__(self, o): return self / o
        def __ipow__(self, o): return self ** o
        def __ifloordiv__(self, o): return self // o
        def __imod__(self, o): return self % o

    class PythonNumber(Rebinding):
        __slots__ = ()
        weak_python = True

    def _keeping(name):
        method = getattr(Tracer, name)

        def arithmetic(self, o):
            result = method(self, o)
            python = (isinstance(o, (int, float)) and not isinstance(o, bool)) or getattr(o, "weak_python", False)
            if python and isinstance(result, Tracer) and result.aval.shape == () and \
                    result.aval.np_dtype.kind in "iuf":
                return PythonNumber(result.builder, result.atom)
            return result
        arithmetic.__name__ = name
        return arithmetic

    for name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                 "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__"):
        setattr(PythonNumber, name, _keeping(name))
    PythonNumber.__neg__ = lambda self: PythonNumber(self.builder, (-Tracer(self.builder, self.atom)).atom)
    _TYPES.extend((Rebinding, PythonNumber))
    return tuple(_TYPES)
