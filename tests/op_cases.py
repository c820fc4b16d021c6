"""The per-op table: every op of ``gradc.ops.OPS`` checked through the real pipeline.

Each differentiable case is a small NumPy function of some inputs. The test
compiles ``loss(*inputs, ct) = sum(fn(*inputs) * ct)`` with ``gradc.compile``
and checks the random-direction dot-product identity

    <ct, J v>  (central differences of ``fn`` run by NumPy, float64)
      ==  <vjp(ct), v>  (gradc's emitted gradient)

It also checks that the reference interpreter (``gradc.ir.interpret.evaluate``)
on the raw trace and on the raw adjoint graph, the optimised graphs, the emitted
NumPy code and plain NumPy all agree. Non-differentiable ops must be declared
``nondiff`` and give a zero gradient (which finite differences confirm).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import gradc
from gradc.ir.registry import bind
from gradc.ops import elementwise as ew
from gradc.ops import nn as nn_ops
from gradc.ops import shape as sh


# ---------------------------------------------------------------- input generators (with safe domains)
def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


def positive(*shape):
    return uniform(0.5, 2.0, *shape)


def away_from_zero(*shape, gap=0.2):
    """Values with |x| >= gap (kinks at 0 stay far from the finite-difference step)."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(gap, 1.5, shape)


def distinct(*shape):
    """Values at least 0.1 apart (no ties for max/min)."""
    def make(rng):
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.3 - 0.3 * n / 2 + rng.uniform(0, 0.1, n)).reshape(shape)
    return make


def clip_safe(*shape):
    """Values in [-1, 1], at least 0.05 away from the clip bounds +-0.5."""
    def make(rng):
        x = rng.uniform(-1.0, 1.0, shape)
        return np.where(np.abs(np.abs(x) - 0.5) < 0.05, x * 0.5, x)
    return make


def const(value):
    return lambda rng: value


def with_zeros(*shape):
    """Normal values with one zero in row 0 and two zeros in row 1 (prod's special cases)."""
    def make(rng):
        x = rng.standard_normal(shape)
        x[0, 1] = 0.0
        x[1, 0] = x[1, 2] = 0.0
        return x
    return make


def f32(gen):
    return lambda rng: gen(rng).astype(np.float32)


def labels(n, k):
    return lambda rng: rng.integers(0, k, n)


# ---------------------------------------------------------------- the table
@dataclass
class Case:
    """One use of some ops: ``fn(*inputs)`` gives an array; ``ops`` must appear in its graphs."""

    id: str
    fn: Callable
    inputs: list
    ops: tuple
    rtol: float = 1e-6
    extra: dict = field(default_factory=dict)


def take_along(a, idx):
    return np.take_along_axis(a, idx, axis=1)


def cross_entropy_pick(logits, y):
    n = logits.shape[0]
    return logits[np.arange(n), y]


def index_grad_direct(a):
    # the transpose of x[1:4:2, None, ::-1] for x of shape (5, 3), applied to a cotangent of shape (2, 1, 3)
    return sh.index_grad(a, (sh.slice_item(1, 4, 2), ("new",), sh.slice_item(None, None, -1)), (5, 3))


def gather_grad_direct(a, idx):
    # the transpose of x[idx] for x of shape (4, 2): repeated indices accumulate
    return sh.gather_grad(a, [idx], (("array", 0), sh.slice_item(None, None, None)), (4, 2))


@gradc.custom_vjp
def softplus_with_rule(x):
    return np.log1p(np.exp(x))


softplus_with_rule.defvjp(lambda x: (np.log1p(np.exp(x)), (1.0 / (1.0 + np.exp(-x)),)), lambda res, g: (g * res[0],))


@gradc.custom_jvp
def cube_with_rule(x):
    return x ** 3


cube_with_rule.defjvp(lambda p, t: (p[0] ** 3, 3.0 * p[0] ** 2 * t[0]))


@gradc.checkpoint
def checkpointed_block(x, w):
    return np.sin(np.tanh(x * w)) * w


def _scale(x):
    return 3.0 * x - 1.0


SCALE = np.array([0.5, -1.0, 2.0])


def helper_and_closure(x):
    return _scale(x) * SCALE


def static_loop(x, n):
    acc = x
    for i in range(n):
        acc = np.sin(acc) + i * x
    return acc


def static_slice(x, n):
    return x[:n] * n


# ---------------------------------------------------------------- nn ops and layers (gradc/ops/nn.py)
def conv(stride=1, padding=0, dilation=1, groups=1):
    return lambda x, w: nn_ops.conv2d(x, w, stride, padding, dilation, groups)


def max_pool(*args, **kw):
    return lambda x: nn_ops.max_pool2d(x, *args, **kw)


