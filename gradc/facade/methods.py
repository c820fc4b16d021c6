"""The facade Tensor's methods that record graph nodes, attached by ``install(Tensor)``.

Operators and math (``a + b``, ``a.exp()``, ``a.add_(1)``, ...), shape methods, indexing,
``to``/``clone``, ``backward`` and the op registry's protocol (``aval``, ``__gradc_bind__``).
They need the modules above ``gradc.facade.tensor`` (functional, record, indexing, autograd,
nn.functional), so they live here and ``gradc.facade`` calls ``install`` once, after
importing everything else; ``tensor`` itself imports none of them.
"""
from __future__ import annotations

import numpy as np

import gradc.ops.shape as sh
from gradc.facade import autograd, dtypes, fast_ops, grad_mode, indexing, inplace_ops, tensor_extras, view_ops, views
from gradc.facade import functional as fn
from gradc.facade.nn import functional as nnf
from gradc.facade.record import aval_of, bind_hook, record
from gradc.facade.tensor import Tensor


def _is_num(x):
    return isinstance(x, (bool, int, float))


def _contiguous(a):
    """Whether ``a``'s storage is C-contiguous (under ``torch.compile``, as its trace lays the memory out)."""
    data = a._data
    if type(data) is not np.ndarray:  # traced: torch.compile's trace knows the memory layout
        tracing = grad_mode._STATE["tracing"]
        return tracing is None or tracing.contiguous(data)
    return data.flags["C_CONTIGUOUS"] or data.size <= 1


def _viewable(a, shape):
    """Whether ``a``'s storage can be read as ``shape`` without a copy (torch's view rule on strides)."""
    data = a._data
    if type(data) is not np.ndarray:
        return False
    try:
        np.reshape(data, shape, copy=False)  # NumPy refuses exactly when the strides do not allow a view
    except ValueError:
        return False
    except TypeError:  # NumPy < 2.1 has no copy=: setting .shape is the same test there (deprecated in 2.5)
        probe = data.view()
        try:
            probe.shape = shape
        except AttributeError:
            return False
    return True


def _reduce_args(dim, keepdim, kwargs):
    return kwargs.get("dim", dim), kwargs.get("keepdim", keepdim)


def _install_fast_operators(T):
    """``a + b``, ``b + a``, ``a * b``, ``b * a``, ``a - b``, ``a / b``, ``a ** b``: the fast lane first
    (``fast_ops``), else ``functional``."""
    binary = fast_ops.binary

    def operator(op, node, general, reflected=False):
        if reflected:  # b + a: the tensor is the right operand
            def method(a, b):
                out = binary(op, b, a, node)
                return general(b, a) if out is None else out
        else:
            def method(a, b):
                out = binary(op, a, b, node)
                return general(a, b) if out is None else out
        return method

    def __pow__(a, b):
        out = binary("pow", a, b, "PowBackward1" if isinstance(b, T) else "PowBackward0")
        return fn.pow(a, b) if out is None else out
    T.__add__, T.__radd__ = operator("add", "AddBackward0", fn.add), operator("add", "AddBackward0", fn.add, True)
    T.__mul__, T.__rmul__ = operator("mul", "MulBackward0", fn.mul), operator("mul", "MulBackward0", fn.mul, True)
    T.__sub__, T.__truediv__ = operator("sub", "SubBackward0", fn.sub), operator("div", "DivBackward0", fn.div)
    T.__pow__ = __pow__


def _t(a):
    """``t()``: the transpose of a matrix (a vector or a 0-d tensor as it is), refused beyond 2 dims as in torch."""
    if a.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.dim()}D")
    return fn.permute(a, tuple(reversed(range(a.dim()))), "TBackward0")


