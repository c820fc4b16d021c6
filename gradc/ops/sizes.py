"""``size``: a named size as a number at run time (``mean`` over ``n`` rows divides by ``n``).

A shape may hold names (``f64[n,10]``, see ``gradc.ir.dims``); where a computation needs such a
size as a value (the mean's divisor, its VJP, ``loss / X.shape[0]`` in the user's code), the
``size`` equation reads it from a value whose shape holds it. Known sizes never get an equation:
``size_value`` returns them as Python numbers, so constant folding sees them as before.

>>> import numpy as np
>>> size_value(np.ones((4, 3)), (0,), "f64")
4.0
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import TraceError
from gradc.ir.dims import as_dim, dim_text, is_dim_expr, prod
from gradc.ir.registry import bind, defop
from gradc.ir.types import NP_DTYPES, TensorType
from gradc.ops import c_spell, spell
from gradc.ops.values import aval


def size_value(x, axes, dtype: str = "f64"):
    """The product of ``x``'s sizes along ``axes`` as a ``dtype`` scalar: a Python number when known, else
    a ``size`` equation read at run time."""
    dim = prod(aval(x).shape[a] for a in axes)
    if isinstance(dim, int):
        return float(dim) if dtype in ("f64", "f32") else dim
    return bind("size", x, axes=tuple(axes), dim=dim, dtype=dtype)


def dim_value(dim, like, dtype: str = "f64"):
    """A size expression (``n``, ``n - 1``, ``3*n``) as a ``dtype`` scalar of ``like``'s trace: a Python number
    when known, else ``size`` equations (each name read from the input whose shape first holds it) and
    arithmetic on them.

    >>> dim_value(4, None)
    4.0
    """
    if not is_dim_expr(dim):
        return float(dim) if dtype in ("f64", "f32") else int(dim)
    import gradc.ops.elementwise as ew

    if dim.is_Integer:
        return dim_value(int(dim), like, dtype)
    if dim.is_Number:  # 0.5 * n: a float coefficient (the value is a float then)
        return float(dim)
    if dim.is_Symbol:
        root = like.builder.root
        source = root.size_sources.get(dim)
        if source is None:
            raise TraceError(f"the size {dim.name} is not the length of any argument's axis",
                             hint="name sizes in the arguments' types (f64[n,3])")
        var, axis = source
        return bind("size", type(like)(root, var), axes=(axis,), dim=dim, dtype=dtype)
    if dim.is_Add or dim.is_Mul:
        combine = ew.add if dim.is_Add else ew.mul
        terms = [dim_value(a, like, dtype) for a in dim.args]
        out = terms[0]
        for t in terms[1:]:
            out = combine(out, t)
        return out
    if dim.is_Pow and dim.exp.is_Integer and dim.exp != 0:
        base = dim_value(dim.base, like, dtype)
        out = base
        for _ in range(abs(int(dim.exp)) - 1):
            out = ew.mul(out, base)
        return out if dim.exp > 0 else ew.div(1.0, out)
    if type(dim).__name__ == "Mod":
        from gradc.ops.special_numpy import mod
        return mod(dim_value(dim.args[0], like, dtype), dim_value(dim.args[1], like, dtype))
    raise TraceError(f"the size {dim_text(dim)} cannot be used as a value",
                     hint="use sums and products of the named sizes")


def _infer(types, params):
    return TensorType((), params["dtype"])


def _impl(x, axes, dim, dtype):
    return np.asarray(int(np.prod([np.shape(x)[a] for a in axes], dtype=np.int64)), NP_DTYPES[dtype])[()]


def _spell(args, params, out, target):
    kind = "float" if params["dtype"] == "f64" else f"np.{NP_DTYPES[params['dtype']].name}"
    return spell.call(kind, spell.literal(as_dim(params["dim"])))


def _batch(x, batched, axes, dim, dtype):
    n = aval(x).shape[0]
    value = bind("size", x, axes=tuple(a + 1 for a in axes), dim=dim, dtype=dtype)
    return bind("broadcast_to", value, shape=(n,))


defop("size", infer=_infer, impl=_impl, nondiff=True, batch=_batch,
      doc="the number of elements along named axes, read at run time (dim: its size expression)",
      np=_spell, c=c_spell.loop("size"))  # C: the size argument, cast (gradc.backends.c.loops.op_size)

_ = ast  # spellings build ast nodes through spell