NN_CASES = [
    Case("conv2d", conv(), [normal(2, 3, 5, 5), normal(4, 3, 3, 3)], ("conv2d",)),
    Case("conv2d_stride_padding", conv(2, 1), [normal(2, 2, 6, 5), normal(3, 2, 3, 2)], ("conv2d", "index_grad")),
    Case("conv2d_stride_remainder", conv(3, 0), [normal(1, 2, 8, 7), normal(2, 2, 2, 3)], ("conv2d",)),
    Case("conv2d_dilation", conv(1, 2, 2), [normal(1, 2, 6, 6), normal(2, 2, 3, 3)], ("conv2d",)),
    Case("conv2d_groups", conv(1, 1, 1, 2), [normal(2, 4, 5, 4), normal(6, 2, 3, 3)], ("conv2d",)),
    Case("conv2d_all", conv((2, 1), (1, 2), (1, 2), 3), [normal(1, 3, 7, 6), normal(3, 1, 2, 2)], ("conv2d",)),
    Case("conv2d_asymmetric_pad", conv(1, ((0, 1), (2, 0))), [normal(1, 1, 4, 4), normal(2, 1, 2, 3)], ("conv2d",)),
    Case("conv2d_big_pad", conv(2, 3), [normal(1, 1, 3, 3), normal(1, 1, 2, 2)], ("conv2d", "index")),
    Case("conv2d_f32", conv(1, 1), [f32(normal(2, 2, 4, 4)), f32(normal(3, 2, 3, 3))], ("conv2d",), rtol=1e-3),
    Case("max_pool2d", max_pool(2), [distinct(2, 3, 4, 4)], ("max_pool2d", "gather_grad")),
    Case("max_pool2d_stride_pad", max_pool(3, 2, 1), [distinct(1, 2, 5, 6)], ("max_pool2d",)),
    Case("max_pool2d_dilation_ceil", max_pool(2, 2, 0, 2, True), [distinct(1, 1, 7, 6)], ("max_pool2d",)),
    Case("max_pool2d_f32", max_pool((2, 3), (1, 2)), [f32(distinct(1, 2, 4, 5))], ("max_pool2d",), rtol=1e-3),
    Case("avg_pool2d", lambda x: nn_ops.avg_pool2d(x, 2), [normal(2, 3, 4, 6)], ("matmul",)),
    Case("avg_pool2d_pad_ceil", lambda x: nn_ops.avg_pool2d(x, 3, 2, 1, True, False), [normal(1, 2, 6, 7)],
         ("matmul",)),
    Case("avg_pool2d_divisor", lambda x: nn_ops.avg_pool2d(x, (2, 3), 1, (1, 0), divisor_override=4),
         [normal(1, 1, 4, 5)], ("matmul", "div")),
    Case("adaptive_avg_pool2d", lambda x: nn_ops.adaptive_avg_pool2d(x, (3, 2)), [normal(2, 2, 5, 7)], ("matmul",)),
    Case("conv_then_pool", lambda x, w: nn_ops.max_pool2d(np.tanh(nn_ops.conv2d(x, w, padding=1)), 2),
         [normal(1, 2, 6, 6), normal(3, 2, 3, 3)], ("conv2d", "max_pool2d", "tanh")),
]

