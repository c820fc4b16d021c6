"""Neural-network ops: 2-D convolution and max pooling, plus average pooling as two matmuls.

``conv2d`` (N, Cin, H, W) x (Cout, Cin/groups, KH, KW), with stride, asymmetric zero
padding ``((top, bottom), (left, right))``, dilation and groups. Its VJP is made of
convolutions again (the input's cotangent is a transposed convolution: the cotangent
spread out by the stride, correlated with the flipped kernel; the weight's is a
convolution of the input with the cotangent as kernel), so second derivatives work.

``max_pool2d``'s VJP routes the cotangent to the first maximum of each window
(torch's choice) through ``max_pool2d_index`` (non-differentiable) and ``gather_grad``.
Average pooling (fixed or adaptive) is linear and separable: ``P_h @ x @ P_w.T`` with
constant pooling matrices, so it needs no op of its own (and lowers to C).

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> conv2d(x, np.ones((1, 1, 2, 2)), stride=2)[0, 0]
array([[10., 18.],
       [42., 50.]])
>>> max_pool2d(x, 2)[0, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.values import aval

_window_view = np.lib.stride_tricks.sliding_window_view
_ALL = sh.slice_item(None, None, None)


# ---------------------------------------------------------------- spelling helper
class _Fill(ast.NodeTransformer):
    def __init__(self, nodes):
        self.nodes = nodes

    def visit_Name(self, node):
        return self.nodes.get(node.id, node)


def _template(text: str, **nodes) -> ast.expr:
    """A fixed expression of this module with capitalised placeholders replaced by ``ast`` nodes.

    Only ``ast`` nodes (operands, literals) are substituted, never text.
    """
    tree = ast.parse(text, mode="eval").body
    return ast.fix_missing_locations(_Fill(nodes).visit(tree))


def _windows_stmts(src, target, params, kernel, fill=None):
    """Statements leaving in ``target`` the (N, C, OH, OW, KH, KW) windows of ``src``, padded."""
    (pt, pb), (pl, pr) = params["padding"]
    sh_, sw = params["stride"]
    dh, dw = params["dilation"]
    kh, kw = kernel
    eh, ew_ = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    name = ast.Name(target, ast.Load())
    stmts = []
    if pt or pb or pl or pr:
        pads = spell.literal(((0, 0), (0, 0), (pt, pb), (pl, pr)))
        call = (_template("np.pad(X, P)", X=src, P=pads) if fill is None else
                _template("np.pad(X, P, constant_values=-np.inf)", X=src, P=pads))
        stmts.append(spell.assign(target, call))
        src = name
    view = _template("np.lib.stride_tricks.sliding_window_view(X, K, axis=(2, 3))", X=src,
                     K=spell.literal((eh, ew_)))
    steps = [ast.Slice(None, None, None if s == 1 else spell.literal(s)) for s in (sh_, sw, dh, dw)]
    while steps and steps[-1].step is None:
        steps.pop()  # x[:, :, ::2] rather than x[:, :, ::2, ::1, ::1, ::1]
    if steps:
        view = ast.Subscript(view, ast.Tuple([ast.Slice(), ast.Slice()] + steps, ast.Load()), ast.Load())
    stmts.append(spell.assign(target, view))
    return stmts


def _pad4(x, padding, value=0.0):
    (pt, pb), (pl, pr) = padding
    if not (pt or pb or pl or pr):
        return x
    return np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=value)


def _windows(x, kernel, stride, padding, dilation, value=0.0):
    eh, ew_ = (d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    view = _window_view(_pad4(x, padding, value), (eh, ew_), axis=(2, 3))
    return view[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


def _out_len(size, k, s, pad_lo, pad_hi, d):
    return (size + pad_lo + pad_hi - d * (k - 1) - 1) // s + 1


# ---------------------------------------------------------------- conv2d
def _conv_infer(types, params):
    x, w = types
    g = params["groups"]
    if x.ndim != 4 or w.ndim != 4:
        raise ShapeError(f"conv2d takes an input (N, C, H, W) and a weight (Cout, Cin/groups, KH, KW), not {x} and {w}",
                         hint="add a batch axis to a single image")
    if x.dtype != w.dtype or not x.is_float:
        raise ShapeError(f"conv2d operands {x} and {w} must share one float dtype (internal: convert first)")
    if x.shape[1] != w.shape[1] * g or w.shape[0] % g:
        raise ShapeError(f"conv2d of {x} with weight {w} and groups={g}: the input has {x.shape[1]} channels, "
                         f"the weight expects {w.shape[1] * g}", hint="check in_channels and groups")
    size = [_out_len(x.shape[2 + i], w.shape[2 + i], params["stride"][i], *params["padding"][i],
                     params["dilation"][i]) for i in range(2)]
    if min(size) < 1:
        raise ShapeError(f"conv2d kernel {w.shape[2:]} (dilation {params['dilation']}) is larger than the padded "
                         f"input {x}", hint="use a smaller kernel or more padding")
    return x.with_shape((x.shape[0], w.shape[0], size[0], size[1]))


def _conv_impl(x, w, stride, padding, dilation, groups):
    cols = _windows(x, w.shape[2:], stride, padding, dilation)
    if groups == 1:
        return np.ascontiguousarray(np.tensordot(cols, w, axes=((1, 4, 5), (1, 2, 3))).transpose(0, 3, 1, 2))
    n, c, oh, ow, kh, kw = cols.shape
    cols = cols.reshape(n, groups, c // groups, oh, ow, kh, kw)
    wg = w.reshape((groups, w.shape[0] // groups) + w.shape[1:])
    out = np.einsum("ngchwij,gocij->ngohw", cols, wg, optimize=True)
    return np.ascontiguousarray(out.reshape(n, w.shape[0], oh, ow))


def _conv_spell(args, params, out, target):
    x, w = args
    stmts = _windows_stmts(x, target, params, params["kernel"])
    cols = ast.Name(target, ast.Load())
    g = params["groups"]
    if g == 1:
        value = _template("np.tensordot(C, W, axes=((1, 4, 5), (1, 2, 3))).transpose(0, 3, 1, 2)", C=cols, W=w)
    else:
        n, cout, oh, ow = out.shape
        cin_g, (kh, kw) = params["cin"] // g, params["kernel"]
        value = _template("np.einsum('ngchwij,gocij->ngohw', C.reshape(S), W.reshape(T), optimize=True).reshape(U)",
                          C=cols, W=w, S=spell.literal((n, g, cin_g, oh, ow, kh, kw)),
                          T=spell.literal((g, cout // g, cin_g, kh, kw)), U=spell.literal(out.shape))
    return stmts + [spell.assign(target, value)]


def _conv_input_grad(ct, w, x_shape, stride, padding, dilation, groups):
    """The transposed convolution: ``ct`` spread out by the stride, correlated with the flipped kernel."""
    n, cout = aval(ct).shape[:2]
    cin = x_shape[1]
    spec, spread, length = [_ALL, _ALL], [_ALL, _ALL], []
    for i in range(2):
        size, k, s, d = x_shape[2 + i], aval(w).shape[2 + i], stride[i], dilation[i]
        start, total, outs = d * (k - 1) - padding[i][0], size + d * (k - 1), aval(ct).shape[2 + i]
        lo = max(0, -(start // s) if start < 0 else 0)
        hi = min(outs, (total - 1 - start) // s + 1)
        if hi <= lo:  # no output position reads the input along this axis
            return bind("broadcast_to", np.zeros((), aval(ct).np_dtype), shape=tuple(x_shape))
        spec.append(sh.slice_item(lo, hi, None))
        first = start + lo * s
        spread.append(sh.slice_item(first, first + (hi - lo - 1) * s + 1, s))
        length.append(total)
    if any(item != _ALL for item in spec):
        ct = sh.index(ct, tuple(spec))
    if tuple(length) != aval(ct).shape[2:] or any(item[3] != 1 for item in spread[2:]):
        ct = sh.index_grad(ct, tuple(spread), (n, cout) + tuple(length))
    kh, kw = aval(w).shape[2:]
    wt = sh.reshape(w, (groups, cout // groups, cin // groups, kh, kw))
    wt = sh.reshape(sh.transpose(wt, (0, 2, 1, 3, 4)), (cin, cout // groups, kh, kw))
    wt = sh.index(wt, (_ALL, _ALL, sh.slice_item(None, None, -1), sh.slice_item(None, None, -1)))
    return conv2d(ct, wt, 1, 0, dilation, groups)


def _conv_weight_grad(ct, x, w_shape, stride, padding, dilation, groups):
    """A convolution of the input (batch and channels swapped) with the cotangent as its kernel."""
    n, cin, h, wd = aval(x).shape
    xs = sh.reshape(x, (n, groups, cin // groups, h, wd))
    xs = sh.reshape(sh.transpose(xs, (2, 1, 0, 3, 4)), (cin // groups, groups * n, h, wd))
    kernel = sh.transpose(ct, (1, 0, 2, 3))
    out = bind("conv2d", xs, kernel, stride=tuple(dilation), padding=tuple(padding), dilation=tuple(stride),
               groups=groups, kernel=aval(kernel).shape[2:], cin=groups * n)
    kh, kw = w_shape[2:]
    if aval(out).shape[2:] != (kh, kw):
        out = sh.index(out, (_ALL, _ALL, sh.slice_item(0, kh, None), sh.slice_item(0, kw, None)))
    return sh.transpose(out, (1, 0, 2, 3))


def _conv_vjp(ct, out, x, w, needs, stride, padding, dilation, groups, kernel, cin):
    x_bar = _conv_input_grad(ct, w, aval(x).shape, stride, padding, dilation, groups) if needs[0] else None
    w_bar = _conv_weight_grad(ct, x, aval(w).shape, stride, padding, dilation, groups) if needs[1] else None
    return x_bar, w_bar


def _conv_batch(x, w, batched, stride, padding, dilation, groups, kernel, cin):
    if not batched[1]:  # the batch joins the images
        b, n = aval(x).shape[:2]
        out = conv2d(sh.reshape(x, (b * n,) + aval(x).shape[2:]), w, stride, padding, dilation, groups)
        return sh.reshape(out, (b, n) + aval(out).shape[1:])
    b = aval(w).shape[0]  # a batch of weights: one group per batch element
    if not batched[0]:
        x = bind("broadcast_to", x, shape=(b,) + aval(x).shape)
    _, n, c, h, wd = aval(x).shape
    xs = sh.reshape(sh.transpose(x, (1, 0, 2, 3, 4)), (n, b * c, h, wd))
    ws = sh.reshape(w, (b * aval(w).shape[1],) + aval(w).shape[2:])
    out = conv2d(xs, ws, stride, padding, dilation, groups * b)
    _, _, oh, ow = aval(out).shape
    return sh.transpose(sh.reshape(out, (n, b, aval(w).shape[1], oh, ow)), (1, 0, 2, 3, 4))


defop("conv2d", infer=_conv_infer, impl=lambda x, w, stride, padding, dilation, groups, kernel, cin: _conv_impl(
          x, w, stride, padding, dilation, groups),
      vjp=_conv_vjp, np=_conv_spell, c=c_spell.loop("conv2d"), batch=_conv_batch,
      doc="x_bar = conv2d(spread(ct, stride), flip(w) with in/out swapped); "
          "w_bar = conv2d(x with N and C swapped, ct as kernel)")


# ---------------------------------------------------------------- max pooling
# Params: kernel, stride, padding (leading), pad_end (trailing: covers ceil_mode's last window),
# dilation, size (the pooled (OH, OW)); max_pool2d_index also width (W, for flat indices).
def _pool_infer(types, params, dtype=None):
    x = types[0]
    if x.ndim != 4 or not x.is_float:
        raise ShapeError(f"max_pool2d takes a float input (N, C, H, W), not {x}", hint="add a batch axis")
    out = x.with_shape(x.shape[:2] + tuple(params["size"]))
    return out if dtype is None else out.with_dtype(dtype)


def _pool_windows(x, kernel, stride, padding, pad_end, dilation, size):
    pads = ((padding[0], pad_end[0]), (padding[1], pad_end[1]))
    return _windows(x, kernel, stride, pads, dilation, -np.inf)[:, :, :size[0], :size[1]]


def _pool_spell_params(params):
    padding, pad_end = params["padding"], params["pad_end"]
    return {"padding": ((padding[0], pad_end[0]), (padding[1], pad_end[1])), "stride": params["stride"],
            "dilation": params["dilation"]}


def _max_pool_impl(x, kernel, stride, padding, pad_end, dilation, size):
    return _pool_windows(x, kernel, stride, padding, pad_end, dilation, size).max(axis=(4, 5))


def _max_pool_spell(args, params, out, target):
    stmts = _windows_stmts(args[0], target, _pool_spell_params(params), params["kernel"], fill=-np.inf)
    rows, cols = params["size"]
    crop = _template("T[:, :, :R, :C].max(axis=(4, 5))", T=ast.Name(target, ast.Load()), R=spell.literal(rows),
                     C=spell.literal(cols))
    return stmts + [spell.assign(target, crop)]


def _max_pool_vjp(ct, out, x, needs, **params):
    n, c, h, w = aval(x).shape
    flat = bind("max_pool2d_index", x, width=w, **params)
    rows, chans = np.arange(n).reshape(n, 1, 1, 1), np.arange(c).reshape(1, c, 1, 1)
    spec = (("array", 0), ("array", 1), ("array", 2))
    return (sh.reshape(sh.gather_grad(ct, [rows, chans, flat], spec, (n, c, h * w)), (n, c, h, w)),)


def _max_index_impl(x, kernel, stride, padding, pad_end, dilation, size, width):
    cols = _pool_windows(x, kernel, stride, padding, pad_end, dilation, size)
    n, c, oh, ow, kh, kw = cols.shape
    best = cols.reshape(n, c, oh, ow, kh * kw).argmax(axis=4)
    row = np.arange(oh).reshape(oh, 1) * stride[0] + best // kw * dilation[0] - padding[0]
    col = np.arange(ow) * stride[1] + best % kw * dilation[1] - padding[1]
    return (row * width + col).astype(np.int64)


def _max_index_spell(args, params, out, target):
    stmts = _windows_stmts(args[0], target, _pool_spell_params(params), params["kernel"], fill=-np.inf)
    name, lit = ast.Name(target, ast.Load()), spell.literal
    n, c, oh, ow = out.shape
    kh, kw = params["kernel"]
    pick = _template("T[:, :, :R, :C].reshape(S).argmax(axis=4)", T=name, R=lit(oh), C=lit(ow),
                     S=lit((n, c, oh, ow, kh * kw)))
    (sh_, sw), (dh, dw), (ph, pw) = params["stride"], params["dilation"], params["padding"]
    rows = _plus(_times(_template("np.arange(R).reshape(R, 1)", R=lit(oh)), sh_),
                 _times(_template("T // KW", T=name, KW=lit(kw)), dh), -ph)
    cols = _plus(_times(_template("np.arange(C)", C=lit(ow)), sw), _times(_template("T % KW", T=name, KW=lit(kw)), dw),
                 -pw)
    pos = _template("(R * W + C).astype(np.int64)", R=rows, W=lit(params["width"]), C=cols)
    return stmts + [spell.assign(target, pick), spell.assign(target, pos)]


def _times(node, k):
    return node if k == 1 else ast.BinOp(node, ast.Mult(), spell.literal(k))


def _plus(a, b, k):
    total = ast.BinOp(a, ast.Add(), b)
    if k == 0:
        return total
    return ast.BinOp(total, ast.Add() if k > 0 else ast.Sub(), spell.literal(abs(k)))


def _pool_batch(name):
    def batch(x, batched, **params):
        b, n = aval(x).shape[:2]
        out = bind(name, sh.reshape(x, (b * n,) + aval(x).shape[2:]), **params)
        return sh.reshape(out, (b, n) + aval(out).shape[1:])
    return batch


defop("max_pool2d", infer=_pool_infer, impl=_max_pool_impl, np=_max_pool_spell, c=c_spell.loop("max_pool"),
      vjp=_max_pool_vjp, batch=_pool_batch("max_pool2d"),
      doc="x_bar = ct added at the first maximum of each window (as torch)")
defop("max_pool2d_index", infer=lambda types, params: _pool_infer(types, params, "i64"), impl=_max_index_impl,
      np=_max_index_spell, c=c_spell.loop("max_pool"), nondiff=True, batch=_pool_batch("max_pool2d_index"),
      doc="integer-valued: the flat index (h * W + w) of each window's first maximum")


# ---------------------------------------------------------------- functions
def _pair(v, what):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(v) != 2 or not all(isinstance(i, (int, np.integer)) for i in v):
        raise ShapeError(f"{what} must be an int or a pair of ints, not {v!r}")
    return tuple(int(i) for i in v)


def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation as torch's ``conv2d`` (no bias); ``padding`` an int, a pair or ``((t, b), (l, r))``."""
    if isinstance(padding, (tuple, list)) and padding and isinstance(padding[0], (tuple, list)):
        padding = tuple(_pair(p, "padding") for p in padding)
    else:
        padding = tuple((p, p) for p in _pair(padding, "padding"))
    return bind("conv2d", x, w, stride=_pair(stride, "stride"), padding=padding, dilation=_pair(dilation, "dilation"),
                groups=int(groups), kernel=aval(w).shape[2:], cin=aval(x).shape[1])


