"""The NumPy vocabulary of emitted code, spelled in the array API standard (2024.12).

The NumPy emitter writes each op through its ``np=`` spelling; this table maps
every NumPy function, ufunc method and array method those spellings use to the
standard's function (``np.arctan`` -> ``xp.atan``, ``np.add.reduce(x, 1)`` ->
``xp.sum(x, axis=1)``, ``x.reshape(s)`` -> ``xp.reshape(x, s)``). An op whose
spelling uses anything outside the table has no array-API spelling; so does an
op listed in ``REFUSED`` (its NumPy words exist in the standard, its meaning does not).

>>> import ast
>>> rw = Rewriter("xp", "math")
>>> ast.unparse(rw.visit(ast.parse("np.add.reduce(np.arctan(x), 1, keepdims=True)", mode="eval")))
'xp.sum(xp.atan(x), axis=1, keepdims=True)'
"""
from __future__ import annotations

import ast

from gradc.backends.array_api.negative_steps import flip_call, positive_items

# np.NAME -> xp.NAME (renamed where the standard's name differs)
RENAMES = {name: name for name in (
    "abs", "broadcast_to", "ceil", "clip", "cos", "cosh", "exp", "expm1", "floor", "hypot", "isfinite", "isinf",
    "isnan", "log", "log1p", "log2", "log10", "logaddexp", "logical_and", "logical_not", "logical_or", "maximum",
    "minimum", "negative", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "where", "reshape",
    "matmul", "flip", "expand_dims", "squeeze", "moveaxis", "stack", "argmax", "argmin", "equal", "not_equal",
    "copysign", "signbit", "round", "remainder", "floor_divide", "positive", "logical_xor", "isdtype",
    "less", "less_equal", "greater", "greater_equal", "add", "subtract", "multiply", "divide", "floor_divide",
    "linalg.cholesky", "linalg.eigh", "linalg.eigvalsh", "linalg.solve", "linalg.slogdet", "linalg.svd",
    "linalg.qr", "linalg.inv", "linalg.det", "linalg.pinv", "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft")}
RENAMES.update({"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh", "arcsinh": "asinh",
                "arctanh": "atanh", "arctan2": "atan2", "power": "pow", "concatenate": "concat", "dot": "vecdot",
                "mod": "remainder", "rint": "round"})
RENAMES.update({"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
                "invert": "bitwise_invert", "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift"})
RENAMES.update({"cumsum": "cumulative_sum", "cumprod": "cumulative_prod", "argsort": "argsort",  # the stats family
                "searchsorted": "searchsorted"})
RENAMES.update({"real": "real", "imag": "imag", "conj": "conj"})  # complex values (the FFT's VJPs read them)
# creation functions whose default dtype is the library's (torch: float32): NumPy's float64 made explicit
CREATION = {"zeros", "empty", "full", "eye", "ones"}
REDUCE = {"add": "sum", "maximum": "max", "minimum": "min", "multiply": "prod", "logical_and": "all",
          "logical_or": "any"}
# positional arguments NumPy takes that the standard makes keyword-only, by position
KEYWORD_ONLY = {"tril": {1: "k"}, "triu": {1: "k"}, "tensordot": {2: "axes"}, "argmax": {1: "axis"},
                "argmin": {1: "axis"}}
DTYPES = {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
          "uint8", "bool", "complex64", "complex128"}
METHODS = {"reshape", "transpose", "astype", "copy", "argmax", "argmin", "max", "min", "sum"}
# ops spelled with standard words whose meaning differs: none today (a NumPy-only word refuses an op by itself)
REFUSED: dict = {}

HELPERS = {
    "heaviside": '''
def _heaviside(xp, x, at_zero):
    """NumPy's heaviside(x, at_zero) in the standard's functions, in x's dtype."""
    return xp.astype(x > 0, x.dtype) + at_zero * xp.astype(x == 0, x.dtype)
''',
    "outer": '''
def _outer(xp, a, b):
    """NumPy's multiply.outer(a, b): every element of a times b."""
    return xp.reshape(a, tuple(a.shape) + (1,) * b.ndim) * b
''',
}