DIFF_CASES = [
    # ---- arithmetic (with broadcasting, Python scalars, reflected operators)
    Case("add", lambda a, b: a + b, [normal(3, 4), normal(4)], ("add", "broadcast_to")),
    Case("add_np", lambda a, b: np.add(a, b), [normal(2, 1), normal(1, 3)], ("add", "broadcast_to")),
    Case("add_python_float", lambda a, s: a + s, [normal(3), const(0.7)], ("add",)),
    Case("sub", lambda a, b: a - b, [normal(2, 3), normal(2, 1)], ("sub",)),
    Case("rsub", lambda a: 2.0 - a, [normal(3)], ("sub",)),
    Case("mul", lambda a, b: a * b, [normal(3, 4), normal(3, 4)], ("mul",)),
    Case("mul_scalar_input", lambda a, s: s * a, [normal(2, 3), const(-1.3)], ("mul",)),
    Case("div", lambda a, b: a / b, [normal(3), positive(3)], ("div",)),
    Case("rdiv", lambda b: 1.5 / b, [positive(2, 2)], ("div",)),
    Case("reciprocal", lambda b: np.reciprocal(b), [positive(3)], ("div",)),
    Case("pow_int", lambda a: a ** 3, [normal(4)], ("pow",)),
    Case("pow_neg_int", lambda a: a ** -2, [positive(4)], ("pow",)),
    Case("pow_float", lambda a: a ** 2.5, [positive(4)], ("pow",)),
    Case("pow_array", lambda a, b: a ** b, [positive(3, 2), normal(3, 2)], ("pow",)),
    Case("pow_np_broadcast", lambda a, b: np.power(a, b), [positive(3, 1), normal(2)], ("pow",)),
    Case("rpow", lambda a: 2.0 ** a, [normal(3)], ("pow",)),
    Case("square", lambda a: np.square(a), [normal(3)], ("pow",)),
    Case("neg", lambda a: -a, [normal(3)], ("neg",)),
    Case("negative", lambda a: np.negative(a), [normal(2, 2)], ("neg",)),
    # ---- unary math
    Case("abs", lambda a: np.abs(a), [away_from_zero(5)], ("abs",)),
    Case("abs_builtin", lambda a: abs(a), [away_from_zero(2, 3)], ("abs",)),
    Case("exp", lambda a: np.exp(a), [normal(4)], ("exp",)),
    Case("log", lambda a: np.log(a), [positive(4)], ("log",)),
    Case("log1p", lambda a: np.log1p(a), [uniform(-0.5, 2.0, 4)], ("log1p",)),
    Case("expm1", lambda a: np.expm1(a), [normal(4)], ("expm1",)),
    Case("sqrt", lambda a: np.sqrt(a), [positive(4)], ("sqrt",)),
    Case("sin", lambda a: np.sin(a), [normal(4)], ("sin",)),
    Case("cos", lambda a: np.cos(a), [normal(4)], ("cos",)),
    Case("tan", lambda a: np.tan(a), [uniform(-1.0, 1.0, 4)], ("tan",)),
    Case("tanh", lambda a: np.tanh(a), [normal(4)], ("tanh",)),
    Case("arctan", lambda a: np.arctan(a), [normal(4)], ("arctan",)),
    Case("sinh", lambda a: np.sinh(a), [normal(4)], ("sinh",)),
    Case("cosh", lambda a: np.cosh(a), [normal(4)], ("cosh",)),
    Case("sign_times", lambda a: a * np.sign(a), [away_from_zero(4)], ("sign", "mul")),
    # ---- binary non-linear
    Case("maximum", lambda a, b: np.maximum(a, b), [distinct(2, 3), distinct(2, 3)], ("maximum",)),
    Case("maximum_scalar", lambda a: np.maximum(a, 0.0), [away_from_zero(5)], ("maximum",)),
    Case("minimum", lambda a, b: np.minimum(a, b), [distinct(4), distinct(4)], ("minimum",)),
    Case("minimum_broadcast", lambda a, b: np.minimum(a, b), [distinct(2, 3), distinct(3)], ("minimum",)),
    Case("logaddexp", lambda a, b: np.logaddexp(a, b), [normal(3, 1), normal(4)], ("logaddexp",)),
    Case("where", lambda a, b: np.where(a > 0, a * b, b ** 2), [away_from_zero(3, 2), normal(3, 2)],
         ("where", "greater")),
    Case("where_scalar_branch", lambda a: np.where(a < 0, 0.0, a), [away_from_zero(5)], ("where", "less")),
    Case("clip", lambda a: np.clip(a, -0.5, 0.5), [clip_safe(6)], ("clip",)),
    Case("clip_method_one_sided", lambda a: a.clip(None, 0.5), [clip_safe(6)], ("clip",)),
    Case("clip_array_bounds", lambda a, lo: np.clip(a, lo, 1.0), [distinct(4), distinct(4)],
         ("maximum", "minimum")),
    Case("astype_f32_to_f64", lambda a: a.astype(np.float64) * 3.0, [f32(normal(3))], ("astype",), rtol=1e-4),
    Case("float32_mixed", lambda a, b: np.sin(a) * b, [f32(normal(3)), normal(3)], ("astype", "sin"), rtol=1e-4),
    Case("float32_only", lambda a: np.exp(a).sum(axis=0), [f32(normal(2, 3))], ("exp", "sum"), rtol=1e-4),
    # ---- reductions
    Case("sum_all", lambda a: a.sum(), [normal(2, 3)], ("sum",)),
    Case("sum_axis0", lambda a: np.sum(a, axis=0), [normal(2, 3)], ("sum",)),
    Case("sum_axes_keepdims", lambda a: np.sum(a, axis=(0, 2), keepdims=True), [normal(2, 3, 4)], ("sum",)),
    Case("sum_neg_axis", lambda a: a.sum(axis=-1), [normal(2, 3)], ("sum",)),
    Case("add_reduce", lambda a: np.add.reduce(a, axis=1), [normal(2, 3)], ("sum",)),
    Case("mean_all", lambda a: np.mean(a), [normal(2, 3)], ("mean",)),
    Case("mean_axis_keepdims", lambda a: a.mean(axis=1, keepdims=True), [normal(2, 3)], ("mean",)),
    Case("mean_axes", lambda a: np.mean(a, axis=(0, 1)), [normal(2, 3, 2)], ("mean",)),
    Case("max_all", lambda a: np.max(a), [distinct(2, 3)], ("max",)),
    Case("max_axis", lambda a: a.max(axis=0), [distinct(3, 4)], ("max",)),
    Case("amax_keepdims", lambda a: np.amax(a, axis=1, keepdims=True), [distinct(3, 4)], ("max",)),
    Case("maximum_reduce", lambda a: np.maximum.reduce(a, axis=1), [distinct(2, 3)], ("max",)),
    Case("min_all", lambda a: a.min(), [distinct(2, 3)], ("min",)),
    Case("min_axis_keepdims", lambda a: np.min(a, axis=-1, keepdims=True), [distinct(3, 4)], ("min",)),
    Case("prod_all", lambda a: np.prod(a), [positive(2, 3)], ("prod",)),
    Case("prod_axis", lambda a: a.prod(axis=1), [normal(3, 4)], ("prod",)),
    Case("prod_keepdims", lambda a: np.prod(a, axis=0, keepdims=True), [normal(3, 2)], ("prod",)),
    Case("prod_with_zeros", lambda a: np.prod(a, axis=1), [with_zeros(3, 4)], ("prod",)),
    # ---- linear algebra
    Case("matmul_1d_1d", lambda a, b: a @ b, [normal(4), normal(4)], ("matmul",)),
    Case("matmul_2d_1d", lambda a, b: a @ b, [normal(3, 4), normal(4)], ("matmul",)),
    Case("matmul_1d_2d", lambda a, b: a @ b, [normal(3), normal(3, 4)], ("matmul",)),
    Case("matmul_2d_2d", lambda a, b: a @ b, [normal(3, 4), normal(4, 2)], ("matmul",)),
    Case("matmul_batched", lambda a, b: a @ b, [normal(2, 3, 4), normal(2, 4, 5)], ("matmul",)),
    Case("matmul_batched_broadcast", lambda a, b: np.matmul(a, b), [normal(2, 3, 4), normal(4, 2)],
         ("matmul", "broadcast_to")),
    Case("matmul_1d_batched", lambda a, b: a @ b, [normal(3), normal(2, 3, 4)], ("matmul", "reshape")),
    Case("dot", lambda a, b: np.dot(a, b), [normal(2, 3), normal(3, 2)], ("matmul",)),
    Case("dot_method", lambda a, b: a.dot(b), [normal(3), normal(3)], ("matmul",)),
    Case("outer", lambda a, b: np.outer(a, b), [normal(3), normal(2)], ("outer",)),
    # ---- shapes
    Case("transpose_T", lambda a: a.T, [normal(2, 3)], ("transpose",)),
    Case("transpose_axes", lambda a: np.transpose(a, (1, 2, 0)), [normal(2, 3, 4)], ("transpose",)),
    Case("transpose_method", lambda a: a.transpose(2, 0, 1), [normal(2, 3, 4)], ("transpose",)),
    Case("reshape", lambda a: a.reshape(3, 4), [normal(2, 6)], ("reshape",)),
    Case("reshape_minus_one", lambda a: np.reshape(a, (-1, 2)), [normal(2, 3, 2)], ("reshape",)),
    Case("ravel", lambda a: np.ravel(a) * a.flatten(), [normal(2, 3)], ("reshape",)),
    Case("expand_dims", lambda a: np.expand_dims(a, 1) * np.ones((3, 2, 4)), [normal(3, 4)],
         ("reshape", "broadcast_to")),
    Case("squeeze", lambda a: np.squeeze(a), [normal(3, 1, 4)], ("reshape",)),
    Case("squeeze_method", lambda a: a.squeeze(axis=1), [normal(3, 1, 4)], ("reshape",)),
    Case("broadcast_to", lambda a: np.broadcast_to(a, (4, 3)), [normal(3)], ("broadcast_to",)),
    Case("broadcast_to_ones", lambda a: np.broadcast_to(a, (2, 3, 4)), [normal(3, 1)], ("broadcast_to",)),
    Case("concatenate", lambda a, b: np.concatenate([a, b], axis=1), [normal(2, 3), normal(2, 1)],
         ("concatenate",)),
    Case("concatenate_axis0", lambda a, b: np.concatenate((a, b)), [normal(2, 3), normal(1, 3)], ("concatenate",)),
    Case("concatenate_none", lambda a, b: np.concatenate([a, b], axis=None), [normal(2, 2), normal(3)],
         ("concatenate",)),
    Case("stack", lambda a, b: np.stack([a, b]), [normal(3), normal(3)], ("concatenate", "reshape")),
    Case("stack_last", lambda a, b: np.stack([a, b], axis=-1), [normal(2, 3), normal(2, 3)], ("concatenate",)),
    # ---- basic indexing
    Case("index_int", lambda a: a[1], [normal(3, 4)], ("index",)),
    Case("index_negative", lambda a: a[-1, -2], [normal(3, 4)], ("index",)),
    Case("index_slice", lambda a: a[1:3], [normal(5)], ("index",)),
    Case("index_step", lambda a: a[::2], [normal(5)], ("index",)),
    Case("index_reverse", lambda a: a[::-1, 1:], [normal(3, 4)], ("index",)),
    Case("index_negative_step", lambda a: a[1, ::-2, None], [normal(3, 5)], ("index",)),
    Case("index_column", lambda a: a[:, 1], [normal(3, 4)], ("index",)),
    Case("index_none", lambda a: a[None, :, 1:], [normal(3, 4)], ("index",)),
    Case("index_ellipsis", lambda a: a[..., 0], [normal(2, 3, 4)], ("index",)),
    Case("index_overlap", lambda a: a[1:] * a[:-1], [normal(5)], ("index",)),
    Case("index_grad", index_grad_direct, [normal(2, 1, 3)], ("index_grad",)),
    # ---- integer-array indexing
    Case("gather_labels", cross_entropy_pick, [normal(4, 3), labels(4, 3)], ("gather",)),
    Case("gather_repeated", lambda a: a[np.array([0, 2, 2, 0])], [normal(3, 2)], ("gather",)),
    Case("gather_list", lambda a: a[:, [1, 1, 0]], [normal(2, 3)], ("gather",)),
    Case("gather_input_index", lambda a, i: a[i], [normal(5), labels(7, 5)], ("gather",)),
    Case("take_along_axis", take_along, [normal(3, 4), lambda rng: rng.integers(0, 4, (3, 2))], ("gather",)),
    Case("gather_grad", gather_grad_direct, [normal(3, 2), const(np.array([1, 3, 1]))], ("gather_grad",)),
    # ---- Python features: Python floats, static ints, closures, helpers, loops
    Case("python_float_only", lambda s, t: np.sin(s) * t + s ** 2, [const(0.3), const(-1.7)], ("sin",)),
    Case("helper_and_closure", helper_and_closure, [normal(3)], ("mul", "sub")),
    Case("static_int_loop", static_loop, [normal(3), const(3)], ("sin",)),
    Case("static_int_slice", static_slice, [normal(5), const(2)], ("index",)),
    # ---- integer array inputs mixed into float computations (promoted, never differentiated)
    Case("maximum_int_input", lambda a, i: np.maximum(a, i), [uniform(0.2, 0.8, 3), const(np.arange(3))],
         ("maximum", "astype")),
    Case("pow_int_array_exponent", lambda a, i: a ** i, [positive(3), const(np.arange(3))], ("pow",)),
    Case("div_by_int_input", lambda a, i: a / (i + 1), [normal(3), const(np.arange(3))], ("div",)),
    Case("where_int_branch", lambda a, i: np.where(a > 0, a, i), [away_from_zero(3), const(np.arange(3))],
         ("where",)),
    Case("concatenate_int", lambda a, i: np.concatenate([a, i]) ** 2, [normal(2), const(np.arange(3))],
         ("concatenate",)),
    Case("matmul_int_left", lambda a, i: i @ a, [normal(3, 2), const(np.arange(3))], ("matmul",)),
    Case("mean_of_int_product", lambda a, i: np.mean(a * i, axis=0), [normal(2, 3), const(np.arange(3))],
         ("mean",)),
    Case("gather_int32_labels", cross_entropy_pick, [normal(3, 2), const(np.array([0, 1, 1], np.int32))],
         ("gather",)),
    # ---- 0-d values: emitted code holds float64 scalars as Python floats, which have no ndarray methods
    Case("scalar_new_axis", lambda s: s[None, None] * np.ones((2, 3)), [const(np.float64(0.5))], ("index",)),
    Case("scalar_reshape", lambda s: np.concatenate([s.reshape(1), np.ones(2)]) ** 2, [const(np.float64(0.5))],
         ("reshape", "concatenate")),
    Case("scalar_max_weighted", lambda a, s: np.max(a) * s, [distinct(2, 3), const(1.5)], ("max",)),
    # ---- user-written rules (gradc/ops/autodiff.py): the rule is the true derivative, so differences agree
    Case("custom_vjp_rule", lambda a: softplus_with_rule(a) * a, [normal(2, 3)], ("custom_call",)),
    Case("custom_jvp_rule", lambda a, b: cube_with_rule(a) * b, [normal(4), normal(4)], ("custom_call",)),
    Case("checkpoint_block", lambda a, b: checkpointed_block(a, b) * a, [normal(2, 3), normal(3)],
         ("custom_call", "recompute")),
    # ---- nn (gradc/ops/nn.py): convolution, pooling; layers' formulas built from registry ops
    *NN_CASES,
]


