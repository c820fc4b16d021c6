"""SciPy functions reached in the ways users reach them (tests/transforms/test_scipy_routing.py): through an
object's attribute, a method, an alias, a ``functools.partial`` and a dict, all from another module."""
import functools

import numpy as np
import scipy.special
from scipy.special import logsumexp as lse_alias


class Holder:
    def __init__(self):
        self.fn = lambda x: scipy.special.logsumexp(x, axis=-1)  # an attribute holding a lambda

    def method(self, x):
        return lse_alias(np.sin(x), axis=-1) + scipy.special.expit(x).sum(axis=-1)


def rows(x, axis):
    return scipy.special.logsumexp(x * 0.5, axis=axis)


holder = Holder()
partial_rows = functools.partial(rows, axis=-1)
table = {"softplus": lambda x: scipy.special.logsumexp(np.stack([x, np.zeros_like(x)]), axis=0).sum(axis=-1)}
