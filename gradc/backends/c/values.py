"""Shared pieces of the C emitter: C types, names, SymPy's C99 printer, value locations, statics.

>>> Loc("x", (2, 3)).at(["i0", "i1"])
'x[3*i0 + i1]'
>>> c_name("int"), c_name("t0")
('int_', 't0')
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import sys

import numpy as np
import sympy as sp
from sympy.codegen.ast import float32, real
from sympy.printing.c import C99CodePrinter

from gradc.backends.c import mathlib as c_mathlib
from gradc.backends.c.names import fresh
from gradc.ir.dims import is_dim_expr, is_symbolic
from gradc.ir.dims import prod as dims_prod
from gradc.ir.graph import Var

C_TYPES = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "bool": "unsigned char",
           "c128": "double _Complex", "c64": "float _Complex"}  # C99 complex.h (tgmath.h picks cexp for exp)
STACK_LIMIT = 65536  # bytes of work arrays a function keeps on the stack


class _Printer(C99CodePrinter):
    """SymPy's C99 printer, with ternaries on one line and booleans as 0/1.

    ``dtype="f32"`` computes in ``float`` (``expf``, ``1.5F``); ``vector=True`` calls
    the vectorisable functions of :mod:`gradc.backends.c.mathlib` instead of libm's (sin, cos and tan:
    right up to ``|x| = 2**20`` only, the caller fixes larger arguments up), ``vector=False`` its scalar
    sin, cos and tan (a branch to libm's beyond ``|x| = 2**20``, faster than glibc's below);
    ``selects=True`` prints ``cond ? a : b`` as ``gradc_select(cond, a, b)`` (float values only).
    """

    def __init__(self, dtype="f64", vector=False, selects=False):
        settings = {"user_functions": {"trunc": "trunc", "to_float32": "(float)"}}  # a cast reads as a call
        if dtype == "f32":
            settings["type_aliases"] = {real: float32}
        super().__init__(settings)
        self.vector_names = ({**c_mathlib.VECTOR_NAMES[dtype], **c_mathlib.LIMITED_NAMES[dtype]} if vector
                             else c_mathlib.SCALAR_NAMES[dtype])
        self.select_name = ("gradc_selectf" if dtype == "f32" else "gradc_select") if selects else None

    def _print_vectorisable(self, expr):
        name = self.vector_names.get(type(expr).__name__)
        if name is None:
            return self._print_math_func(expr)
        return f"{name}({self._print(expr.args[0])})"

    _print_exp = _print_log = _print_log1p = _print_expm1 = _print_tanh = _print_vectorisable
    _print_sinh = _print_cosh = _print_sin = _print_cos = _print_tan = _print_vectorisable

    def _print_Piecewise(self, expr):
        *cases, last = expr.args
        text = self._print(last.expr)
        for e, c in reversed(cases):
            text = f"({self._print(c)} ? {self._print(e)} : {text})"
        return text

    def _print_Pow(self, expr):
        # x**2 (also x**2.0) as x*x: exact like pow(x, 2.0) (and NumPy's square), reads better, and keeps
        # the loop free of a libm call, so it vectorises. x**3 likewise, two roundings where pow has one (an
        # ulp apart at most), since libm's pow costs about ten multiplications
        if expr.exp.is_Number and float(expr.exp) in (2.0, 3.0):
            base = self._print(expr.base)
            if not expr.base.is_Symbol:
                base = f"({base})"
            return f"({'*'.join([base] * int(expr.exp))})"  # bracketed: SymPy places a Pow anywhere a call can go
        return super()._print_Pow(expr)

    def _print_ite(self, expr):
        cond, a, b = (self._print(arg) for arg in expr.args)
        if self.select_name:  # both computed, then chosen: no branch to stop a vectoriser
            return f"{self.select_name}({cond}, {a}, {b})"
        return f"({cond} ? {a} : {b})"

    def _print_Abs(self, expr):
        if expr.args[0].is_integer:  # fabs would compute in double (and round beyond 2**53)
            return f"gradc_abs_i64({self._print(expr.args[0])})"
        return super()._print_Abs(expr)

    def _print_ImaginaryUnit(self, expr):
        return "_Complex_I"  # complex.h's own name (its macro I could meet a user's name)

    def _print_isnan(self, expr):
        return f"isnan({self._print(expr.args[0])})"

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"


PRINTER = _Printer()


@functools.lru_cache(maxsize=None)
def printer(dtype: str = "f64", vector: bool = False, selects: bool = False) -> _Printer:
    """The printer computing in ``dtype`` (``"f32"`` for float, else double), calling gradc's vector math or libm.

    >>> x = sp.Symbol("x", real=True)
    >>> printer("f32", vector=True).doprint(sp.exp(-x) + 0.5), printer().doprint(sp.exp(-x) + 0.5)
    ('0.5F + gradc_expf(-x)', '0.5 + exp(-x)')
    """
    return _Printer(dtype if dtype in ("f32", "c64", "c128") else "f64", vector, selects)  # complex: libm's names


def c_name(name: str) -> str:
    """An IR name as a C identifier that cannot clash with C, its library or generated names (see ``names``)."""
    return fresh(name, ())


def std_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def size(shape):
    """The number of elements of ``shape``: an int, or a SymPy expression of its named sizes."""
    if is_symbolic(shape):
        return dims_prod(shape)
    return math.prod(int(d) for d in shape)  # Python ints: a tape of 2**61 rows must not wrap around


# ---------------------------------------------------------------- named sizes (``f64[n,3]``)
_SIZE_NAMES = contextvars.ContextVar("gradc_c_size_names", default=None)


@contextlib.contextmanager
def size_names(names: dict):
    """Within the block, ``dim_c`` prints the named size ``s`` as ``names[s.name]`` (its C parameter)."""
    token = _SIZE_NAMES.set(dict(names))
    try:
        yield
    finally:
        _SIZE_NAMES.reset(token)


class _DimPrinter(C99CodePrinter):
    """Integer size arithmetic in C: names as their C parameters, ``n**2`` as ``n*n``."""

    def _print_Symbol(self, expr):
        names = _SIZE_NAMES.get() or {}
        return names.get(expr.name, expr.name)

    def _print_Pow(self, expr):
        if expr.exp.is_Integer and expr.exp > 0:
            return "*".join([self.parenthesize(expr.base, 100)] * int(expr.exp))
        raise ValueError(f"size expression {expr} has no C spelling in gradc")

    def _print_Rational(self, expr):
        raise ValueError(f"size expression {expr} is not an integer")


_DIM_PRINTER = _DimPrinter()


def dim_c(d, paren=False) -> str:
    """C of a size: ``3``, ``n``, ``n - 1``, ``3*n`` (``paren``: bracketed when it is a sum, for ``s*i``).

    >>> from gradc.ir.dims import size_symbol
    >>> n = size_symbol("n")
    >>> dim_c(4), dim_c(3 * n), dim_c(n - 1, paren=True), dim_c(n * n)
    ('4', '3*n', '(n - 1)', 'n*n')
    """
    if not is_dim_expr(d):
        return str(d)
    text = _DIM_PRINTER.doprint(d)
    return f"({text})" if paren and (d.is_Add or text.startswith("-")) else text


def known(relation, unknown: bool) -> bool:
    """A comparison of sizes: its value when known (always for ints), else ``unknown``.

    >>> from gradc.ir.dims import size_symbol
    >>> n = size_symbol("n")
    >>> known(n >= 1, False), known(n > 1, False), known(3 > 2, False)
    (True, False, True)
    """
    if isinstance(relation, (bool, np.bool_)) or relation in (sp.true, sp.false):
        return bool(relation)
    return unknown  # a Relational SymPy cannot decide (n > 1)


class Loc:
    """Where a value's elements are: ``name[offset + sum(strides * index)]``, a scalar local, or a constant."""

    def __init__(self, name, shape, offset=0, strides=None, value=None, local=False, dtype="f64"):
        self.name, self.shape, self.offset = name, tuple(shape), offset
        self.strides = std_strides(shape) if strides is None else tuple(strides)
        self.value, self.local, self.dtype = value, local, dtype

    @property
    def standard(self):
        return self.value is None and self.strides == std_strides(self.shape)

    def at(self, idx) -> str:
        if self.value is not None:
            return printer(self.dtype).doprint(self.value)
        if self.local:
            return self.name
        terms = [dim_c(self.offset)] if self.offset != 0 else []
        for s, i in zip(self.strides, idx):
            if s != 0:
                terms.append(i if s == 1 else f"{dim_c(s, paren=True)}*{i}")
        return f"{self.name}[{' + '.join(terms) or '0'}]"

    def flat(self, k: str) -> str:
        """Element ``k`` in row-major order (standard locations only)."""
        if self.value is not None or self.local:
            return self.at(())
        return f"{self.name}[{dim_c(self.offset)} + {k}]" if self.offset != 0 else f"{self.name}[{k}]"

    def physical(self) -> np.ndarray:
        """Index into ``name`` of every element, as an array of the value's shape (fixed sizes only)."""
        if is_symbolic(self.shape) or is_dim_expr(self.offset) or any(is_dim_expr(s) for s in self.strides):
            raise ValueError("a table of element positions needs fixed sizes")
        phys = np.full(self.shape, self.offset, dtype=np.int64)
        for axis, s in enumerate(self.strides):
            shape = [1] * len(self.shape)
            shape[axis] = self.shape[axis]
            phys = phys + s * np.arange(self.shape[axis]).reshape(shape)
        return phys


