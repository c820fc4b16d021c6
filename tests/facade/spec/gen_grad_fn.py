"""The autograd graphs torch builds: ``grad_fn`` names and ``next_functions``, for common ops and layers.

    /work/main/.venv/bin/python tests/facade/spec/gen_grad_fn.py torch > tests/facade/spec/grad_fn.expected.txt
    python tests/facade/spec/gen_grad_fn.py gradc.torch      # the same cases under gradc

A case evaluates one expression on seeded inputs and returns the graph below its result as a
nested list: ``[name, [[child, output_nr], ...]]`` per node, ``["AccumulateGrad", leaf]`` for a
leaf's node (``leaf`` names the input that ``.variable`` is, by identity), ``None`` for an input
that does not require grad. ``tests/facade/test_grad_fn_graph.py`` compares them exactly.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()


def graph(out, leaves):
    """``out.grad_fn``'s graph as nested lists (depth-first; a shared node is written out at each use)."""
    def walk(fn, depth):
        if fn is None:
            return None
        name = type(fn).__name__
        if name == "AccumulateGrad":
            hits = [k for k, v in leaves.items() if v is fn.variable]
            return ["AccumulateGrad", hits[0] if hits else "?"]
        if depth > 12:
            return [name, "..."]
        return [name, [[walk(f, depth + 1), nr] for f, nr in fn.next_functions]]
    return walk(out.grad_fn, 0)


def inputs(T):
    T.manual_seed(0)
    g = {name: T.randn(shape).requires_grad_() for name, shape in
         (("x", (3, 4)), ("y", (3, 4)), ("v", (4,)), ("m", (4, 5)), ("b3", (2, 3, 4)), ("s", ()),
          ("img", (2, 3, 6, 6)))}
    g["p"] = (T.rand(3, 4) + 0.5).requires_grad_()
    g["z"] = g["x"] * 1.0  # not a leaf: in-place ops and writes through views are allowed
    g["c"] = T.randn(3, 4)  # a constant: no gradient
    g["labels"] = T.tensor([1, 0, 3])
    g["target"] = T.rand(3, 4)
    g["mask"] = g["c"] > 0
    return g


