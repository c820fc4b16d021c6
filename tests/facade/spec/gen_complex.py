"""Complex tensors under torch and gradc: dtypes and promotion, printing, ops with their ``grad_fn`` and gradients,
autograd's convention for complex leaves, and errors.

    /work/main/.venv/bin/python tests/facade/spec/gen_complex.py torch > tests/facade/spec/complex.expected.txt
    python tests/facade/spec/gen_complex.py gradc.torch      # the same cases under gradc

Values are float64/complex128 unless a case is about float32 (printing, ``randn``). A complex value is written
as its ``[real, imag]`` pair. The gradient of a real loss with respect to a complex leaf is torch's
``dL/dx + i dL/dy``.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()
_RNG_SEED = 7


def v(x):
    """A tensor as ``[dtype, shape, values]`` (complex values as ``[re, im]``)."""
    if x is None:
        return None
    data = x.detach().resolve_conj().numpy() if hasattr(x, "resolve_conj") else x.detach().numpy()
    flat = np.asarray(data).reshape(-1)
    if np.iscomplexobj(flat):
        values = [[float(z.real), float(z.imag)] for z in flat]
    else:
        values = [float(z) for z in flat]
    return [str(x.dtype).replace("torch.", ""), list(x.shape), values]


def _inputs(T):
    rng = np.random.default_rng(_RNG_SEED)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    m = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    r = rng.standard_normal((3, 4))
    return {k: T.tensor(x, requires_grad=True) for k, x in (("a", a), ("b", b), ("m", m), ("r", r))}


# expressions of complex tensors a, b (3x4), m (4x2) and a real r (3x4); each is differentiated through a
# real loss: sum(real(y * w)) for a fixed w
OPS = [
    "a + b", "a - b", "a * b", "a / b", "a * r", "r / a", "a ** 2", "a ** 0.5", "a ** b", "2 ** a", "a @ m",
    "a.exp()", "a.log()", "a.sin()", "a.cos()", "a.tanh()", "a.sqrt()", "a.sigmoid()", "a.reciprocal()",
    "a.abs()", "a.angle()", "a.conj()", "a.conj_physical()", "a.real", "a.imag", "a.sum()", "a.sum(0)",
    "a.mean(1)", "a.prod(1)", "a.t()", "a.mT", "a.mH", "a.H", "a.adjoint()", "a.reshape(4, 3)", "a[0]",
    "a[:, 1:3]", "a[[0, 2]]", "a.flip(0)", "T.cat([a, b])", "T.stack([a, b])", "a.expand(2, 3, 4)",
    "a.repeat(2, 1)", "-a", "a.square()", "a.sgn()", "T.where(r > 0, a, b)", "a * 1j", "a + 1j", "1j * a",
    "a.diagonal()", "T.einsum('ij,ij->i', a, b)", "T.vdot(a[0], b[1])", "T.dot(a[0], b[0])", "a.roll(1, 0)",
    "a.cumsum(1)", "T.outer(a[0], b[0])", "a.norm()", "a.abs().pow(2).sum()", "a.log1p()", "a.sinh()",
    "a.cosh()", "a.tan()", "a.atan()", "a.rsqrt()", "a.std()", "a.var(1)", "a * a.conj()", "(a * a.conj()).real",
    "T.view_as_real(a)", "T.view_as_complex(T.view_as_real(a).contiguous())", "T.polar(r.abs(), r)",
    "T.complex(r, r * 2)", "T.real(a)", "T.imag(a)", "T.conj(a)", "T.angle(r)", "a.to(T.complex64)",
    "r.to(T.complex128)", "a.cfloat()", "a.masked_fill(r > 0, 0)", "a.index_select(0, T.tensor([2, 0]))",
    "a.gather(1, T.tensor([[0], [1], [2]]))", "T.trace(a[:, :3])", "a.tril()", "a.narrow(1, 1, 2)",
    "T.mm(a, m)", "a.mul(2).add(b, alpha=2)", "a.sum(dim=1, keepdim=True)",
]


def _op_result(T, expr):
    x = _inputs(T)
    y = eval(expr, {"T": T}, dict(x))  # noqa: S307 - the expressions above
    w = np.random.default_rng(len(expr)).standard_normal(tuple(y.shape))
    if y.is_complex():
        w = w + 1j * np.random.default_rng(len(expr) + 1).standard_normal(tuple(y.shape))
    loss = (y * T.tensor(w)).real.sum() if y.is_complex() else (y * T.tensor(w)).sum()
    loss.backward()
    return {"value": v(y), "grad_fn": type(y.grad_fn).__name__, "grads": {k: v(t.grad) for k, t in x.items()}}


def _op_case(expr):
    def run(T):
        return _op_result(T, expr)
    run.__name__ = "op " + expr.replace(" ", "")
    return run


for _expr in OPS:
    case(_op_case(_expr))


@case
def promotion(T):
    c64, c128 = T.ones(2, dtype=T.complex64), T.ones(2, dtype=T.complex128)
    f32, f64, i64 = T.ones(2), T.ones(2, dtype=T.float64), T.ones(2, dtype=T.int64)
    pairs = {"c64+f64": c64 + f64, "c64+f32": c64 + f32, "c128+f32": c128 + f32, "c64+c128": c64 + c128,
             "i64*1j": i64 * 1j, "f32*1j": f32 * 1j, "f64*1j": f64 * 1j,
             "c64+0d_f64": c64 + T.tensor(1.0, dtype=T.float64), "f64*0d_c64": f64 * T.tensor(1j),
             "c64*2.5": c64 * 2.5, "c64*2": c64 * 2, "bool*1j": T.ones(2, dtype=T.bool) * 1j,
             "c128/i64": c128 / i64, "tensor(1j)": T.tensor(1j), "tensor([1,2j])": T.tensor([1, 2j]),
             "tensor(c128 ndarray)": T.tensor(np.array([1j])), "zeros c64": T.zeros(2, dtype=T.complex64),
             "from_numpy c64": T.from_numpy(np.array([1j], np.complex64)), "result_type": T.result_type(f64, c64)}
    return {k: str(t if not hasattr(t, "dtype") else t.dtype) for k, t in pairs.items()}


@case
def dtype_facts(T):
    out = {}
    for d in (T.complex64, T.complex128, T.cfloat, T.cdouble):
        out[str(d)] = [d.is_complex, d.is_floating_point, T.ones(1, dtype=d).is_complex(),
                       T.ones(1, dtype=d).is_floating_point(), T.ones(1, dtype=d).type(),
                       repr(T.ones(1, dtype=d).real.dtype)]
    out["is_complex(float)"] = T.is_complex(T.ones(1))
    return out


@case
def reprs(T):
    z = T.tensor([1 + 2j, -3.25 + 0.5j])
    items = [z, T.tensor([1 + 2j, 3]), T.tensor([1 + 2j, 3 - 4.5j], dtype=T.complex128), T.tensor(1 + 2j),
             T.tensor([[1e-5 + 1j, 1000 + 2j]]), T.tensor([1.5 + 2j, float("nan") + 1j]),
             T.tensor([complex(0, -0.0), complex(float("inf"), 1)]), T.tensor([[1 + 1j, 2 - 2j], [3j, -4]]),
             T.tensor(z.tolist(), requires_grad=True), T.zeros(0, dtype=T.complex64), T.zeros(2, 0, dtype=T.complex128),
             T.arange(2000.0).reshape(2, 1000) * (1 + 1j), T.tensor([123456.5 + 0.001j, 1j]),
             T.tensor([1 + 2j]).abs(), z * 1e9]
    return [repr(t) for t in items]


@case
def reprs_generated(T):
    """Seeded random complex tensors (0-3 dims, summarised ones, 1e-6..1e9 magnitudes, integral values, nan and
    inf, zero imaginary parts): sha256 of each repr (the text is compared whole by the ``reprs`` case)."""
    import hashlib
    rng = np.random.default_rng(0)
    out = []
    for _ in range(200):
        shape = tuple(int(s) for s in rng.integers(1, 6, size=rng.integers(0, 4)))
        if rng.random() < 0.05:
            shape = (int(rng.integers(300, 1200)),)
        re = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 10)
        im = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 10)
        kind = rng.integers(5)
        if kind == 0:
            re, im = np.round(re), np.round(im)
        elif kind == 1:
            im = np.zeros(shape)
        elif kind == 2 and re.size:
            re.reshape(-1)[0], im.reshape(-1)[-1] = np.nan, np.inf
        elif kind == 3:
            re = np.round(re * 2) / 2
        dt = T.complex64 if rng.random() < 0.6 else T.complex128
        out.append(hashlib.sha256(repr(T.tensor(re + 1j * im, dtype=dt)).encode()).hexdigest()[:16])
    return out


@case
def default_dtype_float64(T):
    """Under set_default_dtype(float64): Python complex numbers make complex128, which prints without a dtype."""
    T.set_default_dtype(T.float64)
    try:
        return [repr(T.tensor([1j])), repr(T.tensor([1.5])), repr(T.ones(2) * 1j), repr(T.fft.fft(T.ones(2))),
                repr(T.tensor([1j], dtype=T.complex64)), repr(T.zeros(0)), repr(T.zeros(0, dtype=T.float32))]
    finally:
        T.set_default_dtype(T.float32)


@case
def randn_streams(T):
    out = {}
    for seed, shape, dt in ((0, (3,), T.complex64), (1, (20,), T.complex64), (2, (2, 3), T.complex128),
                            (3, (17,), T.complex128), (4, (5, 7), T.complex64)):
        T.manual_seed(seed)
        out[f"{seed}/{shape}/{dt}"] = v(T.randn(*shape, dtype=dt))
    T.manual_seed(5)
    out["randn_like"] = v(T.randn_like(T.zeros(4, dtype=T.complex64)))
    return out


@case
def random_stream_bytes(T):
    """randn, rand, normal_, uniform_ of complex dtypes: sha256 of the bytes (torch's CPU streams, exactly)."""
    import hashlib
    out = {}
    for seed, shape, name in ((0, (3,), "complex64"), (1, (40,), "complex64"), (2, (7, 9), "complex128"),
                              (3, (17,), "complex128"), (4, (100,), "complex64"), (5, (8,), "complex64")):
        dt = getattr(T, name)
        T.manual_seed(seed)
        draws = [T.randn(*shape, dtype=dt), T.rand(*shape, dtype=dt),
                 T.zeros(*shape, dtype=dt).normal_(0.5, 2.0), T.zeros(*shape, dtype=dt).uniform_(-1, 3)]
        out[f"{seed}/{shape}/{name}"] = [hashlib.sha256(d.numpy().tobytes()).hexdigest() for d in draws]
    return out


@case
def item_tolist_and_conversions(T):
    z = T.tensor([1 + 2j, -3.5j], dtype=T.complex128)
    return {"item": repr(z[0].item()), "tolist": repr(z.tolist()), "numpy": str(z.numpy().dtype),
            "to_float": v(z.to(T.float64)), "abs": v(abs(z)), "eq": v(z == T.tensor([1 + 2j, 0j], dtype=T.complex128)),
            "allclose": T.allclose(z, z.clone()), "complex()": repr(complex(z[1])), "bool": v(z.bool()),
            "long": v(z.long())}


@case
def backward_with_gradient(T):
    z = T.tensor([1 + 2j, -0.5 + 0.25j], dtype=T.complex128, requires_grad=True)
    y = z * z
    y.backward(T.tensor([1 - 1j, 2j], dtype=T.complex128))
    return v(z.grad)


@case
def real_leaf_through_complex(T):
    x = T.tensor([0.5, -1.25], dtype=T.float64, requires_grad=True)
    y = (x * (1 + 2j)).exp()
    (y * y.conj()).real.sum().backward()
    return v(x.grad)


@case
def autograd_grad_and_retain(T):
    z = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex128, requires_grad=True)
    w = z.sin()
    w.retain_grad()
    loss = (w.abs() ** 2).sum()
    g, = T.autograd.grad(loss, z, retain_graph=True)
    loss.backward()
    return {"grad": v(g), "leaf": v(z.grad), "retained": v(w.grad)}