def pool_out_len(size, k, s, p, d, ceil_mode):
    """torch's pooled length: windows that start inside the input (or its left padding) count."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _max_pool_params(shape, kernel, stride, padding, dilation, ceil_mode):
    kernel = _pair(kernel, "kernel_size")
    stride = kernel if stride is None or stride == () else _pair(stride, "stride")
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    if len(shape) != 4:
        raise ShapeError(f"max_pool2d takes an input (N, C, H, W), not one of shape {shape}", hint="add a batch axis")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ShapeError(f"max_pool2d padding {padding} is more than half the kernel {kernel}",
                         hint="pad should be at most half of effective kernel size")
    size = tuple(pool_out_len(shape[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(2))
    if min(size) < 1:
        raise ShapeError(f"max_pool2d kernel {kernel} does not fit the input of shape {shape}",
                         hint="use a smaller kernel or more padding")
    # trailing padding so that every window, also ceil_mode's last one, lies inside the padded input
    pad_end = tuple(max(0, (size[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - shape[2 + i] - padding[i])
                    for i in range(2))
    return {"kernel": kernel, "stride": stride, "padding": padding, "pad_end": pad_end, "dilation": dilation,
            "size": size}


def max_pool2d(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    """torch's ``max_pool2d`` on (N, C, H, W): padding is -inf; ``stride`` defaults to the kernel."""
    return bind("max_pool2d", x, **_max_pool_params(aval(x).shape, kernel, stride, padding, dilation, ceil_mode))


