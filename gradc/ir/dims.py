"""Symbolic sizes: a dimension is a Python int or a SymPy integer expression of named sizes.

``f64[n,10]`` is a matrix with ``n`` rows, ``n`` known only when the compiled function runs.
Names are SymPy symbols declared positive integers, so SymPy decides ``n >= 1`` and ``n + 1 > n``
itself, simplifies ``n - 1 + 1`` to ``n``, and the C printer writes size arithmetic for free.
An expression that comes out constant is turned back into a Python int (``as_dim``), so a
shape holds an ``int`` wherever its size is known.

>>> n = size_symbol("n")
>>> shape_text((n, 10)), shape_text((n - 1, 2 * n))
('n,10', 'n-1,2*n')
>>> as_dim(n - n + 3), is_symbolic((n, 3)), is_symbolic((2, 3))
(3, True, False)
"""
from __future__ import annotations

import ast
import keyword
import re

import numpy as np

# SymPy is imported where a name is made or read: a shape of ints never needs it (import gradc stays fast)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def size_symbol(name: str):
    """The symbol of a named size (a positive integer).

    >>> size_symbol("n").is_positive
    True
    """
    if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name) or name.startswith("_"):
        raise ValueError(f"size name {name!r} is not a plain identifier (letters, digits, _; not starting with _)")
    return _size_class()(name, integer=True, positive=True)


_SIZE_CLASS = []
AS_VALUE: list = []  # the tracer's size_operand (gradc.trace registers it: the IR layer does not import it)


def _size_class():
    """``Size``: a SymPy symbol that refuses to become a Python int with a message saying what to do."""
    if not _SIZE_CLASS:
        import sympy as sp

        from gradc.errors import StaticValueNeeded

        class Size(sp.Symbol):
            def __index__(self):
                raise StaticValueNeeded(
                    f"the size {self.name} is known only when the compiled function runs, and Python or NumPy "
                    "needs it as a number here (np.zeros(n), range(n), len(x), an index)",
                    hint="build arrays from the inputs (np.zeros_like(x), np.ones_like(X[:, 0])) and reduce with "
                         "np.sum/np.mean; or compile for a fixed size")

            __int__ = __index__

            def __reduce_ex__(self, protocol):  # pickled by name: the class itself is made here, not importable
                return size_symbol, (self.name,)

            def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
                # np.log(X.shape[0]): the size as a value of the trace in progress, then NumPy's ufunc on it
                size_operand = AS_VALUE[0] if AS_VALUE else (lambda a, dtype: a)
                converted = [size_operand(a, "f64") if isinstance(a, Size) else a for a in inputs]
                if any(a is b for a, b in zip(converted, inputs) if isinstance(b, Size)):
                    return NotImplemented  # no trace in progress
                return getattr(ufunc, method)(*converted, **kwargs)

        _SIZE_CLASS.append(Size)
    return _SIZE_CLASS[0]


def is_dim_expr(d) -> bool:
    """Whether ``d`` is a symbolic size (not a Python int)."""
    return type(d) is not int and hasattr(d, "free_symbols")


def is_symbolic(shape) -> bool:
    """Whether any dimension of ``shape`` is symbolic."""
    return shape is not None and any(type(d) is not int and hasattr(d, "free_symbols") for d in shape)


def as_dim(d):
    """A dimension in canonical form: a Python int when its value is known, else a SymPy expression.

    >>> import sympy as sp
    >>> as_dim(np.int64(4)), as_dim(sp.Integer(2))
    (4, 2)
    """
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return int(d)
    if hasattr(d, "free_symbols"):
        return int(d) if d.is_Integer else d
    raise TypeError(f"a dimension must be an int or a size expression, got {d!r}")


def dim_text(d) -> str:
    """A dimension as printed in a type: ``10``, ``n``, ``n-1``, ``2*n``."""
    return str(d).replace(" ", "")


def shape_text(shape) -> str:
    return ",".join(dim_text(d) for d in shape)


def symbols_of(shape) -> list:
    """The size names a shape reads, sorted by name (deterministic).

    >>> symbols_of((size_symbol("n"), 3, size_symbol("m") + 1))
    [m, n]
    """
    found = set()
    for d in shape or ():
        if is_dim_expr(d):
            found |= d.free_symbols
    return sorted(found, key=lambda s: s.name)


_NUMBER_NEEDED = ("Relational", "Cannot convert expression", "Cannot convert symbols",
                  "cannot be interpreted as an integer", "which has no callable")