@case
def hooks_see_torchs_gradient(T):
    z = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex128, requires_grad=True)
    seen = []
    w = z * (2 - 1j)
    w.register_hook(lambda g: seen.append(v(g)))
    z.register_hook(lambda g: g * 2)
    (w.real * 3 + w.imag).sum().backward()
    return {"seen": seen, "grad": v(z.grad)}


@case
def double_backward(T):
    z = T.tensor([1 + 2j, 0.5 - 1j], dtype=T.complex128, requires_grad=True)
    loss = (z.abs() ** 4).sum()
    g, = T.autograd.grad(loss, z, create_graph=True)
    (g.real.sum() + g.imag.sum()).backward()
    return {"g": v(g), "gg": v(z.grad)}


@case
def custom_function(T):
    class Twice(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    z = T.tensor([1 + 2j], dtype=T.complex128, requires_grad=True)
    seen = []
    y = Twice.apply(z * (1 + 1j))
    y.register_hook(lambda g: seen.append(v(g)))
    (y.imag * 5).sum().backward()
    return {"seen": seen, "grad": v(z.grad)}


@case
def parts_are_views(T):
    """Writes through .real, .imag and view_as_real change the complex tensor and bump its version."""
    z = T.tensor([1 + 2j, 3 - 1j])
    out = []
    z.real.mul_(2)
    out.append([v(z), z._version])
    z.imag[0] = 5
    out.append([v(z), z._version])
    T.view_as_real(z)[1, 1] = 7
    out.append([v(z), z._version])
    r = z.real
    z.mul_(1j)
    out.append([v(r), r._version])
    with T.no_grad():
        w = T.tensor([1 + 1j], requires_grad=True)
        w.real.add_(1)
    out.append(repr(w))
    return out


@case
def set_parts(T):
    z = T.tensor([1 + 2j, 3 - 1j])
    z.real = T.tensor([5.0, 6.0])
    z.imag = T.tensor([0.5, -0.5])
    return v(z)


@case
def optimizers_on_complex_parameters(T):
    """torch steps a complex parameter as pairs of reals; its state stays complex."""
    out = {}
    for name, kw in (("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1}),
                     ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})):
        z = T.tensor([1 + 2j, -0.5 + 0.25j, 2 - 1j], dtype=T.complex128, requires_grad=True)
        opt = getattr(T.optim, name)([z], **kw)
        for _ in range(3):
            opt.zero_grad()
            (((z - (1 + 1j)).abs() ** 2).sum() + (z.real * z.imag).sum()).backward()
            opt.step()
        state = opt.state_dict()["state"][0]
        out[name] = {"z": v(z), "state": {k: v(t) for k, t in sorted(state.items()) if k != "step"}}
    return out