def max_pool2d_index(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The flat index (``h * W + w``) of each window's first maximum: torch's ``return_indices``."""
    params = _max_pool_params(aval(x).shape, kernel, stride, padding, dilation, ceil_mode)
    return bind("max_pool2d_index", x, width=aval(x).shape[3], **params)


def _avg_matrix(size, k, s, p, ceil_mode, include_pad, divide, dtype):
    out = pool_out_len(size, k, s, p, 1, ceil_mode)
    m = np.zeros((out, size))
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        lo, hi = max(start, 0), min(end, size)
        count = (end - start) if include_pad else (hi - lo)
        m[o, lo:hi] = 1.0 / count if divide else 1.0
    return m.astype(dtype)


def _adaptive_matrix(size, out, dtype):
    m = np.zeros((out, size))
    for o in range(out):
        lo, hi = (o * size) // out, -((-(o + 1) * size) // out)
        m[o, lo:hi] = 1.0 / (hi - lo)
    return m.astype(dtype)


def separable_pool(x, rows, cols):
    """``rows @ x @ cols.T`` over the last two axes of ``x`` (N, C, H, W), as 2-D matmuls."""
    n, c, h, w = aval(x).shape
    oh, ow = rows.shape[0], cols.shape[0]
    t = la.matmul(sh.reshape(x, (n * c * h, w)), np.ascontiguousarray(cols.T))
    t = sh.reshape(sh.transpose(sh.reshape(t, (n * c, h, ow)), (0, 2, 1)), (n * c * ow, h))
    t = la.matmul(t, np.ascontiguousarray(rows.T))
    return sh.transpose(sh.reshape(t, (n, c, ow, oh)), (0, 1, 3, 2))


def avg_pool2d(x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """torch's ``avg_pool2d`` on (N, C, H, W), as ``P_h @ x @ P_w.T`` (it is linear and separable)."""
    kernel = _pair(kernel, "kernel_size")
    stride = kernel if stride is None or stride == () else _pair(stride, "stride")
    padding = _pair(padding, "padding")
    t = aval(x)
    divide = divisor_override is None
    rows, cols = (_avg_matrix(t.shape[2 + i], kernel[i], stride[i], padding[i], ceil_mode, count_include_pad, divide,
                              t.np_dtype) for i in range(2))
    out = separable_pool(x, rows, cols)
    return out if divide else ew.div(out, float(divisor_override))


def adaptive_avg_pool2d(x, output_size):
    """torch's ``adaptive_avg_pool2d``: window ``o`` covers ``[floor(o*H/O), ceil((o+1)*H/O))``."""
    t = aval(x)
    size = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    size = _pair(tuple(t.shape[2 + i] if s is None else s for i, s in enumerate(size)), "output_size")
    return separable_pool(x, _adaptive_matrix(t.shape[2], size[0], t.np_dtype),
                          _adaptive_matrix(t.shape[3], size[1], t.np_dtype))