def needed_a_number(error: TypeError) -> bool:
    """Whether ``error`` is SymPy's (or NumPy's, on a size) when a size expression was used where a number
    was needed: ``if n > 10``, ``float(n)``, ``np.arange(n - 1)``, ``np.log(n + 1.0)``.

    >>> needed_a_number(TypeError("cannot determine truth value of Relational: n > 10"))
    True
    """
    text = str(error)
    return any(w in text for w in _NUMBER_NEEDED)


def substitute(d, sizes: dict):
    """The value of dimension ``d`` once each name has its size (``sizes``: name -> int).

    >>> substitute(2 * size_symbol("n") - 1, {"n": 5})
    9
    """
    if not is_dim_expr(d):
        return d
    value = d.subs({s: sizes[s.name] for s in d.free_symbols})
    if not value.is_Integer:
        raise ValueError(f"size {dim_text(d)} is not an integer for {sizes}")
    return int(value)


def parse_dim(text: str):
    """A dimension from its text in a type: ``10`` or a name (``n``).

    >>> parse_dim("n"), parse_dim(" 7")
    (n, 7)
    """
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    return size_symbol(text)


def dim_ast(d, name_of=lambda s: s.name) -> ast.expr:
    """Python source of a dimension: ``n``, ``n - 1``, ``2 * n``, ``n // 2`` (``name_of``: the emitted name
    of each size).

    >>> ast.unparse(dim_ast(2 * size_symbol("n") - 1))
    '2 * n - 1'
    """
    import sympy as sp

    if not is_dim_expr(d):
        return _int_ast(int(d))
    if d.is_Symbol:
        return ast.Name(name_of(d), ast.Load())
    if d.is_Integer:
        return _int_ast(int(d))
    if d.is_Add:
        terms = sorted(d.args, key=lambda t: (t.is_number, sp.default_sort_key(t)))  # names first, constant last
        out = dim_ast(terms[0], name_of)
        for t in terms[1:]:
            negative = t.could_extract_minus_sign()
            out = ast.BinOp(out, ast.Sub() if negative else ast.Add(), dim_ast(-t if negative else t, name_of))
        return out
    if d.is_Mul:
        coeff, rest = d.as_coeff_Mul()
        if coeff == -1:
            return ast.UnaryOp(ast.USub(), dim_ast(rest, name_of))
        factors = ([coeff] if coeff != 1 else []) + sorted(sp.Mul.make_args(rest), key=sp.default_sort_key)
        out = dim_ast(factors[0], name_of)
        for f in factors[1:]:
            out = ast.BinOp(out, ast.Mult(), dim_ast(f, name_of))
        return out
    if isinstance(d, sp.floor) and d.args[0].is_Mul:
        num, den = d.args[0].as_numer_denom()
        return ast.BinOp(dim_ast(num, name_of), ast.FloorDiv(), dim_ast(den, name_of))
    if isinstance(d, sp.Mod):  # np.roll's shift modulo a named size: Python's % on sizes >= 1
        return ast.BinOp(dim_ast(d.args[0], name_of), ast.Mod(), dim_ast(d.args[1], name_of))
    if isinstance(d, sp.Pow) and d.exp.is_Integer and d.exp > 0:
        return ast.BinOp(dim_ast(d.base, name_of), ast.Pow(), _int_ast(int(d.exp)))
    raise ValueError(f"size expression {dim_text(d)} has no Python spelling in gradc")


def _int_ast(v: int) -> ast.expr:
    return ast.UnaryOp(ast.USub(), ast.Constant(-v)) if v < 0 else ast.Constant(v)


def prod(dims):
    """The product of dimensions (an int when all are known).

    >>> prod((2, size_symbol("n"))), prod((2, 3))
    (2*n, 6)
    """
    out = 1
    for d in dims:
        out = out * d
    return as_dim(out)


def broadcast(*shapes) -> tuple:
    """NumPy's broadcasting of shapes that may hold names (equal sizes, or 1 against anything; ``n`` against
    10 does not broadcast); a ValueError when they do not broadcast.

    >>> broadcast((size_symbol("n"), 1), (3,))
    (n, 3)
    """
    if not any(is_symbolic(s) for s in shapes):
        return tuple(np.broadcast_shapes(*shapes))
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(ndim):
        sizes = []
        for s in shapes:
            k = axis - ndim + len(s)
            if k >= 0 and s[k] != 1 and s[k] not in sizes:
                sizes.append(s[k])
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes[0] if sizes else 1)
    return tuple(out)