# (case name, expression). Names in scope: T (the torch module), F (T.nn.functional), nn, and inputs().
EXPRESSIONS = [
    # elementwise, unary
    ("exp", "x.exp()"), ("log", "p.log()"), ("sin", "x.sin()"), ("cos", "x.cos()"), ("tanh", "x.tanh()"),
    ("sigmoid", "x.sigmoid()"), ("torch_sigmoid", "T.sigmoid(x)"), ("relu", "x.relu()"), ("F_relu", "F.relu(x)"),
    ("abs", "x.abs()"), ("neg", "-x"), ("sqrt", "p.sqrt()"), ("rsqrt", "p.rsqrt()"), ("square", "x.square()"),
    ("reciprocal", "p.reciprocal()"), ("log1p", "p.log1p()"), ("expm1", "x.expm1()"), ("erf", "x.erf()"),
    ("clamp", "x.clamp(-0.5, 0.5)"), ("clamp_min", "x.clamp(min=0)"), ("floor", "x.floor()"),
    ("sign", "x.sign()"), ("leaky_relu", "F.leaky_relu(x, 0.1)"), ("gelu", "F.gelu(x)"), ("silu", "F.silu(x)"),
    ("softplus", "F.softplus(x)"), ("elu", "F.elu(x)"), ("softmax", "F.softmax(x, dim=1)"),
    ("log_softmax", "F.log_softmax(x, dim=1)"), ("method_softmax", "x.softmax(-1)"),
    ("log2", "p.log2()"), ("exp_then_log", "x.exp().log()"),
    # powers and scalars
    ("pow_2", "x.pow(2)"), ("pow_op_2", "x ** 2"), ("pow_half", "p ** 0.5"), ("rpow", "2 ** x"),
    ("pow_tensor", "p ** x"), ("add_scalar", "x + 1"), ("radd_scalar", "1 + x"), ("sub_scalar", "x - 1"),
    ("rsub_scalar", "1 - x"), ("mul_scalar", "x * 2"), ("rmul_scalar", "2 * x"), ("div_scalar", "x / 2"),
    ("rdiv_scalar", "2 / p"),
    # elementwise, binary
    ("add", "x + y"), ("sub", "x - y"), ("mul", "x * y"), ("div", "x / p"), ("add_const", "x + c"),
    ("mul_const", "c * x"), ("add_broadcast", "x + v"), ("add_alpha", "T.add(x, y, alpha=2)"),
    ("maximum", "T.maximum(x, y)"), ("where", "T.where(mask, x, y)"), ("mul_self", "x * x"),
    ("chain", "(x * y + x).sin() * 3"),
    # linear algebra
    ("matmul_2d", "x @ m"), ("mm", "T.mm(x, m)"), ("matmul_mv", "x @ v"), ("matmul_dot", "v @ v"),
    ("matmul_vm", "v @ m"), ("matmul_3d_2d", "b3 @ m"), ("bmm", "T.bmm(b3, b3.transpose(1, 2))"),
    ("matmul_const", "c @ m"), ("outer", "T.outer(v, v)"),
    # reductions
    ("sum", "x.sum()"), ("sum_dim", "x.sum(0)"), ("sum_keepdim", "x.sum(dim=1, keepdim=True)"),
    ("mean", "x.mean()"), ("mean_dim", "x.mean(1)"), ("max_all", "x.max()"), ("max_dim", "x.max(dim=1).values"),
    ("max_dim_index", "x.max(1)[0]"), ("min_all", "x.min()"), ("amax", "x.amax(1)"), ("prod", "x.prod()"),
    ("std", "x.std()"), ("var", "x.var()"), ("norm", "x.norm()"), ("logsumexp", "T.logsumexp(x, 1)"),
    ("cumsum", "x.cumsum(0)"), ("torch_sum", "T.sum(x)"), ("torch_mean_dim", "T.mean(x, dim=0)"),
    # views and shapes
    ("view", "x.view(12)"), ("view_neg", "x.view(-1, 2)"), ("reshape", "x.reshape(4, 3)"),
    ("reshape_const_then_add", "c.reshape(12) + x.reshape(12)"), ("T", "x.T"), ("t", "x.t()"),
    ("transpose", "x.transpose(0, 1)"), ("permute", "b3.permute(2, 0, 1)"), ("transpose_3d", "b3.transpose(1, 2)"),
    ("mT", "b3.mT"), ("unsqueeze", "x.unsqueeze(0)"), ("squeeze", "x.unsqueeze(0).squeeze(0)"),
    ("none_index", "x[None]"), ("flatten", "x.flatten()"), ("flatten_1", "b3.flatten(1)"),
    ("expand", "x.expand(2, 3, 4)"), ("expand_v", "v.expand(3, 4)"), ("contiguous_T", "x.T.contiguous()"),
    ("clone", "x.clone()"), ("repeat", "x.repeat(2, 1)"), ("flip", "x.flip(0)"), ("to_double", "x.double()"),
    ("to_float_noop", "x.float()"), ("to_dtype", "x.to(T.float64)"), ("masked_fill", "x.masked_fill(mask, 0.0)"),
    # indexing
    ("select", "x[0]"), ("select_col", "x[:, 1]"), ("select_slice", "x[0, :3]"), ("slice", "x[1:]"),
    ("slice_full_then_select", "x[:, 1:3]"), ("slice_step", "x[:, ::2]"), ("ellipsis", "x[..., 0]"),
    ("bool_mask", "x[mask]"), ("index_list", "x[[0, 2]]"), ("index_tensor", "x[T.tensor([0, 2])]"),
    ("narrow", "x.narrow(1, 1, 2)"), ("select_method", "x.select(1, 2)"), ("chunk", "x.chunk(2, 1)[1]"),
    ("split", "x.split(2, 1)[1]"), ("unbind", "x.unbind(0)[1]"), ("scalar_item_select", "b3[1, 2, 3]"),
    ("gather", "x.gather(1, T.tensor([[0], [1], [2]]))"), ("index_select", "x.index_select(0, T.tensor([2, 0]))"),
    ("select_then_slice", "x[0][1:3]"), ("slice_then_select", "x[1:2, 0]"), ("none_then_select", "x[:, None, 1]"),
    ("select_select_slice", "b3[0, 1, :2]"), ("negative_select_step", "x[-1, ::2]"), ("only_full_slice", "x[:]"),
    ("only_ellipsis", "x[...]"), ("select_full", "x[0, :]"), ("full_full", "x[:, :]"), ("range_slice", "x[0:2]"),
    ("slice_then_mask", "x[1:][mask[1:]]"), ("select_then_list", "b3[1, [0, 2]]"),
    # reshapes that copy
    ("reshape_T", "x.t().reshape(12)"), ("reshape_transposed_3d", "b3.transpose(0, 1).reshape(3, 8)"),
    ("reshape_sliced_viewable", "b3[:, :2].reshape(2, 8)"), ("reshape_sliced_copy", "x[:, :2].reshape(6)"),
    ("flatten_T", "x.t().flatten()"), ("view_T", "x.t().view(4, 3)"),
    # batched matmul: folded, transposed-folded, broadcast bmm
    ("matmul_3d_1d", "b3 @ v"), ("matmul_4d_2d", "b3.unsqueeze(0).expand(2, 2, 3, 4) @ m"),
    ("matmul_2d_3d", "x @ b3.transpose(1, 2)[:, :, :3].transpose(1, 2).reshape(2, 4, 3)"),
    ("matmul_1d_3d", "v @ b3.transpose(1, 2)"), ("matmul_3d_3d", "b3 @ b3.transpose(1, 2)"),
    ("matmul_3d_batch_one", "b3 @ m.unsqueeze(0)"), ("matmul_batch_one_3d", "x.unsqueeze(0) @ b3.transpose(1, 2)"),
    ("matmul_noncontiguous_fold", "b3.transpose(0, 1) @ m"), ("matmul_T", "b3 @ m.t().t()"),
    # more of what tutorials write
    ("dropout_train", "F.dropout(x, 0.5, training=True)"),
    ("torch_flatten", "T.flatten(b3, 1)"), ("exp_sum_keepdim", "x.exp().sum(1, keepdim=True)"),
    ("softmax_by_hand", "x.exp() / x.exp().sum(1, keepdim=True)"), ("max_pool", "F.max_pool2d(img, 2)"),
    ("avg_pool", "F.avg_pool2d(img, 2)"), ("gelu_tanh", "F.gelu(x, approximate='tanh')"), ("tanh_fn", "T.tanh(x)"),
    ("abs_max", "x.abs().max()"), ("div_method", "x.div(p)"), ("sub_method_alpha", "x.sub(y, alpha=3)"),
    ("mean_keepdim", "x.mean(-1, keepdim=True)"), ("var_dim", "x.var(0)"), ("std_dim", "x.std(1)"),
    ("argmax_no_grad", "x.argmax(1).float().requires_grad_() * 1"), ("detach_then_mul", "x.detach() * y"),
    ("sigmoid_bce_chain", "F.binary_cross_entropy(T.sigmoid(x @ m).mean(1), target[:, 0])"),
    # in-place writes through views (CopySlices on the base); ``z`` is ``x * 1.0``
    ("setitem_number", "(z.__setitem__(0, 5.0), z)[1]"),
    ("setitem_tensor", "(z.__setitem__((slice(None), 1), x[:, 0]), z)[1]"),
    ("view_iadd", "(z[0].add_(x[1]), z)[1]"), ("view_mul_", "(z[1:].mul_(2), z)[1]"),
    ("view_zero_", "(z[0].zero_(), z)[1]"), ("transposed_view_add_", "(z.t()[0].add_(1), z)[1]"),
    ("inplace_on_nonleaf", "z.add_(1)"), ("inplace_chain", "z.mul_(2).relu_()"), ("fill_", "z.fill_(2.0)"),
    ("zero_", "z.zero_()"), ("normal_on_nonleaf", "z.normal_()"), ("uniform_on_view", "(z[0].uniform_(), z)[1]"),
    # joining
    ("cat", "T.cat([x, y])"), ("cat_dim1", "T.cat([x, y], dim=1)"), ("stack", "T.stack([x, y])"),
    ("cat_const", "T.cat([x, c])"), ("stack_dim1", "T.stack([x, y], 1)"),
    # losses
    ("mse_loss", "F.mse_loss(x, y)"), ("mse_loss_target", "F.mse_loss(x, target)"),
    ("mse_sum", "F.mse_loss(x, y, reduction='sum')"), ("MSELoss", "nn.MSELoss()(x, target)"),
    ("l1_loss", "F.l1_loss(x, target)"), ("smooth_l1", "F.smooth_l1_loss(x, target)"),
    ("huber", "F.huber_loss(x, target)"), ("cross_entropy", "F.cross_entropy(x, labels)"),
    ("CrossEntropyLoss", "nn.CrossEntropyLoss()(x, labels)"),
    ("nll_loss", "F.nll_loss(F.log_softmax(x, 1), labels)"),
    ("bce", "F.binary_cross_entropy(x.sigmoid(), target)"),
    ("bce_logits", "F.binary_cross_entropy_with_logits(x, target)"),
    ("kl_div", "F.kl_div(F.log_softmax(x, 1), target, reduction='batchmean')"),
]