@dataclass
class NondiffCase:
    id: str
    fn: Callable  # float array -> float array that does not depend smoothly on the input
    inputs: list
    ops: tuple


NONDIFF_CASES = [
    NondiffCase("sign", lambda a: np.sign(a), [away_from_zero(4)], ("sign",)),
    # stop_gradient's own semantics (zero derivative by declaration) are tested in tests/transforms/test_custom_rules.py
    NondiffCase("stop_gradient", lambda a: np.floor(gradc.stop_gradient(a) * 3.0), [uniform(0.1, 0.3, 4)],
                ("stop_gradient", "floor")),
    NondiffCase("floor", lambda a: np.floor(a), [lambda rng: rng.integers(-3, 3, 5) + rng.uniform(0.2, 0.8, 5)],
                ("floor",)),
    NondiffCase("heaviside", lambda a: ew.heaviside(a, 0.5), [away_from_zero(4)], ("heaviside",)),
    NondiffCase("less", lambda a: (a < 0.1).astype(np.float64), [away_from_zero(4)], ("less", "astype")),
    NondiffCase("less_equal", lambda a: np.less_equal(a, 0.1) * 1.0, [away_from_zero(4)], ("less_equal",)),
    NondiffCase("greater", lambda a, b: (a > b) * 2.0, [distinct(4), distinct(4)], ("greater",)),
    NondiffCase("greater_equal", lambda a: (a >= 0.0) * a.shape[0], [away_from_zero(4)], ("greater_equal",)),
    NondiffCase("equal", lambda a: (a == 0.0) * 1.0, [away_from_zero(4)], ("equal",)),
    NondiffCase("not_equal", lambda a, b: np.not_equal(a, b) * 1.0, [distinct(3), distinct(3)], ("not_equal",)),
    NondiffCase("logical_and", lambda a: ((a > 0.0) & (a < 1.0)) * 1.0, [away_from_zero(5)], ("logical_and",)),
    NondiffCase("logical_or", lambda a: np.logical_or(a > 0.5, a < -0.5) * 1.0, [away_from_zero(5)],
                ("logical_or",)),
    NondiffCase("logical_not", lambda a: (~(a > 0.0)) * 1.0, [away_from_zero(5)], ("logical_not",)),
    NondiffCase("argmax", lambda a: np.argmax(a, axis=0) * 1.0, [distinct(3, 4)], ("argmax",)),
    NondiffCase("argmax_flat", lambda a: a.argmax() * 1.0, [distinct(3, 4)], ("argmax",)),
    NondiffCase("argmin", lambda a: np.argmin(a, axis=1) * 1.0, [distinct(3, 4)], ("argmin",)),
    # a named size read at run time (gradc/ops/sizes.py; its symbolic use is tested in tests/test_symbolic_sizes.py)
    NondiffCase("size", lambda a: np.ones(4) * bind("size", a, axes=(0, 1), dim=6, dtype="f64"), [normal(2, 3)],
                ("size",)),
    # ---- nn (gradc/ops/nn.py)
    NondiffCase("max_pool2d_index", lambda a: nn_ops.max_pool2d_index(a, 2) * 1.0, [distinct(1, 2, 4, 5)],
                ("max_pool2d_index",)),
]