def install(T):  # noqa: C901 - a flat list of definitions
    """Attach the methods to class ``T`` (the facade's ``Tensor``)."""
    _install_core(T)

    def method(name):
        def deco(f):
            f.__name__ = name
            setattr(T, name, f)
            return f
        return deco

    _install_fast_operators(T)
    T.__rsub__ = lambda a, b: fn.rsub(a, b) if _is_num(b) else fn.sub(b, a)
    T.__rtruediv__ = lambda a, b: fn.mul(fn.reciprocal(a), b) if _is_num(b) else fn.div(b, a)
    T.__floordiv__ = lambda a, b: T._wrap(np.floor_divide(a._data, getattr(b, "_data", b)))
    T.__rpow__ = lambda a, b: fn.pow(b, a)
    T.__matmul__ = lambda a, b: fn.matmul(a, b)
    T.__rmatmul__ = lambda a, b: fn.matmul(b, a)
    T.__neg__ = lambda a: fn.unary("neg", a)
    T.__abs__ = lambda a: fn.unary("abs", a)
    T.__eq__ = lambda a, b: fn.compare("equal", a, b)
    T.__ne__ = lambda a, b: fn.compare("not_equal", a, b)
    T.__lt__ = lambda a, b: fn.compare("less", a, b)
    T.__le__ = lambda a, b: fn.compare("less_equal", a, b)
    T.__gt__ = lambda a, b: fn.compare("greater", a, b)
    T.__ge__ = lambda a, b: fn.compare("greater_equal", a, b)
    T.__hash__ = lambda a: id(a)
    for name, op in [("add", fn.add), ("sub", fn.sub), ("mul", fn.mul), ("div", fn.div), ("pow", fn.pow),
                     ("maximum", fn.maximum), ("minimum", fn.minimum), ("matmul", fn.matmul), ("mm", fn.mm),
                     ("bmm", fn.bmm), ("eq", lambda a, b: fn.compare("equal", a, b)),
                     ("ne", lambda a, b: fn.compare("not_equal", a, b)),
                     ("lt", lambda a, b: fn.compare("less", a, b)), ("gt", lambda a, b: fn.compare("greater", a, b)),
                     ("le", lambda a, b: fn.compare("less_equal", a, b)),
                     ("ge", lambda a, b: fn.compare("greater_equal", a, b))]:
        setattr(T, name, op)
    T.multiply, T.subtract, T.divide, T.true_divide = T.mul, T.sub, T.div, T.div
    T.dot, T.mv = fn.matmul, fn.matmul
    for name in fn.UNARY:
        setattr(T, name, (lambda n: lambda a: fn.unary(n, a))(name))
    T.arctan = T.atan
    T.sigmoid, T.relu, T.reciprocal, T.square, T.clamp = fn.sigmoid, fn.relu, fn.reciprocal, fn.square, fn.clamp
    T.clip = fn.clamp
    T.var, T.std, T.repeat, T.round = fn.var, fn.std, fn.repeat, fn.round

    @method("sum")
    def sum_(a, dim=None, keepdim=False, dtype=None, **kw):
        if dim is None and dtype is None and not kw:
            out = fast_ops.reduce_all("sum", a, "SumBackward0")
            if out is not None:
                return out
        dim, keepdim = _reduce_args(dim, keepdim, kw)
        return fn.sum(a, dim, keepdim, dtype)

    @method("mean")
    def mean(a, dim=None, keepdim=False, **kw):
        dim, keepdim = _reduce_args(dim, keepdim, kw)
        return fn.mean(a, dim, keepdim)

    @method("max")
    def max_(a, dim=None, keepdim=False, **kw):
        dim, keepdim = _reduce_args(dim, keepdim, kw)
        if isinstance(dim, T):
            return fn.maximum(a, dim)
        return fn.extremum("max", a, dim, keepdim)

    @method("min")
    def min_(a, dim=None, keepdim=False, **kw):
        dim, keepdim = _reduce_args(dim, keepdim, kw)
        if isinstance(dim, T):
            return fn.minimum(a, dim)
        return fn.extremum("min", a, dim, keepdim)

    T.prod = lambda a, dim=None, keepdim=False: fn.prod(a, dim, keepdim)

    @method("argmax")
    def argmax(a, dim=None, keepdim=False):
        if dim is None:
            return T._wrap(np.asarray(np.argmax(a._data), np.int64))
        return T._wrap(np.argmax(a._data, axis=dim, keepdims=keepdim).astype(np.int64))

    @method("argmin")
    def argmin(a, dim=None, keepdim=False):
        if dim is None:
            return T._wrap(np.asarray(np.argmin(a._data), np.int64))
        return T._wrap(np.argmin(a._data, axis=dim, keepdims=keepdim).astype(np.int64))

    T.all = lambda a, dim=None: T._wrap(np.asarray(np.all(a._data, axis=dim)))
    T.any = lambda a, dim=None: T._wrap(np.asarray(np.any(a._data, axis=dim)))

    # ------------------------------------------------------------ shape methods
    def _shape_args(args):
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            return tuple(args[0])
        return tuple(args)

    def _resolve(a, shape):
        shape = [int(d) for d in shape]
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            if known == 0 or a.numel() % known:
                raise RuntimeError("shape '[%s]' is invalid for input of size %d"
                                   % (", ".join(map(str, shape)), a.numel()))
            shape[shape.index(-1)] = a.numel() // known
        if int(np.prod(shape, dtype=np.int64)) != a.numel():
            raise RuntimeError("shape '[%s]' is invalid for input of size %d" % (", ".join(map(str, shape)), a.numel()))
        return tuple(shape)

    @method("reshape")
    def reshape(a, *shape):
        new = _resolve(a, _shape_args(shape))
        if _contiguous(a):
            return record("ViewBackward0", lambda x: sh.reshape(x, new), [a])
        if _viewable(a, new):
            return record("ReshapeAliasBackward0", lambda x: sh.reshape(x, new), [a])
        if type(a._data) is np.ndarray:  # eager: torch copies, then views the copy (CloneBackward0, UnsafeView)
            a = clone(a)
        return record("UnsafeViewBackward0", lambda x: sh.reshape(x, new), [a])

    @method("view")
    def view(a, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
            return a.to(shape[0])
        new = _resolve(a, _shape_args(shape))
        if not _contiguous(a) and not _viewable(a, new):
            a.grad_fn  # noqa: B018 - torch reads the history first: a refused view's error comes before this one
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return record("ViewBackward0", lambda x: sh.reshape(x, new), [a])

    T.flatten = view_ops.flatten
    T.view_as = lambda a, b: a.view(b.shape)
    T.reshape_as = lambda a, b: a.reshape(b.shape)
    T.squeeze = lambda a, dim=None: fn.squeeze(a, dim)
    T.unsqueeze = lambda a, dim: fn.unsqueeze(a, dim)
    T.t = _t
    T.T = property(lambda a: fn.permute(a, tuple(reversed(range(a.dim())))))
    T.mT = property(lambda a: fn.transpose(a, -2, -1))
    T.transpose = lambda a, d0, d1: fn.transpose(a, d0, d1)
    T.permute = lambda a, *dims: fn.permute(a, _shape_args(dims))

    @method("expand")
    def expand(a, *shape):
        shape = _shape_args(shape)
        lead = len(shape) - a.dim()
        new = tuple(a.shape[i - lead] if d == -1 else d for i, d in enumerate(shape))
        out = record("ExpandBackward0", lambda x: sh.broadcast_to(x, new), [a])
        return view_ops.writable_expand(out, a)

    T.expand_as = lambda a, b: a.expand(b.shape)

    @method("flip")
    def flip(a, *dims):
        spec = tuple(("slice", None, None, -1) if i in [d % a.dim() for d in _shape_args(dims)]
                     else ("slice", None, None, None) for i in range(a.dim()))
        out = record("FlipBackward0", lambda x: sh.index(x, spec), [a])
        if type(out._data) is np.ndarray:  # torch's flip copies: NumPy's reversed view would write into `a`
            out._data = np.ascontiguousarray(out._data)
        return out

    T.softmax = lambda a, dim: nnf.softmax(a, dim)
    T.log_softmax = lambda a, dim: nnf.log_softmax(a, dim)
    T.norm = fn.norm

    # ------------------------------------------------------------ in-place variants
    def inplace(name, f):
        def run(a, *args, **kwargs):
            def compute(s):
                res = f(s, *args, **kwargs)
                for other in args:  # torch's kernel checks overlaps after the op has read its operands' history
                    if isinstance(other, Tensor) and other._vc is a._vc:
                        views.check_operand(a, other)
                return res
            return a._inplace(compute)
        run.__name__ = name
        setattr(T, name, run)

    for name, f in [("add_", fn.add), ("sub_", fn.sub), ("mul_", fn.mul), ("div_", fn.div), ("pow_", fn.pow),
                    ("clamp_", fn.clamp), ("sigmoid_", fn.sigmoid), ("relu_", fn.relu)]:
        inplace(name, f)
    for name in ("add_", "sub_", "mul_", "div_"):  # the common no-grad updates (optimisers by hand) in one ufunc call
        general = getattr(T, name)

        def run(a, other, *rest, general=general, op=name[:-1], **kwargs):
            if rest or kwargs or isinstance(other, Tensor) and other._vc is a._vc:
                return general(a, other, *rest, **kwargs)
            out = fast_ops.inplace(op, a, other)
            return general(a, other) if out is None else out
        run.__name__ = name
        setattr(T, name, run)
    for name in ("exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "neg"):
        inplace(name + "_", (lambda n: lambda s: fn.unary(n, s))(name))
    T.__iadd__, T.__isub__, T.__imul__, T.__itruediv__ = T.add_, T.sub_, T.mul_, T.div_



# ---------------------------------------------------------------- methods moved out of tensor.py
def _install_core(T):
    """The registry protocol, ``backward``, conversions, ``clone``, in-place writes and indexing."""
    T.aval = property(aval_of)
    T.__gradc_bind__ = classmethod(_bind)
    for f in (backward, contiguous, clone):
        setattr(T, f.__name__, f)
    inplace_ops.install(T)  # _inplace, fill_, zero_, copy_
    for name, dt in [("float", dtypes.float32), ("double", dtypes.float64), ("long", dtypes.int64),
                     ("int", dtypes.int32), ("bool", dtypes.bool_), ("half", dtypes.float16),
                     ("short", dtypes.int16), ("char", dtypes.int8), ("byte", dtypes.uint8)]:
        setattr(T, name, _converter(name, dt))
    T.__setitem__ = indexing.setitem
    T.__getitem__ = indexing.getitem
    tensor_extras.install(T)  # to(device, dtype), cuda, new_ones, ...
    view_ops.install(T)  # narrow, select, diagonal, unbind, split, ...


def _bind(cls, op, args, params):
    return bind_hook(op, args, params)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    autograd.backward([self], None if gradient is None else [gradient], retain_graph, create_graph, inputs)


def _converter(name, dt):
    def convert(self):
        return self.to(dt)
    convert.__name__ = name
    return convert


def contiguous(self):
    return fn.contiguous(self)


def clone(self):
    out = record("CloneBackward0", lambda x: x, [self])
    if out._data is self._data:
        out._data = self._data.copy()
        out._vc = [0]  # a copy has its own version counter (not its operand's, were that a view)
    return out
