"""SciPy functions on traced values, intercepted by their public name before SciPy's own code runs.

SciPy's functions are Python that converts its arguments with ``np.asarray`` (they
do not use NumPy's ``__array_function__``), so a traced value reaches them only to be
refused. The mechanism, in two parts:

* **Routing** (``rebind``): before tracing, gradc looks at the names the function's
  module sees (its globals and closure cells). If one of them is a SciPy module or a
  SciPy function gradc knows, the function is traced as a copy whose globals map that
  name to a gradc stand-in: ``scipy``, ``scipy.linalg`` or ``sla`` become proxies whose
  attributes are gradc's functions, ``cho_factor`` (from-imported) becomes gradc's
  ``cho_factor``. Functions of the same module that it calls are traced the same way.
  Nothing in SciPy or in the user's module changes; a call whose arguments hold no
  traced value goes to SciPy itself.
* **Naming** (``conversion_error``): a SciPy function reached some other way (through a
  class, another module, or one gradc lacks) converts the tracer with ``np.asarray``;
  ``Tracer.__array__`` then walks the stack to the outermost SciPy frame and reports that
  function by its public path (``scipy.linalg.cho_factor``) at the user's line.

Limits: a name bound after tracing starts, a SciPy function stored in a container or
an attribute of a user object, and functions of other modules are not routed (they
get the clear error instead); a ``global`` statement in the traced copy assigns into the
copy's globals, not the module's. ``register(path, fn)`` adds a function (other SciPy
families register theirs the same way).

>>> "scipy.linalg.cho_factor" in SCIPY_FUNCTIONS
True
"""
from __future__ import annotations

import os
import sys
import types

from gradc.errors import TraceError, _display_path
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import linalg_api as lin
from gradc.ops import linalg_scipy as lsp
from gradc.ops import linalg_structured as structured
from gradc.ops import linalg_sylvester as sylvester
from gradc.ops import signal
from gradc.ops.linalg_decomp import eye_like, mT, tri
from gradc.ops.values import aval
from gradc.trace import array_like_dispatch as array_likes
from gradc.trace import pivoted_lu

SCIPY_FUNCTIONS: dict = {}  # public path -> gradc function taking SciPy's signature
_resolved: dict = {}  # id(SciPy function) -> (function, gradc function), for the modules imported so far


_STAND_IN_MAKERS: list = []  # value -> a stand-in or None (objects such as a frozen distribution)
_CONVERSION_NAMERS: list = []  # SciPy frames (outermost last) -> (message, hint) or None


def add_stand_in_maker(make) -> None:
    """``make(value)`` gives a stand-in for SciPy objects the traced function sees (None: not one of them)."""
    _STAND_IN_MAKERS.append(make)


def add_conversion_namer(name) -> None:
    """``name(scipy_frames)`` gives ``(message, hint)`` for SciPy code that met a tracer, or None."""
    _CONVERSION_NAMERS.append(name)


def register(path: str, fn) -> None:
    """Route ``path`` (e.g. ``"scipy.special.erf"``) to ``fn`` on traced arguments."""
    SCIPY_FUNCTIONS[path] = fn
    _resolved.clear()


def operands_only(name: str, fn):
    """A SciPy ufunc's call (``scipy.special.NAME``): positional operands; ``out=``/``where=`` and the like
    refused by name.

    >>> operands_only("erf", lambda x: x + 1)(1.0)
    2.0
    """
    def call(*args, **kwargs):
        if kwargs:
            raise TraceError(f"scipy.special.{name} with {', '.join(sorted(kwargs))}= is not supported by gradc",
                             hint=f"call scipy.special.{name} with its operands only")
        return fn(*args)
    return call


def _refuse(what, option, hint):
    raise TraceError(f"{what} with {option} is not supported by gradc", hint=hint)


_NO_EFFECT = ("overwrite_a", "overwrite_b", "check_finite", "lapack_driver", "driver", "lwork")


def _plain(what, fn):
    """``fn`` taking SciPy's keywords that do not change the result; any other keyword is refused."""
    def call(*args, **kwargs):
        options = sorted(k for k in kwargs if k in _NO_EFFECT)
        for k in options:
            del kwargs[k]
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            raise TraceError(f"{what} called with arguments gradc does not handle: {e}",
                             hint="drop options that select parts of the result (subset_by_index=, ...)") from None
    return call