def _expression_case(name, text):
    def run(T):
        nn = T.nn
        g = inputs(T)
        out = eval(text, {"T": T, "F": nn.functional, "nn": nn}, dict(g))  # noqa: S307 - the case's own text
        return graph(out, g)
    run.__name__ = name
    return run


def _random_keys(count, seed=5):
    """Seeded random basic indexing keys over a (2, 3, 4) tensor: ints, slices, ``None``, ``...`` in a tuple."""
    import random
    rnd = random.Random(seed)
    keys = []
    for _ in range(count):
        items, axis = [], 0
        ellipsis = rnd.random() < 0.2
        for _ in range(rnd.randint(1, 3)):
            if axis >= 3:
                break
            kind = rnd.choice(["int", "slice", "slice", "full", "none"])
            if kind == "none":
                items.append("None")
                continue
            size = (2, 3, 4)[axis]
            if kind == "int":
                items.append(str(rnd.randrange(-size, size)))
            elif kind == "full":
                items.append(":")
            else:
                items.append("%d:%s:%d" % (rnd.randrange(size), rnd.choice(["", str(size)]), rnd.choice([1, 2])))
            axis += 1
        if ellipsis:
            items.insert(rnd.randrange(len(items) + 1), "...")
        tuple_of_one = len(items) == 1 and rnd.random() < 0.5  # ``b3[1:2,]`` is a tuple key, ``b3[1:2]`` is not
        keys.append("b3[%s%s]" % (", ".join(items), "," if tuple_of_one else ""))
    return keys