def loops(shape):
    """Lines opening one ``for`` per axis (indices ``i0, i1, ...``) and the index names."""
    names = [f"i{a}" for a in range(len(shape))]
    return [f"for (long {n} = 0; {n} < {dim_c(d)}; ++{n}) {{" for n, d in zip(names, shape)], names


def literal(value, dtype) -> str:
    v = value.item() if isinstance(value, np.generic) else value
    if dtype in ("f64", "f32"):
        v = float(v)
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "-INFINITY"
        return repr(v)
    return str(int(v))


class FloatZero(sp.AtomicExpr):
    """A float constant 0.0 or -0.0 in C expressions: an atom SymPy knows nothing about, so that it never
    simplifies ``x * 0.0`` or ``x + -0.0`` (NumPy gives nan for an inf or nan ``x``, and keeps the sign of zero);
    printed as the literal. (Not a Symbol: Python would prefer a subclass's reflected ``<`` to ``x > 0.0``.)

    >>> x = sp.Symbol("x")
    >>> printer("f64").doprint(x * FloatZero.of(-0.0)), printer("f64").doprint(x > FloatZero.of(0.0))
    ('(-0.0)*x', 'x > 0.0')
    """

    is_commutative = True
    is_real = True

    def __new__(cls, negative: bool):
        obj = sp.AtomicExpr.__new__(cls)
        obj.negative = bool(negative)
        return obj

    @classmethod
    def of(cls, value: float) -> FloatZero:
        return cls(bool(np.signbit(value)))

    def __getnewargs__(self):
        return (self.negative,)

    def _hashable_content(self) -> tuple:
        return (self.negative,)

    def _ccode(self, printer) -> str:
        text = printer._print(sp.Float(0.0))  # 0.0, or 0.0F where the printer computes in float
        return f"(-{text})" if self.negative else text

    def _sympystr(self, printer) -> str:
        return "-0.0" if self.negative else "0.0"