def seed_of(name):
    return zlib.crc32(name.encode())


def make_inputs(case):
    rng = np.random.default_rng(seed_of(case.id))
    return [gen(rng) for gen in case.inputs]


def is_float_input(a):
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


def make_loss(fn, n):
    """``loss(a0, ..., a{n-1}, ct) = np.sum(fn(a0, ...) * ct)`` with named parameters (gradc needs them)."""
    names = ", ".join(f"a{i}" for i in range(n))
    namespace = {"np": np, "fn": fn}
    exec(f"def loss({names}, ct):\n    return np.sum(fn({names}) * ct)\n", namespace)
    return namespace["loss"]


def as_float64(a):
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a


def numpy_value(fn, args):
    return np.asarray(fn(*[as_float64(a) for a in args]), dtype=np.float64)


def directional_derivative(fn, args, ct, wrt, direction, h=1e-6):
    """d/dt <ct, fn(args + t v)> at 0 by central differences, in float64 NumPy."""
    def at(t):
        shifted = [as_float64(a) for a in args]
        for i, v in zip(wrt, direction):
            shifted[i] = shifted[i] + t * v
        return float(np.sum(np.asarray(fn(*shifted), dtype=np.float64) * ct))
    return (at(h) - at(-h)) / (2 * h)


def cotangent_like(value, rng):
    ct = rng.standard_normal(np.shape(value))
    return float(ct) if np.ndim(value) == 0 else ct


