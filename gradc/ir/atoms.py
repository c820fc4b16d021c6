"""The atoms of the IR: a named :class:`Var` or a :class:`Const` (plain data).

>>> from gradc.ir.types import TensorType
>>> Var("x", TensorType((3,), "f64"))
x: f64[3]
"""
from __future__ import annotations

import numpy as np

from gradc.ir.types import TensorType, type_of_array


class Var:
    """A named value of a graph. Compared by identity; the name is for people.

    >>> Var("x", TensorType((), "f64"))
    x: f64[]
    """

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: TensorType):
        self.name = name
        self.type = type

    def __repr__(self) -> str:
        return f"{self.name}: {self.type}"


class Const:
    """A constant operand: a NumPy array (0-d for scalars), never mutated.

    >>> Const(np.float64(2.0)).type
    f64[]
    """

    __slots__ = ("value", "type")

    def __init__(self, value):
        arr = np.array(value)  # a private copy, so later changes by the caller cannot leak in
        arr.setflags(write=False)
        self.value = arr
        self.type = type_of_array(arr)

    @property
    def is_scalar(self) -> bool:
        return self.value.ndim == 0

    def key(self):
        """A hashable identity of the value (for CSE and folding)."""
        return (self.type, self.value.tobytes())

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


Atom = Var | Const