class FloatSpecial(sp.AtomicExpr):
    """An infinite or NaN float constant in C expressions: an atom SymPy knows nothing about. SymPy's ``oo`` would
    let it decide ``Eq(x, -oo)`` False for a real ``x`` (its reals are finite), so ``np.where(x == -np.inf, ...)``
    never chose its first branch; printed as math.h's ``INFINITY``/``NAN``.

    >>> x = sp.Symbol("x", real=True)
    >>> printer("f64").doprint(sp.Eq(x, -FloatSpecial("inf"))), printer("f32").doprint(x < FloatSpecial("nan"))
    ('x == -INFINITY', 'x < NAN')
    """

    is_commutative = True
    is_extended_real = True  # comparable (a NaN is not, but SymPy must not decide a comparison with it either)

    def __new__(cls, kind: str):
        obj = sp.AtomicExpr.__new__(cls)
        obj.kind = kind  # "inf" or "nan"
        return obj

    def __getnewargs__(self):
        return (self.kind,)

    def _hashable_content(self) -> tuple:
        return (self.kind,)

    def _ccode(self, printer) -> str:
        return "INFINITY" if self.kind == "inf" else "NAN"

    def _sympystr(self, printer) -> str:
        return "inf" if self.kind == "inf" else "nan"


class ComplexConst(sp.Expr):
    """A complex constant, printed as ``gradc_complex(re, im)`` (the emitter defines it when a module has complex
    values; NaN, infinite and signed-zero parts are kept, which SymPy's ``a + b*I`` would fold away).

    >>> PRINTER.doprint(ComplexConst(1.0, -2.0))
    'gradc_complex(1.0, -2.0)'
    """

    is_commutative = True
    is_complex = True

    def __new__(cls, re, im):
        obj = sp.Expr.__new__(cls)
        obj.parts = (float(re), float(im))
        return obj

    @property
    def args(self):
        return ()

    def _hashable_content(self):
        return tuple(repr(p) for p in self.parts)

    def _part(self, x):
        if np.isnan(x):
            return "NAN"
        if np.isinf(x):
            return "INFINITY" if x > 0 else "-INFINITY"
        return repr(x)

    def _ccode(self, printer):
        return f"gradc_complex({self._part(self.parts[0])}, {self._part(self.parts[1])})"

    def _sympystr(self, printer):
        return f"complex{self.parts}"