def assert_close(actual, expected, rtol=1e-9, atol=1e-12, what=""):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol, err_msg=what)


def compile_case(case, args):
    rng = np.random.default_rng(seed_of(case.id) + 1)
    ct = cotangent_like(numpy_value(case.fn, args), rng)
    loss = make_loss(case.fn, len(args))
    wrt = tuple(i for i, a in enumerate(args) if is_float_input(a))
    compiled = gradc.compile(loss, *args, ct, wrt=tuple(f"a{i}" for i in wrt))
    return loss, ct, wrt, compiled


def ops_in(*graphs):
    """The ops of ``graphs`` and of the graphs their equations hold (helper bodies, loop bodies, branches)."""
    from gradc.ir.graph import subgraphs
    found, todo = set(), list(graphs)
    while todo:
        g = todo.pop()
        for eqn in g.eqns:
            found.add(eqn.op)
            todo.extend(subgraphs(eqn))
    return found


# ================================================================ linear algebra and contractions (issue 13)
# (gradc/ops/linalg_decomp.py, linalg_svd.py, linalg_api.py, contract.py). Matrices are well conditioned
# and their spectra distinct, so the finite differences are accurate and the eigen/SVD rules apply.
from gradc.ops import contract as con  # noqa: E402
from gradc.ops import linalg_cholesky as lch  # noqa: E402
from gradc.ops import linalg_decomp as decomp  # noqa: E402
from gradc.ops import linalg_scipy as lsp  # noqa: E402