@case
def complex_linear_layer_and_compile(T):
    """nn.Linear(dtype=cfloat): torch's initialisation stream for complex parameters, forward, gradients, printing;
    the same loss under torch.compile."""
    import importlib
    importlib.import_module(T.__name__ + ".nn")
    T.manual_seed(0)
    lin = T.nn.Linear(3, 2, dtype=T.cfloat)
    x = T.randn(4, 3, dtype=T.cfloat)
    y = lin(x)
    (y.abs() ** 2).sum().backward()

    def f(z):
        return (z * z.conj()).real.sum() + T.fft.fft(z).abs().sum()
    z = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    out = T.compile(f)(z)
    out.backward()
    return {"weight": repr(lin.weight), "bias": repr(lin.bias), "y": repr(y), "grad": repr(lin.weight.grad),
            "compiled": [float(out), v(z.grad)]}


@case
def functional_transforms(T):
    """torch.func and torch.autograd.functional on complex inputs (printed, as users see them)."""
    import importlib
    importlib.import_module(T.__name__ + ".func")
    importlib.import_module(T.__name__ + ".autograd.functional")
    z = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex128)
    u = T.tensor([1 + 1j, 2], dtype=T.complex128)

    def f(z):
        return (z.abs() ** 2).sum() + (z * z).real.sum()
    calls = {"func.grad": lambda: T.func.grad(f)(z),
             "functional.vjp": lambda: T.autograd.functional.vjp(lambda z: z * z, z, u),
             "func.vjp": lambda: T.func.vjp(lambda z: z * z, z)[1](u),
             "jacobian": lambda: T.autograd.functional.jacobian(lambda z: z.abs(), z),
             "hessian": lambda: T.autograd.functional.hessian(f, z)}
    out = {}
    for k, call in calls.items():
        try:
            out[k] = repr(call())
        except Exception as e:  # noqa: BLE001 - recorded
            out[k] = f"{type(e).__name__}: {e}"
    return out