def sym_const(value):
    v = value.item() if isinstance(value, np.generic) else value
    if isinstance(v, bool):
        return sp.true if v else sp.false
    if isinstance(v, int):
        return sp.Integer(v)
    if isinstance(v, complex):
        return ComplexConst(v.real, v.imag)
    if v == 0:
        return FloatZero.of(v)
    if np.isfinite(v):
        return sp.Float(v)
    return FloatSpecial("nan") if v != v else (FloatSpecial("inf") if v > 0 else -FloatSpecial("inf"))


def eqn_text(eqn) -> str:
    args = " ".join(a.name if isinstance(a, Var) else repr(a.value.item()) if a.value.ndim == 0 else "<array>"
                    for a in eqn.inputs)
    params = "".join(f" {k}={v}" for k, v in sorted(eqn.params.items()) if k not in ("spec", "count"))
    return f"{eqn.out.name} = {eqn.op} {args}{params}".replace("*/", "* /")


BLOB_LIMIT = 2048  # elements: a larger constant array is written as its bytes, which C compilers read ~8x faster
_BLOB_DTYPES = {"double": np.float64, "float": np.float32, "int64_t": np.int64, "int32_t": np.int32,
                "unsigned char": np.uint8, "long": np.dtype("l")}


def _without_trailing_zeros(values) -> list:
    """``values`` without its trailing zeros (a ``-0.0`` is kept: its sign bit is not a C initialiser's zero)."""
    end = len(values)
    while end and values[end - 1] == 0 and not (isinstance(values[end - 1], float)
                                                  and np.signbit(values[end - 1])):
        end -= 1
    return list(values[:end])


BLOB_ROW = 4000  # bytes a string literal holds: C99 compilers need support no more than 4095 characters in one