EXPRESSIONS += [("random_index_%d" % i, k) for i, k in enumerate(_random_keys(40))]

for _name, _text in EXPRESSIONS:
    case(_expression_case(_name, _text))


# ---------------------------------------------------------------- layers
def _layer(T, layer, x):
    leaves = dict(layer.named_parameters())
    leaves["x"] = x
    return graph(layer(x), leaves)


@case
def linear_2d(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5), T.randn(3, 4, requires_grad=True))


@case
def linear_2d_input_no_grad(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5), T.randn(3, 4))


@case
def linear_no_bias(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5, bias=False), T.randn(3, 4, requires_grad=True))


@case
def linear_1d(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5), T.randn(4, requires_grad=True))


@case
def linear_1d_no_bias(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5, bias=False), T.randn(4, requires_grad=True))


@case
def linear_3d(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5), T.randn(2, 3, 4, requires_grad=True))


@case
def linear_3d_no_bias(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Linear(4, 5, bias=False), T.randn(2, 3, 4, requires_grad=True))


@case
def linear_noncontiguous_3d(T):
    T.manual_seed(0)
    layer, x = T.nn.Linear(4, 5), T.randn(3, 2, 4, requires_grad=True)
    leaves = dict(layer.named_parameters())
    leaves["x"] = x
    return [graph(layer(x.transpose(0, 1)), leaves), graph(T.nn.functional.linear(x.transpose(0, 1), layer.weight),
                                                           leaves)]