_ASSUME_A = {None: "gen", "general": "gen", "symmetric": "sym", "hermitian": "her", "positive definite": "pos"}


def _solve(a, b, lower=False, assume_a=None, transposed=False):
    """SciPy's ``solve``: each ``assume_a`` reads only the entries SciPy reads (one triangle for ``sym``/``her``/
    ``pos`` (``lower=False``: the upper one), the diagonal, three diagonals, a triangle), so the gradient is zero
    in the others, as SciPy's result does not depend on them."""
    what = "scipy.linalg.solve"
    kind = _ASSUME_A.get(assume_a, assume_a)
    if kind == "pos":  # symmetric: ``transposed`` changes nothing
        return lsp.cho_solve(lsp.cho_factor(a, lower=lower, what=what), b, what=what)
    if kind in ("sym", "her"):  # the triangle SciPy reads, mirrored (conjugated for 'her', its diagonal real)
        mirror = mT(tri(a, lower, k=-1 if lower else 1))
        if kind == "her" and aval(a).is_complex:
            from gradc.ops.complex_numbers import conj, real
            diagonal = ew.mul(ew.astype(real(a), aval(a).dtype, explicit=True), eye_like(a))
            a = ew.add(ew.add(tri(a, lower, k=-1 if lower else 1), diagonal), conj(mirror))
        else:
            a = ew.add(tri(a, lower), mirror)
        return lin.solve(a, b, what=what)
    if kind in ("lower triangular", "upper triangular"):  # the triangle of ``a`` itself, transposed or not
        return lsp.solve_triangular(a, b, trans=1 if transposed else 0, lower=kind == "lower triangular", what=what)
    a = mT(a) if transposed else a
    if kind == "diagonal":
        a = ew.mul(a, eye_like(a))
    elif kind == "tridiagonal":
        a = tri(tri(a, True, 1), False, -1)
    elif kind not in ("gen", "banded"):
        raise TraceError(f"scipy.linalg.solve with assume_a={assume_a!r} is not supported by gradc",
                         hint="use assume_a='gen', 'sym', 'pos', 'diagonal', 'tridiagonal', 'banded' or a triangle")
    return lin.solve(a, b, what=what)


def _eigh(a, b=None, *, lower=True, eigvals_only=False, type=1):
    if b is not None or type != 1:
        _refuse("scipy.linalg.eigh", "b= (a generalized eigenproblem)", "solve with the Cholesky factor of b first")
    return lin.eigvalsh(a, "L" if lower else "U") if eigvals_only else tuple(lin.eigh(a, "L" if lower else "U"))


def _eig(a, b=None, left=False, right=True, homogeneous_eigvals=False, what="scipy.linalg.eig"):
    for name, value, hint in (("b=", b is not None, "solve with b first (eig of solve(b, a)) when b is invertible"),
                              ("left=True", left, "the left eigenvectors are the rows of inv(vr) (up to scale)"),
                              ("homogeneous_eigvals=True", homogeneous_eigvals, "drop it")):
        if value:
            _refuse(what, name, hint)
    w, v = lin.eig(a, what)
    return (w, v) if right else w


def _qr(a, mode="full", pivoting=False):
    if pivoting:
        _refuse("scipy.linalg.qr", "pivoting=True", "drop pivoting= (the permutation has no derivative)")
    out = lin.qr(a, {"economic": "reduced"}.get(mode, mode), what="scipy.linalg.qr")
    return (out,) if mode == "r" else tuple(out)


def _pinv(a, *, atol=None, rtol=None, return_rank=False):
    if return_rank or atol:
        _refuse("scipy.linalg.pinv", "atol= or return_rank=", "use rtol= only")
    m, n = a.shape[-2:]
    return lin.pinv(a, rcond=rtol if rtol is not None else max(m, n) * _eps(a))


def _eps(a):
    import numpy as np
    return float(np.finfo(a.dtype).eps)


def _lstsq(a, b, cond=None):
    x, residues, rank, s = lin.lstsq(a, b, cond, what="scipy.linalg.lstsq")
    if b.ndim == 1 and a.shape[0] > a.shape[1]:
        residues = residues[0]
    return x, residues, rank, s


def _svd(a, full_matrices=True, compute_uv=True):
    out = lin.svd(a, full_matrices, compute_uv, what="scipy.linalg.svd")
    return out if not compute_uv else tuple(out)