@case
def inplace_writes(T):
    """Writes mixing complex and real storage: kept, converted, or refused (never a silently dropped imaginary
    part)."""
    out = {}
    for code in ("x[0] = T.tensor(5j)", "x[[0]] = T.tensor([5j])", "x.fill_(1j)", "x.masked_fill_(m, 1j)",
                 "x.add_(T.ones(2, dtype=T.complex64))", "x.mul_(1j)", "x[0] = 5j", "x[[1]] = 5j", "z[0] = 2",
                 "z[[1]] = T.tensor([7.0])", "z.fill_(2.5)", "z.add_(x)", "z.mul_(2j)", "z.copy_(x)",
                 "z.masked_fill_(m, 3j)", "z.clamp_(0, 1)", "z.sub_(z)", "z.zero_()"):
        x, z, m = T.ones(2), T.tensor([1 + 2j, 3 - 1j]), T.tensor([True, False])
        try:
            exec(code, {"T": T, "x": x, "z": z, "m": m})  # noqa: S102 - the statements above
            out[code] = [v(x), v(z)]
        except Exception as e:  # noqa: BLE001 - recorded
            out[code] = f"{type(e).__name__}: {e}"
    return out


@case
def errors(T):
    msgs = {}
    z = T.tensor([1 + 2j], requires_grad=True)
    tries = {"implicit": lambda: (z * z).sum().backward(), "imag_of_real": lambda: T.ones(2).imag,
             "view_as_real_real": lambda: T.view_as_real(T.ones(2)),
             "view_as_complex_shape": lambda: T.view_as_complex(T.ones(3)),
             "view_as_complex_int": lambda: T.view_as_complex(T.ones(3, 2, dtype=T.int64)),
             "complex_ints": lambda: T.complex(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
             "complex_mixed": lambda: T.complex(T.ones(2), T.ones(2, dtype=T.float64)),
             "vdot_2d": lambda: T.vdot(T.ones(2, 2), T.ones(2, 2)), "lt": lambda: z < 1,
             "int_requires_grad": lambda: T.ones(2, dtype=T.int64).requires_grad_()}
    for k, f in tries.items():
        try:
            f()
            msgs[k] = "no error"
        except Exception as e:  # noqa: BLE001 - recorded
            msgs[k] = f"{type(e).__name__}: {e}"
    return msgs


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
