"""``np.vectorize`` on traced arguments: the Python function mapped over the broadcast elements by ``gradc.vmap``.

NumPy's ``vectorize`` calls the function once per element with concrete scalars; a traced array has none, so
gradc traces the function once on a scalar (``if`` on it becomes a branch, as under ``gradc.vmap``) and maps it
over the elements: the result, its derivatives and both targets are ``vmap``'s. Supported: positional and
keyword arguments (broadcast together, as NumPy does), ``excluded=`` (passed unchanged), ``otypes=`` (the
results cast), a function returning a tuple (a tuple of arrays), the decorator forms ``@np.vectorize`` and
``@np.vectorize(otypes=...)``, and ``signature=`` with core dimensions (``"(n),(n)->()"``): the loop dimensions
are mapped, the core ones passed whole. Routed by name in traced functions (``np.vectorize``, a from-import,
or an ``np.vectorize`` object made outside the traced function).

>>> import gradc
>>> float(gradc.grad(lambda x: np.sum(vectorize(lambda t: t * t if t > 0 else -t)(x)))(np.array([2.0, -1.0])).sum())
3.0
"""
from __future__ import annotations

import re

import numpy as np

from gradc.derivatives.vectorize import vmap
from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.trace import array_routing

_CORE = re.compile(r"\(([^()]*)\)")


def _traced(values) -> bool:
    return any(isinstance(v, Traced) or (isinstance(v, (list, tuple)) and _traced(v)) for v in values)


def _core_dims(signature):
    """The number of core dimensions of each input of a gufunc signature such as ``"(n),(n,m)->(m)"``."""
    if signature is None:
        return None
    inputs, arrow, _ = signature.replace(" ", "").partition("->")
    if not arrow:
        raise TraceError(f"np.vectorize: signature={signature!r} has no '->'", hint="e.g. signature='(n),(n)->()'")
    return [len([d for d in group.split(",") if d]) for group in _CORE.findall(inputs)]


class vectorize:  # noqa: N801 (NumPy's name)
    """Stands in for ``np.vectorize`` in traced functions (NumPy's own on concrete arguments)."""

    def __init__(self, pyfunc=None, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        self.pyfunc, self.otypes, self.excluded, self.signature = pyfunc, otypes, set(excluded or ()), signature
        self.cache, self.__doc__ = cache, doc if doc is not None else getattr(pyfunc, "__doc__", None)

    def _real(self):
        return np.vectorize(self.pyfunc, otypes=self.otypes, excluded=self.excluded, cache=self.cache,
                            signature=self.signature)

    def __call__(self, *args, **kwargs):
        if self.pyfunc is None:  # @np.vectorize(otypes=...) decorating a function
            return vectorize(args[0], self.otypes, self.__doc__, self.excluded, self.cache, self.signature)
        if not _traced(args) and not _traced(kwargs.values()):
            return self._real()(*args, **kwargs)
        mapped = [i for i in range(len(args)) if i not in self.excluded] + \
            [k for k in sorted(kwargs) if k not in self.excluded]
        values = [args[i] if isinstance(i, int) else kwargs[i] for i in mapped]
        values = [v if isinstance(v, Traced) else np.asarray(v) for v in values]
        cores = _core_dims(self.signature) or [0] * len(values)
        if len(cores) != len(values):
            raise TraceError(f"np.vectorize: signature={self.signature!r} has {len(cores)} inputs, the call passes "
                             f"{len(values)}", hint="pass one argument per input of the signature")
        loops = [np.shape(v)[: np.ndim(v) - c] for v, c in zip(values, cores)]
        if any(np.ndim(v) < c for v, c in zip(values, cores)):
            raise TraceError("np.vectorize: an argument has fewer dimensions than its signature's core dimensions",
                             hint=f"check the shapes against signature={self.signature!r}")
        shape = np.broadcast_shapes(*loops)
        size = int(np.prod(shape))
        if size == 0:
            raise TraceError("np.vectorize over an empty array is not supported by gradc on traced values",
                             hint="skip the call when there are no elements")
        flat = [np.reshape(np.broadcast_to(v, shape + np.shape(v)[np.ndim(v) - c:]), (size,) + np.shape(v)[
            np.ndim(v) - c:]) for v, c in zip(values, cores)]

        def one(elements):
            positional, keywords = list(args), dict(kwargs)
            for key, element in zip(mapped, elements):
                if isinstance(key, int):
                    positional[key] = element
                else:
                    keywords[key] = element
            return self.pyfunc(*positional, **keywords)

        out = vmap(one)(tuple(flat))
        results = out if isinstance(out, tuple) else (out,)
        results = tuple(np.reshape(r, shape + np.shape(r)[1:]) for r in results)
        if self.otypes:
            types = self.otypes if isinstance(self.otypes, (list, tuple)) else list(self.otypes)
            results = tuple(r.astype(np.dtype(t)) for r, t in zip(results, types))
        return results if isinstance(out, tuple) else results[0]


def _from_numpy(value):
    """A stand-in for an ``np.vectorize`` object made outside the traced function (``@np.vectorize``)."""
    if isinstance(value, np.vectorize):
        return vectorize(value.pyfunc, value.otypes or None, value.__doc__, value.excluded, value.cache,
                         value.signature)
    return None


array_routing.NUMPY.vectorize = vectorize
array_routing.add_stand_in(np.vectorize, vectorize)
array_routing.add_stand_in_maker(_from_numpy)

__all__ = ["vectorize"]