for _name, _fn in {
    "solve": _solve, "inv": lin.inv, "det": lin.det,
    "cholesky": lambda a, lower=False: lin.cholesky(a, upper=not lower, what="scipy.linalg.cholesky"),
    "cho_factor": lsp.cho_factor, "cho_solve": lsp.cho_solve, "solve_triangular": lsp.solve_triangular,
    "lu_factor": lsp.lu_factor, "lu_solve": lsp.lu_solve, "eigh": _eigh,
    "eigvalsh": lambda a, b=None, *, lower=True, type=1: _eigh(a, b, lower=lower, eigvals_only=True, type=type),
    "svd": _svd, "svdvals": lambda a: lin.svd(a, compute_uv=False, what="scipy.linalg.svdvals"),
    "qr": _qr, "expm": lambda A: lsp.expm(A), "pinv": _pinv, "lstsq": _lstsq, "eig": _eig,
    "eigvals": lambda a, b=None, homogeneous_eigvals=False: _eig(a, b, right=False, what="scipy.linalg.eigvals",
                                                                 homogeneous_eigvals=homogeneous_eigvals),
    "norm": lambda a, ord=None, axis=None, keepdims=False: lin.norm(a, ord, axis, keepdims),
}.items():
    register(f"scipy.linalg.{_name}", _plain(f"scipy.linalg.{_name}", _fn))


def _convolver(fn, what, methods=True):
    def call(in1, in2, mode="full", method="auto", axes=None):
        if axes is not None:
            _refuse(what, "axes=", "convolve whole arrays (reshape so the axes match)")
        return fn(in1, in2, mode, method if methods else "auto", what=what)
    return call


for _name, _fn in {
    "scipy.linalg.solve_sylvester": sylvester.solve_sylvester, "scipy.linalg.solve_banded": sylvester.solve_banded,
    "scipy.linalg.solveh_banded": lambda ab, b, lower=False: sylvester.solveh_banded(ab, b, lower),
    "scipy.linalg.solve_continuous_lyapunov": sylvester.solve_continuous_lyapunov,
    "scipy.linalg.solve_discrete_lyapunov": sylvester.solve_discrete_lyapunov,
}.items():
    register(_name, _plain(_name, _fn))
for _name, _fn in {
    "convolve": signal.convolve, "correlate": signal.correlate, "fftconvolve": signal.convolve,
    "oaconvolve": signal.convolve,
}.items():
    register(f"scipy.signal.{_name}", _convolver(_fn, f"scipy.signal.{_name}", _name in ("convolve", "correlate")))
for _name in ("toeplitz", "hankel", "circulant", "block_diag"):
    register(f"scipy.linalg.{_name}", getattr(structured, _name))
register("scipy.linalg.lu", pivoted_lu.lu)
register("scipy.signal.convolve2d", signal.convolve2d)
register("scipy.signal.correlate2d", signal.correlate2d)


# ---------------------------------------------------------------- routing


def _table() -> dict:
    for path, fn in SCIPY_FUNCTIONS.items():
        module_name, _, name = path.rpartition(".")
        module = sys.modules.get(module_name)
        real = getattr(module, name, None) if module is not None else None
        if real is not None and id(real) not in _resolved:
            _resolved[id(real)] = (real, _routed(real, fn))
    return _resolved


def _has_tracer(values) -> bool:
    for v in values:
        if isinstance(v, (Traced, lsp.LUFactor)):
            return True
        if isinstance(v, (tuple, list)) and _has_tracer(v):
            return True
    return False


def _traced_list(value) -> bool:
    return type(value) is list and array_likes.has_traced(value)


def _routed(real, ours):
    if getattr(ours, "routes_itself", False):  # an object standing in for SciPy's (a distribution)
        return ours

    def call(*args, **kwargs):
        if getattr(ours, "closure_reads_traced", False) or _has_tracer(args) or _has_tracer(kwargs.values()):
            # a list of traced values is an array-like, as SciPy's np.asarray makes it (a tuple may be a
            # factorization's (c, lower): kept)
            args = tuple(array_likes.build(a) if _traced_list(a) else a for a in args)
            kwargs = {k: array_likes.build(v) if _traced_list(v) else v for k, v in kwargs.items()}
            return ours(*args, **kwargs)
        return real(*args, **kwargs)
    call.__name__ = getattr(real, "__name__", "scipy_function")
    call.__wrapped__ = real
    return call


