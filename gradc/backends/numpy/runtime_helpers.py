"""Small functions every emitted module carries (so it imports nothing but numpy/math).

They only run when an argument is wrong, or to convert a scalar argument, so
the checks in the hot path stay one inline ``if`` per parameter.
"""
from gradc.backends.checks import BAD_ARGUMENT, SIZED_CHECK  # noqa: F401  (shared with the other targets)

ARRAY_CHECK = '''
def _check_array(function, name, value, shape, dtype):
    """Raise a clear ValueError unless value is an ndarray of this shape and dtype.

    The inline test compares dtypes by identity (fast); an equal dtype that is not
    NumPy's canonical instance lands here and is accepted.
    """
    if type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype:
        _bad_argument(function, name, value, f"{dtype} array of shape {shape}")
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

