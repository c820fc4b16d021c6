"""The op registry and the functions that apply ops (to arrays or traced values).

Importing this package registers every op family.

>>> from gradc.ops import OPS
>>> OPS["exp"].doc
'x_bar = ct * out'
"""
from gradc.ops import elementwise, linalg, reduce, shape  # noqa: F401  (registers the ops)
from gradc.ops.registry import OPS, Op, bind, defop

__all__ = ["OPS", "Op", "bind", "defop", "elementwise", "linalg", "reduce", "shape"]