@case
def linear_empty_batch_and_4d(T):
    T.manual_seed(0)
    layer = T.nn.Linear(4, 5)
    x0, x4 = T.randn(0, 4, requires_grad=True), T.randn(2, 2, 3, 4, requires_grad=True)
    leaves = dict(layer.named_parameters())
    leaves.update(x0=x0, x4=x4)
    return [graph(layer(x0), leaves), graph(layer(x4), leaves), list(layer(x4).shape)]


@case
def F_linear(T):
    T.manual_seed(0)
    w, b, x = T.randn(5, 4, requires_grad=True), T.randn(5, requires_grad=True), T.randn(3, 4)
    return graph(T.nn.functional.linear(x, w, b), {"w": w, "b": b})


@case
def sequential_mlp(T):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
    return _layer(T, model, T.randn(2, 3, 4))


@case
def sequential_mlp_sigmoid_3d(T):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.Linear(8, 2, bias=False), nn.Tanh())
    return _layer(T, model, T.randn(2, 3, 4))


@case
def conv2d(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Conv2d(3, 2, 3), T.randn(2, 3, 6, 6))


@case
def conv_relu_pool(T):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Conv2d(3, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
    return _layer(T, model, T.randn(2, 3, 6, 6))


@case
def batchnorm1d(T):
    T.manual_seed(0)
    return _layer(T, T.nn.BatchNorm1d(4), T.randn(3, 4))


@case
def layernorm(T):
    T.manual_seed(0)
    return _layer(T, T.nn.LayerNorm(4), T.randn(3, 4))


@case
def embedding(T):
    T.manual_seed(0)
    return _layer(T, T.nn.Embedding(10, 3), T.tensor([1, 4, 4]))


@case
def dropout_eval(T):
    T.manual_seed(0)
    layer = T.nn.Dropout(0.5)
    layer.eval()
    x = T.randn(3, 4, requires_grad=True)
    return graph(layer(x) * 2, {"x": x})


@case
def autograd_tutorial(T):
    """The autograd tutorial: ``z = torch.matmul(x, w) + b`` and a logits loss."""
    T.manual_seed(0)
    x, y = T.ones(5), T.zeros(3)
    w, b = T.randn(5, 3, requires_grad=True), T.randn(3, requires_grad=True)
    z = T.matmul(x, w) + b
    loss = T.nn.functional.binary_cross_entropy_with_logits(z, y)
    return [graph(z, {"w": w, "b": b}), graph(loss, {"w": w, "b": b})]


@case
def quickstart_logits(T):
    """The quickstart's network: Flatten, Linear, ReLU, Linear, ReLU, Linear on (1, 28, 28) images."""
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 10))
    x = T.rand(1, 28, 28)
    logits = model(x)
    prob = nn.Softmax(dim=1)(logits)
    return [_layer(T, model, x), graph(prob, dict(model.named_parameters())),
            graph(logits[0, :3], dict(model.named_parameters()))]


@case
def accumulate_variable_is_leaf(T):
    """``next_functions[i][0].variable`` is the leaf tensor itself, and the same node every time."""
    x = T.randn(3, requires_grad=True)
    a, b = x * 2, x + 1
    na, nb = a.grad_fn.next_functions[0][0], b.grad_fn.next_functions[0][0]
    return [type(na).__name__, na.variable is x, na is nb, x.grad_fn is None, x.is_leaf]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