def chain(node) -> str | None:
    """``"np.add.reduce"`` for that attribute chain on a bare name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return ".".join([node.id] + parts[::-1])


def _is_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


def _is_int(node) -> bool:
    return _is_number(node) and not isinstance(getattr(node, "value", None), float)


def _neg_one(node, value) -> bool:
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and node.operand.value == value)


class Rewriter(ast.NodeTransformer):
    """Rewrites NumPy calls (``np.`` as ``numpy``) into calls of the namespace ``xp``.

    ``types`` maps names to IR types (a name's rank spells some calls directly);
    ``missing`` collects every word without a standard spelling; ``helpers`` the
    module-level helper functions the rewritten code calls.
    """

    def __init__(self, xp: str, math: str, numpy: str = "np", types: dict | None = None):
        self.xp, self.math, self.np = xp, math, numpy
        self.types = types or {}
        self.missing: set = set()
        self.helpers: set = set()
        self.uses_math = False

    def _x(self, path: str) -> ast.expr:
        node: ast.expr = ast.Name(self.xp, ast.Load())
        for part in path.split("."):
            node = ast.Attribute(node, part, ast.Load())
        return node

    def _call(self, path: str, args, keywords=()) -> ast.Call:
        return ast.Call(self._x(path), list(args), list(keywords))

    def _np_name(self, node) -> str | None:
        """``"add.reduce"`` for ``np.add.reduce`` (the module's numpy alias), else None."""
        text = chain(node)
        if text is None or not text.startswith(self.np + "."):
            return None
        return text[len(self.np) + 1:]

    def visit_Attribute(self, node):
        name = self._np_name(node)
        if name is None:
            return self.generic_visit(node)
        if name in DTYPES:
            return self._x(name)
        if name in ("inf", "nan"):
            self.uses_math = True
            return ast.Attribute(ast.Name(self.math, ast.Load()), name, ast.Load())
        self.missing.add(f"np.{name}")
        return node

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
        text = chain(node.func) if isinstance(node.func, ast.Attribute) else None
        root = text.split(".")[0] if text else None
        if root == self.np:
            return self._numpy_call(text[len(self.np) + 1:], node)
        if root == "scipy":  # SciPy is no array library's namespace
            self.missing.add(text)
            return node
        if isinstance(node.func, ast.Attribute) and root not in (self.math, self.xp):
            return self._method(node)  # x.reshape(...), (a @ b).astype(...)
        node.func = self.visit(node.func)
        return node

    def _numpy_call(self, name, node):
        args, keywords = list(node.args), list(node.keywords)
        base = name.rsplit(".", 1)
        for position, keyword in KEYWORD_ONLY.get(name, {}).items():
            if len(args) > position:
                keywords.append(ast.keyword(keyword, args.pop(position)))
        if name in DTYPES:  # np.float32(3.0): a scalar of that dtype
            return self._call("asarray", args, [ast.keyword("dtype", self._x(name))])
        if name == "array":
            return self._call("asarray", args, keywords)
        if len(base) == 2 and base[1] == "reduce" and base[0] in REDUCE:
            if len(args) > 1:
                keywords.insert(0, ast.keyword("axis", args.pop(1)))
            return self._call(REDUCE[base[0]], args, keywords)
        if name == "multiply.outer":
            return self._outer(*args)
        if name == "swapaxes" and len(args) == 3 and _neg_one(args[1], 1) and _neg_one(args[2], 2):
            return self._call("matrix_transpose", args[:1])
        if name == "heaviside":
            self.helpers.add("heaviside")
            return ast.Call(ast.Name("_heaviside", ast.Load()), [ast.Name(self.xp, ast.Load())] + args, [])
        if name == "broadcast_to" and _is_number(args[0]):  # the standard broadcasts arrays only
            value = args[0].operand.value if isinstance(args[0], ast.UnaryOp) else args[0].value
            dtype = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float64"
            return self._call("full", [args[1], args[0]], [ast.keyword("dtype", self._x(dtype))])
        if name == "full" and len(args) == 2 and not keywords and not _is_number(args[1]):
            # the standard's full takes a Python scalar only: an array's value (a fresh broadcast of the NumPy
            # module, gradc.backends.numpy.fresh_broadcast) is broadcast, then copied (it may be written)
            spread = self._call("broadcast_to", [self._call("asarray", [args[1]]), args[0]])
            return self._call("asarray", [spread], [ast.keyword("copy", ast.Constant(True))])
        if name == "where" and len(args) == 3 and _is_number(args[1]) and _is_number(args[2]):
            value = args[1].operand.value if isinstance(args[1], ast.UnaryOp) else args[1].value
            dtype = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float64"
            args[1] = self._call("asarray", [args[1]], [ast.keyword("dtype", self._x(dtype))])  # one array at least
        if name == "linalg.svd" and any(k.arg == "compute_uv" for k in keywords):
            return self._call("linalg.svdvals", args)
        if name in CREATION or name == "arange":
            if name in CREATION and not any(k.arg == "dtype" for k in keywords):
                keywords.append(ast.keyword("dtype", self._x("float64")))
            return self._call(name, args, keywords)
        if name in ("tril", "triu", "tensordot"):
            return self._call(name, args, keywords)
        if name in RENAMES:
            return self._call(RENAMES[name], args, keywords)
        self.missing.add(f"np.{name}")
        return node

    def visit_Subscript(self, node):
        """``x[1:]`` -> ``x[1:, ...]``; ``x[::-1]`` -> ``xp.flip(x, axis=0)[:, ...]`` (only positive steps)."""
        node = self._every_axis(self.generic_visit(node))
        if isinstance(node.ctx, ast.Load):
            items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            value = node.value
            shape = self.types[value.id].shape if isinstance(value, ast.Name) and value.id in self.types else None
            items, axes, _ = positive_items(items, None if shape is None else tuple(shape))
            if axes:
                node.value = flip_call(self.xp, node.value, axes)
                node.slice = items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())
        return node

    def _every_axis(self, node):
        """``x[1:]`` -> ``x[1:, ...]``: the standard indexes every axis (trailing ones by an ellipsis)."""
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Constant) and i.value is Ellipsis for i in items):
            return node
        if any(isinstance(i, ast.Subscript) or isinstance(i, ast.Name) for i in items):
            return node  # integer or boolean arrays index: left as written
        rank = self.types[node.value.id].ndim if isinstance(node.value, ast.Name) and \
            node.value.id in self.types else None
        indexed = sum(1 for i in items if not (isinstance(i, ast.Constant) and i.value is None))
        sliced = any(isinstance(i, ast.Slice) or isinstance(i, ast.Constant) and i.value is None for i in items)
        if rank is None and isinstance(node.value, ast.Call) and not _returns_tuple(node.value):
            wanted = True  # an array a call returns (solve(a, b)[0]): `...` may stand for no axis at all
        else:  # a tuple's item (svd(a)[0]) has no rank here
            wanted = indexed < rank if rank is not None else sliced
        if wanted:
            node.slice = ast.Tuple(items + [ast.Constant(...)], ast.Load())
        return node

    def visit_Assign(self, node):
        """``y[None, :, 1:] = v`` -> ``y[:, 1:] = xp.squeeze(v, axis=(0,))``: the standard stores without new axes."""
        node = self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and any(
                isinstance(i, (ast.Name, ast.Subscript, ast.Call)) for i in (
                    target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice])):
            self.missing.add("x[array] = ... (setitem with an array index)")
            return node
        if not isinstance(target, ast.Subscript):
            return node
        if not isinstance(target.slice, ast.Tuple):
            return self._positive_store(node)
        items, axes, kept = target.slice.elts, [], []
        for item in items:
            is_new = isinstance(item, ast.Constant) and item.value is None
            if is_new:
                axes.append(len([i for i in kept if not _is_int(i)]) + len(axes))
            else:
                kept.append(item)
        if axes:
            target.slice = ast.Tuple(kept, ast.Load()) if len(kept) != 1 else kept[0]
            node.value = self._call("squeeze", [node.value], [ast.keyword("axis", ast.Tuple(
                [ast.Constant(a) for a in axes], ast.Load()))])
        return self._positive_store(node)

    def visit_AugAssign(self, node):
        """``y[::-1] += v`` -> ``y[:] += xp.flip(v, axis=0)`` (an accumulated gradient)."""
        node = self.generic_visit(node)
        return self._positive_store(node) if isinstance(node.target, ast.Subscript) else node

    def _positive_store(self, node):
        """``y[::-1] = v`` -> ``y[:] = xp.flip(v, axis=0)``: a scalar value is written as it is."""
        target = node.target if isinstance(node, ast.AugAssign) else node.targets[0]
        items = list(target.slice.elts) if isinstance(target.slice, ast.Tuple) else [target.slice]
        base = target.value
        shape = self.types[base.id].shape if isinstance(base, ast.Name) and base.id in self.types else ()
        try:
            items, _, result_axes = positive_items(items, tuple(shape), store=True)
        except ValueError as error:
            self.missing.add(str(error))
            return node
        if result_axes:
            target.slice = items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())
            if not _is_number(node.value):
                node.value = flip_call(self.xp, node.value, result_axes)
        return node

    def _outer(self, a, b):
        rank = self.types[b.id].ndim if isinstance(b, ast.Name) and b.id in self.types else None
        if rank is None:
            self.helpers.add("outer")
            return ast.Call(ast.Name("_outer", ast.Load()), [ast.Name(self.xp, ast.Load()), a, b], [])
        index = ast.Tuple([ast.Constant(...)] + [ast.Constant(None)] * rank, ast.Load())
        return ast.BinOp(ast.Subscript(a, index, ast.Load()), ast.Mult(), b)

    def _method(self, node):
        obj = self.visit(node.func.value)
        name = node.func.attr
        args, keywords = list(node.args), list(node.keywords)
        if name not in METHODS:
            self.missing.add(f".{name}()")
            node.func.value = obj
            return node
        if name == "copy":
            return self._call("asarray", [obj], [ast.keyword("copy", ast.Constant(True))])
        if name == "transpose":
            perm = args[0] if len(args) == 1 else ast.Tuple(args, ast.Load())
            return self._call("permute_dims", [obj, perm])
        if name == "reshape":
            shape = args[0] if len(args) == 1 else ast.Tuple(args, ast.Load())
            return self._call("reshape", [obj, shape])
        if args and name in ("argmax", "argmin", "max", "min", "sum"):
            keywords.insert(0, ast.keyword("axis", args.pop(0)))
        return self._call(name, [obj] + args, keywords)


# the array-API functions that return tuples: an index into their result picks an item, not an axis
_TUPLE_RESULTS = frozenset({"svd", "qr", "eigh", "slogdet", "frexp", "modf", "meshgrid", "broadcast_arrays",
                            "unique_all", "unique_counts", "unique_inverse", "nonzero", "divmod", "lu_factor",
                            "cho_factor", "lstsq", "histogram", "where"})


def _returns_tuple(call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name is None or name in _TUPLE_RESULTS or name.startswith("_")
