"""Small functions every emitted module carries (so it imports nothing but numpy/math).

They only run when an argument is wrong, or to convert a scalar argument, so
the checks in the hot path stay one inline ``if`` per parameter.
"""

ARRAY_CHECK = '''
def _bad_argument(function, name, value, expected):
    """Raise a clear ValueError for an argument that does not match the compiled signature."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    got = type(value).__name__ if shape is None else f"{type(value).__name__} of dtype {dtype}, shape {tuple(shape)}"
    raise ValueError(f"{function}: argument {name!r} must be {expected}, got {got}; "
                     "recompile for other shapes or dtypes")
'''

SCALAR_ARG = '''
def _scalar_argument(function, name, value, dtype):
    """A scalar argument converted to the compiled dtype (Python float for float64)."""
    if getattr(value, "shape", ()) != () or isinstance(value, (bool, str)):
        _bad_argument(function, name, value, "a scalar")
    try:
        return float(value) if dtype is None else dtype(value)
    except (TypeError, ValueError):
        _bad_argument(function, name, value, "a real scalar")
'''

STATIC_CHECK = '''
def _bad_static(function, name, value, expected):
    raise ValueError(f"{function}: argument {name!r} was {expected!r} when this code was compiled, "
                     f"got {value!r}; recompile for the new value")
'''