def _is_scipy_module(value) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "scipy"


class _ModuleProxy:
    """A SciPy module whose known functions are gradc's (routed on traced arguments)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        real = getattr(self._module, name)
        known = _table().get(id(real))
        if known is not None and known[0] is real:
            return known[1]
        return _ModuleProxy(real) if _is_scipy_module(real) else real


def _substitute(value, table, arrays=False):
    if _is_scipy_module(value):
        return _ModuleProxy(value)
    if arrays:  # np.array / np.r_ of traced values (gradc.trace.array_routing)
        from gradc.trace import array_routing
        sub = array_routing.substitute(value)
        if sub is not None:
            return sub
    known = table.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    owner = value.__self__ if isinstance(value, types.MethodType) else value  # a bound method: its object's
    if _STAND_IN_MAKERS and (type(owner).__module__ or "").startswith("scipy"):
        for make in _STAND_IN_MAKERS:
            sub = make(value)
            if sub is not None:
                return sub
    return None


def rebind(f):
    """``f`` as it should be traced: itself, or a copy seeing gradc's SciPy functions (see the docstring)."""
    if "scipy" in sys.modules:  # gradc.jit(scipy.linalg.expm): the SciPy function itself is what is traced
        known = _table().get(id(f))
        if known is not None and known[0] is f:
            return known[1]
    fn = getattr(f, "__func__", f)
    from gradc.trace.array_routing import uses_routed_names  # here: it needs the dispatch tables loaded
    arrays = isinstance(fn, types.FunctionType) and uses_routed_names(fn)
    if not isinstance(fn, types.FunctionType) or ("scipy" not in sys.modules and not arrays):
        return f
    table = _table()
    module_globals = fn.__globals__
    new_globals: dict = {}
    changed = False
    for name, value in module_globals.items():
        sub = _substitute(value, table, arrays)
        if sub is not None:
            new_globals[name], changed = sub, True
    if arrays:  # int(x) / float(x) of a traced value: the traced cast (gradc.trace.array_like_dispatch)
        from gradc.trace.array_routing import builtin_casts
        casts = builtin_casts(fn)
        new_globals.update(casts)
        changed |= bool(casts)
    cells = _cells(fn, table, arrays)
    if not changed and cells is None:
        return f
    new_globals = {**module_globals, **new_globals}
    for name, value in module_globals.items():  # the module's other functions see the same names
        if isinstance(value, types.FunctionType) and value.__globals__ is module_globals and value is not fn:
            new_globals[name] = _copy(value, new_globals, value.__closure__)
    out = _copy(fn, new_globals, cells if cells is not None else fn.__closure__)
    return types.MethodType(out, f.__self__) if fn is not f else out


def _cells(fn, table, arrays=False):
    if not fn.__closure__:
        return None
    new, changed = [], False
    for cell in fn.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            value = None
        sub = _substitute(value, table, arrays) if value is not None else None
        if sub is None and _is_user_function(value) and value is not fn and value.__globals__ is fn.__globals__:
            sub = _rebound_helper(value)  # a helper of the same module it closes over (a nested def): same names
        new.append(types.CellType(sub) if sub is not None else cell)
        changed |= sub is not None
    return tuple(new) if changed else None


_REBINDING: set = set()  # ids of the helpers being rebound (a recursive nested function closes over itself)


def _is_user_function(value) -> bool:
    if not isinstance(value, types.FunctionType):
        return False
    path = value.__code__.co_filename
    return not (_in_scipy(path) or _in_numpy_or_gradc(path))


def _rebound_helper(helper):
    """``helper`` rebound as the function that closes over it is, or None when nothing changes."""
    if id(helper) in _REBINDING:
        return None
    _REBINDING.add(id(helper))
    try:
        out = rebind(helper)
    finally:
        _REBINDING.discard(id(helper))
    return out if out is not helper else None


def _copy(fn, new_globals, closure):
    out = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__dict__.update(fn.__dict__)
    out.__qualname__, out.__module__, out.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    out._gradc_original = getattr(fn, "_gradc_original", fn)  # the call hook keys helpers by the original
    return out