def well_conditioned(*shape):
    """A random matrix (or stack) plus 3 I: far from singular."""
    return lambda rng: rng.standard_normal(shape) + 3.0 * np.eye(shape[-1])


def spd(*shape):
    """A random symmetric positive definite matrix (or stack): A A^T / n + I."""
    def make(rng):
        a = rng.standard_normal(shape)
        return a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1])
    return make


def _sign_free_eigh(a):
    w, v = np.linalg.eigh(a)
    return (v * v) * w + w


def _sign_free_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.concatenate([((u * u) @ s).ravel(), ((vh * vh).T @ s).ravel(), s])


def _qr_parts(a):
    q, r = np.linalg.qr(a)
    return np.concatenate([q.ravel(), r.ravel()])


LINALG_CASES = [
    Case("solve", lambda a, b: np.linalg.solve(a, b), [well_conditioned(4, 4), normal(4, 2)], ("solve",)),
    Case("solve_vector_batched", lambda a, b: np.linalg.solve(a, b), [well_conditioned(2, 3, 3), normal(3)],
         ("solve", "broadcast_to")),
    Case("inv", lambda a: np.linalg.inv(a), [well_conditioned(3, 3)], ("solve", "eye_like")),
    Case("det", lambda a: np.linalg.det(a), [well_conditioned(3, 3)], ("logabsdet", "det_sign")),
    Case("slogdet_batched", lambda a: np.linalg.slogdet(a)[1], [well_conditioned(2, 3, 3)], ("logabsdet",)),
    Case("cholesky", lambda a: np.linalg.cholesky(a), [spd(4, 4)], ("cholesky",)),
    Case("cholesky_batched_upper", lambda a: np.linalg.cholesky(a, upper=True), [spd(2, 3, 3)], ("cholesky",)),
    Case("cholesky_grad", lambda a, g: lch.cholesky_grad(np.linalg.cholesky(a), g), [spd(4, 4), normal(4, 4)],
         ("cholesky", "cholesky_grad")),
    Case("triangular_solve_lower", lambda a, b: lsp.solve_triangular(a, b, lower=True),
         [well_conditioned(4, 4), normal(4, 2)], ("triangular_solve",)),
    Case("triangular_solve_upper_trans_unit", lambda a, b: lsp.solve_triangular(a, b, trans=1, unit_diagonal=True),
         [well_conditioned(3, 3), normal(3)], ("eye_like", "tri_mask", "triangular_solve")),
    Case("cho_solve", lambda a, b: lsp.cho_solve(lsp.cho_factor(a), b), [spd(3, 3), normal(3, 2)],
         ("cholesky", "triangular_solve")),
    Case("lu_solve", lambda a, b: lsp.lu_solve(lsp.lu_factor(a), b, trans=1), [well_conditioned(3, 3), normal(3)],
         ("solve",)),
    Case("tri_mask_upper", lambda a: decomp.tri(a, False, 1), [normal(3, 4)], ("tri_mask",)),
    Case("tri_matmul", lambda a, b: decomp.tri_matmul(a, b, True, True), [normal(4, 4), normal(4, 2)], ("tri_matmul",)),
    Case("tri_matmul_upper_batched", lambda a, b: decomp.tri_matmul(a, b, False), [normal(2, 3, 3), normal(2, 3, 2)],
         ("tri_matmul",)),
    Case("tri_half_batched", lambda a: decomp.phi(a, False) * decomp.phi(a), [normal(2, 3, 3)], ("tri_half",)),
    Case("eigh", _sign_free_eigh, [normal(4, 4)], ("eigh",)),
    Case("eigh_upper_batched", lambda a: np.linalg.eigh(a, UPLO="U")[0], [normal(2, 3, 3)], ("eigh",)),
    Case("eigvalsh", lambda a: np.linalg.eigvalsh(a), [normal(4, 4)], ("eigvalsh",)),
    Case("svd_tall", _sign_free_svd, [normal(5, 3)], ("svd",)),
    Case("svd_wide", _sign_free_svd, [normal(3, 5)], ("svd",)),
    Case("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), [normal(2, 4, 3)], ("svdvals",)),
    Case("qr_tall", _qr_parts, [normal(5, 3)], ("qr",)),
    Case("qr_wide", _qr_parts, [normal(3, 5)], ("qr",)),
    Case("expm", lambda a: lsp.expm(a), [uniform(-0.5, 0.5, 3, 3)], ("expm",)),
    Case("pinv", lambda a: np.linalg.pinv(a), [normal(4, 3)], ("svd",)),
    Case("lstsq", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], [normal(5, 3), normal(5, 2)], ("svd",)),
    Case("lstsq_residuals", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], [normal(5, 3), normal(5)], ("svd",)),
    Case("matrix_power_negative", lambda a: np.linalg.matrix_power(a, -3), [well_conditioned(3, 3)],
         ("eye_like", "solve")),
    Case("norm_vector_2", lambda a: np.linalg.norm(a), [normal(5)], ("sqrt",)),
    Case("norm_vector_1_axis", lambda a: np.linalg.norm(a, 1, axis=0), [away_from_zero(3, 4)], ("abs",)),
    Case("norm_vector_inf", lambda a: np.linalg.norm(a, np.inf, axis=1, keepdims=True), [distinct(3, 4)], ("max",)),
    Case("norm_vector_p3", lambda a: np.linalg.norm(a, 3, axis=-1), [away_from_zero(2, 4)], ("pow",)),
    Case("norm_fro", lambda a: np.linalg.norm(a, "fro"), [normal(3, 4)], ("sqrt",)),
    Case("norm_nuc", lambda a: np.linalg.norm(a, "nuc"), [normal(3, 4)], ("svdvals",)),
    Case("norm_2_matrix", lambda a: np.linalg.norm(a, 2, axis=(1, 2)), [normal(2, 3, 4)], ("svdvals",)),
    Case("norm_1_matrix", lambda a: np.linalg.norm(a, 1), [distinct(3, 4)], ("max", "abs")),
    # ---- contractions: lowered to transposes, reshapes, matmul, diagonals and sums
    Case("einsum_matmul", lambda a, b: np.einsum("ij,jk->ik", a, b), [normal(3, 4), normal(4, 2)], ("matmul",)),
    Case("einsum_batched_ellipsis", lambda a, b: np.einsum("...ij,...jk", a, b), [normal(2, 3, 4), normal(4, 2)],
         ("matmul",)),
    Case("einsum_diagonal_trace", lambda a: np.einsum("ii->i", a) + np.einsum("ii", a), [normal(3, 3)],
         ("gather",)),
    Case("einsum_three_optimized", lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal"),
         [normal(2, 5), normal(5, 4), normal(4, 3)], ("matmul",)),
    Case("einsum_dot_outer", lambda a, b: np.einsum("i,i", a, b) * np.einsum("i,j", a, b), [normal(3), normal(3)],
         ("matmul", "mul")),
    Case("tensordot", lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 1])), [normal(3, 4, 2), normal(4, 3, 5)],
         ("matmul",)),
    Case("inner_vdot", lambda a, b: np.inner(a, b) * np.vdot(a, b), [normal(2, 3), normal(2, 3)], ("matmul",)),
    Case("kron", lambda a, b: np.kron(a, b), [normal(2, 3), normal(3, 2)], ("mul", "reshape")),
    Case("trace_offset", lambda a: np.trace(a, 1), [normal(3, 4)], ("gather",)),
    Case("diag_embed", lambda v: np.diag(v, -1), [normal(3)], ("gather_grad",)),
    Case("diagonal_axes", lambda a: np.diagonal(a, 0, 0, 2), [normal(3, 2, 3)], ("gather", "transpose")),
    Case("swapaxes_moveaxis", lambda a: np.swapaxes(a, 0, 2) + np.moveaxis(a, 0, -1).transpose(1, 0, 2),
         [normal(2, 3, 2)], ("transpose",)),
    Case("vecdot", lambda a, b: con.vecdot(a, b, axis=0), [normal(3, 2), normal(3, 2)], ("sum",)),
]
DIFF_CASES.extend(LINALG_CASES)
NONDIFF_CASES.extend([
    NondiffCase("eye_like", lambda a: decomp.eye_like(a) * 2.0, [normal(3, 3)], ("eye_like",)),
    NondiffCase("det_sign", lambda a: np.linalg.slogdet(a)[0] * 1.0, [well_conditioned(2, 3, 3)], ("det_sign",)),
])
# ================================================================ end of linear algebra and contractions


# ================================================================ the other families' entries (one module each)
import op_cases_complex  # noqa: E402
import op_cases_control  # noqa: E402
import op_cases_distributions  # noqa: E402
import op_cases_fft  # noqa: E402
import op_cases_routines  # noqa: E402
import op_cases_shape  # noqa: E402
import op_cases_special  # noqa: E402
import op_cases_special_scipy  # noqa: E402
import op_cases_stats  # noqa: E402

for _family in (op_cases_stats, op_cases_special, op_cases_special_scipy, op_cases_shape, op_cases_control,
                op_cases_routines, op_cases_complex, op_cases_fft, op_cases_distributions):
    DIFF_CASES.extend(_family.DIFF_CASES)
    NONDIFF_CASES.extend(_family.NONDIFF_CASES)
