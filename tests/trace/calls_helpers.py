"""Helpers imported by ``test_calls.py`` (a user module other than the traced function's)."""
import numpy as np


def weighted_sum(v, w):
    """A helper with a loop, reached as ``calls_helpers.weighted_sum`` or imported by name."""
    total = 0.0
    for k in range(v.shape[0]):
        total = total + w[k] * np.tanh(v[k])
    return total
