"""Checks of named sizes shared by every target: emitted into NumPy and array-API modules as
``_check_sized``, and run in process by the C target's Python entry points.

>>> import numpy as np
>>> sized_checker()("f", "X", np.ones((4, 3)), ("n", 3), np.dtype("float64"), {})
{'n': 4}
"""
from __future__ import annotations

SIZED_CHECK = '''
def _check_sized(function, name, value, shape, dtype, sizes):
    """Raise a clear ValueError unless value is an array of this dtype and shape, where a name in shape is
    a size that is at least 1 and agrees with the sizes read from earlier arguments. Returns the sizes."""
    expected = f"{dtype} array of shape ({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
    if getattr(value, "dtype", None) != dtype or getattr(value, "ndim", None) != len(shape):
        _bad_argument(function, name, value, expected)
    known = dict(sizes)
    for want, got in zip(shape, tuple(value.shape)):
        if not isinstance(want, str):
            if want != got:
                _bad_argument(function, name, value, expected)
        elif got < 1:
            raise ValueError(f"{function}: argument {name!r} has shape {tuple(value.shape)}: size {want} is {got}, "
                             "and a named size must be at least 1")
        elif known.setdefault(want, got) != got:
            raise ValueError(f"{function}: argument {name!r} has shape {tuple(value.shape)}, so {want} = {got}, but "
                             f"an earlier argument has {want} = {known[want]}; the sizes named {want} must agree")
    return known
'''

BAD_ARGUMENT = '''
def _bad_argument(function, name, value, expected):
    """Raise a clear ValueError for an argument that does not match the compiled signature."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    got = type(value).__name__ if shape is None else f"{type(value).__name__} of dtype {dtype}, shape {tuple(shape)}"
    raise ValueError(f"{function}: argument {name!r} must be {expected}, got {got}; "
                     "recompile for other shapes or dtypes")
'''


def sized_checker():
    """``_check_sized`` as a function of this process (the C target's Python entry points check with it).

    >>> import numpy as np
    >>> sized_checker()("f", "x", np.ones(3), ("n",), np.dtype("float64"), {})
    {'n': 3}
    """
    if not _CHECKER:
        namespace: dict = {"np": __import__("numpy")}
        exec(BAD_ARGUMENT + SIZED_CHECK, namespace)
        _CHECKER.append(namespace["_check_sized"])
    return _CHECKER[0]


_CHECKER: list = []