def blob_definition(name: str, ctype: str, values) -> str:
    """A constant array as string literals of its bytes (rows of :data:`BLOB_ROW`, each within C99's limit) in a
    union, read through a pointer named ``name``: bit for bit (NaN payloads, signed zeros); the bytes are this
    machine's order, so another order refuses to build.

    >>> print(blob_definition("C0", "float", [1.0, 0.0]))  # doctest: +NORMALIZE_WHITESPACE
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    #error "gradc wrote C0's bytes for a little-endian machine: emit the C on the machine that builds it"
    #endif
    static const union { unsigned char bytes[1][4000]; float values[2]; } C0_blob = {{"\\x00\\x00\\x80\\x3f"}};
    static const float *const C0 = C0_blob.values;
    """
    data = np.asarray(values, dtype=_BLOB_DTYPES[ctype]).tobytes()
    count = len(values)
    rows = -(-len(data) // BLOB_ROW)
    data = data.rstrip(b"\0")  # C zero-fills the rest
    order = "LITTLE" if sys.byteorder == "little" else "BIG"
    literals = []
    for i in range(0, len(data), BLOB_ROW):
        row = data[i:i + BLOB_ROW]
        literals.append('"' + "\\x" + row.hex("x").replace("x", "\\x") + '"')  # hex digits hold no "x"
    body = ",\n".join(literals) or "{0}"
    return "\n".join([
        f"#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_{order}_ENDIAN__",
        f'#error "gradc wrote {name}\'s bytes for a {order.lower()}-endian machine: emit the C on the machine that'
        ' builds it"',
        "#endif",
        f"static const union {{ unsigned char bytes[{max(rows, 1)}][{BLOB_ROW}]; {ctype} values[{count}]; }} "
        f"{name}_blob = {{{{{body}}}}};",
        f"static const {ctype} *const {name} = {name}_blob.values;"])


class Module:
    """What the functions of one translation unit share: constant arrays and index tables."""

    def __init__(self):
        self.statics: dict = {}  # key -> (name, definition line)
        self.math: dict = {}  # c_mathlib functions called (an ordered set)
        self.openmp = False  # large loops shared among threads (emit_c sets it from GRADC_OPENMP, see threads.py)

    def note_calls(self, text: str) -> str:
        """Remember the c_mathlib functions C ``text`` calls (their definitions go into the unit); returns ``text``."""
        for name in c_mathlib.called(text):
            self.math[name] = None
        return text

    def library(self) -> list:
        """Definitions of the c_mathlib functions called, callees first, in a fixed order."""
        return c_mathlib.definitions(self.math)

    def static(self, prefix, ctype, values, key_extra=()) -> str:
        key = (prefix, ctype, tuple(values), key_extra)
        if key not in self.statics:
            name = f"{prefix}{sum(1 for k in self.statics if k[0] == prefix)}"
            if ctype.endswith("_Complex"):  # as pairs of reals (an initialiser cannot build a NaN or infinite part)
                real = ctype.split()[0]
                parts = [p for v in values for p in (complex(v).real, complex(v).imag)]
                body = ", ".join(literal(v, "f64") for v in parts) or "0"
                self.statics[key] = (name, f"static const {real} {name}_parts[{max(len(parts), 2)}] = {{{body}}};\n"
                                           f"static const {ctype} *const {name} = (const {ctype} *){name}_parts;")
                return name
            if len(values) > BLOB_LIMIT and ctype in _BLOB_DTYPES:
                self.statics[key] = (name, blob_definition(name, ctype, values))
                return name
            dtype = {"double": "f64", "float": "f32"}.get(ctype, "i64")
            trimmed = _without_trailing_zeros(values)  # C fills the rest of an initialised array with zeros
            body = ", ".join(literal(v, dtype) for v in trimmed) or "0"
            self.statics[key] = (name, f"static const {ctype} {name}[{max(len(values), 1)}] = {{{body}}};")
        return self.statics[key][0]

    def helper(self, key, name: str, make_text) -> str:
        """Define the helper ``name`` (a kernel, a macro) once per unit: ``make_text()`` is called on first use.

        >>> m = Module(); m.helper(("k", 1), "gradc_k", lambda: "#define gradc_k 1")
        'gradc_k'
        >>> m.helper(("k", 1), "gradc_k", lambda: 1 / 0), m.definitions()
        ('gradc_k', ['#define gradc_k 1'])
        """
        if key not in self.statics:
            self.statics[key] = (name, make_text())
        return self.statics[key][0]

    def definitions(self) -> list:
        return [line for _, line in self.statics.values()]



def index_view(src: Loc, spec, shape) -> Loc:
    offset, strides, axis = src.offset, [], 0
    for item in spec:
        if item[0] == "new":
            strides.append(0)
            continue
        dim, s = src.shape[axis], src.strides[axis]
        if item[0] == "int":
            offset += (item[1] % dim if not is_dim_expr(dim) else item[1] + (dim if item[1] < 0 else 0)) * s
        else:
            start, _, step = slice(*item[1:]).indices(dim) if not is_dim_expr(dim) else _named_slice(dim, *item[1:])
            offset += start * s
            strides.append(s * step)
        axis += 1
    strides.extend(src.strides[axis:])
    return Loc(src.name, shape, offset, strides, src.value, src.local, src.dtype)


def _named_slice(dim, start, stop, step):
    """``slice(start, stop, step).indices(dim)`` for a named size ``dim`` (the result's length is in its type,
    which gradc checked is an expression of the names: no clamping is left to do)."""
    step = 1 if step is None else step
    if start is None:
        start = 0 if step > 0 else dim - 1
    elif start < 0:
        start = dim + start
    return start, stop, step


def lin(offset, terms) -> str:
    """``offset + s*i + ...`` as short C: constants summed, no zero terms, no ``1*``."""
    const, parts = offset, []
    for s, i in terms:
        if i.isdigit():
            const += s * int(i)
        elif s != 0:
            parts.append(i if s == 1 else f"{dim_c(s, paren=True)}*{i}")
    return " + ".join(parts + [dim_c(const)] * (const != 0)) or "0"


def ptr(name, offset, terms) -> str:
    """``name + offset + ...``, or ``name`` alone."""
    at = lin(offset, terms)
    return name if at == "0" else f"{name} + {at}"


def atom_name(atom):
    """An atom's name for comments (constants have none)."""
    return getattr(atom, "name", "a constant")