# ---------------------------------------------------------------- naming the SciPy function that was reached
def ufunc_name(ufunc) -> str:
    """``scipy.special.erf`` for SciPy's ufuncs (they carry no module), ``np.exp`` for NumPy's.

    >>> import numpy as np
    >>> ufunc_name(np.exp)
    'np.exp'
    """
    for module in ("scipy.special",):
        if getattr(sys.modules.get(module), ufunc.__name__, None) is ufunc:
            return f"{module}.{ufunc.__name__}"
    return f"np.{ufunc.__name__}"


def conversion_error(default: TraceError) -> TraceError:
    """``default``, or, when SciPy's code is what met the tracer, an error naming that SciPy function (by its
    public path) at the user's line."""
    frame = sys._getframe(2)
    scipy_frames = []  # outermost last
    while frame is not None:
        path = frame.f_code.co_filename
        if _in_scipy(path):
            scipy_frames.append(frame)
        elif not _in_numpy_or_gradc(path):  # gradc's call hook may sit between SciPy's frames: passed over
            break
        frame = frame.f_back
    scipy_frame = scipy_frames[-1] if scipy_frames else None
    if scipy_frame is None:
        return default
    while frame is not None and _in_numpy_or_gradc(frame.f_code.co_filename):  # gradc's call hook: the user's line
        frame = frame.f_back
    where = f"{_display_path(frame.f_code.co_filename)}:{frame.f_lineno}" if frame is not None else None
    for namer in _CONVERSION_NAMERS:  # an object's method, such as a distribution's (scipy.stats.t.ppf)
        named = namer(scipy_frames)
        if named is not None:
            return TraceError(named[0], where=where, hint=named[1])
    name = next((n for n in map(_public_path, reversed(scipy_frames)) if n), _module_path(scipy_frame))
    if name in SCIPY_FUNCTIONS:
        return TraceError(f"{name} was reached on a traced value where gradc could not route it (through an "
                          "object, another module or a name bound during the call)", where=where,
                          hint=f"call {name}(...) directly in the differentiated function or its module")
    return TraceError(f"{name} is not supported by gradc", where=where,
                      hint="rewrite it with NumPy operations gradc supports (see `gradc ops`)")


def _in_scipy(path) -> bool:
    scipy = sys.modules.get("scipy")
    return scipy is not None and os.path.abspath(path).startswith(os.path.dirname(scipy.__file__))


def _in_numpy_or_gradc(path) -> bool:
    import numpy
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.abspath(path).startswith((os.path.dirname(numpy.__file__), here))


def _public_path(frame):
    """``scipy.linalg.cho_factor`` for a frame of ``scipy.linalg._decomp_cholesky.cho_factor``, or of a SciPy
    decorator's wrapper around it (found in the wrapper's variables); None when not a public function."""
    path = _public_of(frame.f_globals.get("__name__", "scipy"), frame.f_code.co_name,
                      lambda c: c is frame.f_code or _same_source(c, frame.f_code))
    if path is None:
        for value in frame.f_locals.values():
            if isinstance(value, types.FunctionType) and (value.__module__ or "").startswith("scipy"):
                path = _public_of(value.__module__, value.__name__, lambda c, v=value: c is v.__code__)
                if path:
                    break
    return path


def _same_source(code, other) -> bool:
    """``code`` and ``other`` compiled from the same definition: gradc's capture recompiles a function it traces
    (``gradc.jit(scipy.linalg.expm)``), so the running frame's code is not the function's ``__code__``."""
    return (code is not None and code.co_name == other.co_name and code.co_filename == other.co_filename
            and code.co_firstlineno == other.co_firstlineno)


def _public_of(module: str, name: str, is_code):
    """``package.name`` for the shortest package without a private component (``_lib``, ``_matfuncs``) that
    exports the function ``is_code`` recognises; None when there is none."""
    parts = module.split(".")
    if name.startswith("_"):
        return None
    for k in range(1, len(parts) + 1):
        if parts[k - 1].startswith("_"):
            break  # scipy._lib.array_api_compat.numpy.asarray is SciPy's internal, not a name users call
        public = ".".join(parts[:k])
        candidate = getattr(sys.modules.get(public), name, None)
        while candidate is not None:
            if is_code(getattr(candidate, "__code__", None)):
                return f"{public}.{name}"
            candidate = getattr(candidate, "__wrapped__", None)
    return None


def _module_path(frame) -> str:
    return f"{frame.f_globals.get('__name__', 'scipy')}.{frame.f_code.co_name}"
