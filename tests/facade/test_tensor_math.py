"""``torch.einsum``, ``repeat_interleave``, the added top-level functions and methods, ``torch.fft``'s shifts, the
missing-name error and ``torch.__version__``: against torch 2.13.0 and central differences."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade.missing import FacadeMissingName
from tests.facade.reference_check import check, real_torch

RNG = np.random.default_rng(5)


def _x(*shape):
    return RNG.normal(size=shape)


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ijk,mik->mij", [(3, 4, 4), (5, 3, 4)]), ("ii->", [(3, 3)]),
          ("ii->i", [(3, 3)]), ("i,i", [(4,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
          ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("i j , j k -> k i", [(2, 3), (3, 2)]), ("ij->ji", [(2, 3)]),
          ("i,j,k->ijk", [(2,), (3,), (2,)]), ("ij", [(2, 3)])]


@pytest.mark.parametrize("equation,shapes", EINSUM)
def test_einsum(equation, shapes):
    xs = [_x(*s) for s in shapes]
    check(lambda T, *ts: T.einsum(equation, *ts), *xs)
    check(lambda T, *ts: T.einsum(equation, list(ts)), *xs)


@pytest.mark.parametrize("seed", range(8))
def test_einsum_random_contractions(seed):
    """Seeded random two-operand equations over a small label set (contractions, outer products, sums)."""
    rng = np.random.default_rng(seed)
    labels = "abcd"
    sizes = {c: int(rng.integers(1, 4)) for c in labels}
    a = "".join(rng.permutation(list(labels))[: int(rng.integers(1, 4))])
    b = "".join(rng.permutation(list(labels))[: int(rng.integers(1, 4))])
    free = sorted(set(a) ^ set(b)) + [c for c in sorted(set(a) & set(b)) if rng.random() < 0.3]
    eq = f"{a},{b}->{''.join(free)}"
    check(lambda T, x, y: T.einsum(eq, x, y), rng.normal(size=[sizes[c] for c in a]),
          rng.normal(size=[sizes[c] for c in b]))


REPEAT = [
    (lambda T, x: T.repeat_interleave(x, 2), (2, 3)),
    (lambda T, x: T.repeat_interleave(x, 3, dim=1), (2, 3)),
    (lambda T, x: T.repeat_interleave(x, T.tensor([1, 0, 2]), dim=1), (2, 3)),
    (lambda T, x: x.repeat_interleave(T.tensor([2, 1]), dim=0), (2, 3)),
    (lambda T, x: x.repeat_interleave(2, dim=-1, output_size=6), (2, 3)),
    (lambda T, x: T.repeat_interleave(x, T.tensor([3])), (4,)),
]


@pytest.mark.parametrize("case", range(len(REPEAT)))
def test_repeat_interleave(case):
    f, shape = REPEAT[case]
    check(f, _x(*shape))


def test_repeat_interleave_counts_only_and_errors():
    out = torch.repeat_interleave(torch.arange(3), torch.arange(3, 0, -1))
    assert out.tolist() == [0, 0, 0, 1, 1, 2] and out.dtype == torch.int64
    assert torch.repeat_interleave(torch.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    with pytest.raises(RuntimeError, match="repeats must have the same size"):
        torch.repeat_interleave(torch.ones(3), torch.tensor([1, 2]), dim=0)
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(torch.ones(2), torch.tensor([1, -1]), dim=0)


FUNCTIONS = {
    "cumsum": (lambda T, x: T.cumsum(x, 1), [_x(2, 3)]),
    "cumprod": (lambda T, x: x.cumprod(dim=0), [_x(3, 2)]),
    "tril": (lambda T, x: T.tril(x, -1), [_x(3, 3)]),
    "triu": (lambda T, x: x.triu(1), [_x(3, 4)]),
    "outer": (lambda T, a, b: T.outer(a, b), [_x(3), _x(2)]),
    "tensordot": (lambda T, a, b: T.tensordot(a, b, dims=([1], [0])), [_x(2, 3), _x(3, 4)]),
    "kron": (lambda T, a, b: T.kron(a, b), [_x(2, 2), _x(2, 3)]),
    "trace": (lambda T, a: T.trace(a), [_x(3, 3)]),
    "diag": (lambda T, a: T.diag(a, 1), [_x(3)]),
    "diag_of_matrix": (lambda T, a: a.diag(), [_x(3, 3)]),
    "asin": (lambda T, a: T.asin(a / 3), [_x(2, 2)]),
    "acos": (lambda T, a: a.arccos(), [RNG.uniform(-0.9, 0.9, size=(2, 2))]),
    "atanh": (lambda T, a: T.atanh(a), [RNG.uniform(-0.9, 0.9, size=(2, 2))]),
    "acosh": (lambda T, a: T.acosh(a), [RNG.uniform(1.1, 3.0, size=(2, 2))]),
    "asinh": (lambda T, a: a.asinh(), [_x(2, 2)]),
    "log2_log10": (lambda T, a: (T.log2(a), a.log10()), [RNG.uniform(0.5, 3.0, size=(3,))]),
    "rsqrt": (lambda T, a: a.rsqrt(), [RNG.uniform(0.5, 3.0, size=(3,))]),
    "atan2": (lambda T, a, b: T.atan2(a, b), [_x(3), _x(3)]),
    "hypot": (lambda T, a, b: a.hypot(b), [_x(3), _x(3)]),
    "logaddexp": (lambda T, a, b: T.logaddexp(a, b), [_x(3), _x(3)]),
    "xlogy": (lambda T, a, b: T.xlogy(a, b), [_x(3), RNG.uniform(0.5, 2.0, size=3)]),
    "lerp": (lambda T, a, b, w: T.lerp(a, b, w), [_x(3), _x(3), _x(3)]),
    "addmm": (lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0), [_x(2, 2), _x(2, 3), _x(3, 2)]),
    "addcmul": (lambda T, c, a, b: T.addcmul(c, a, b, value=0.5), [_x(3), _x(3), _x(3)]),
    "addcdiv": (lambda T, c, a, b: c.addcdiv(a, b, value=2), [_x(3), _x(3), RNG.uniform(1, 2, size=3)]),
    "amax": (lambda T, a: T.amax(a, 1), [_x(3, 4)]),
    "amin": (lambda T, a: a.amin(dim=(0, 1)), [_x(3, 4)]),
    "det_method": (lambda T, a: (a.det(), a.slogdet()[1], T.matrix_power(a, 2)), [_x(3, 3)]),
    "cross_method": (lambda T, a, b: a.cross(b, dim=1), [_x(2, 3), _x(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_and_methods(name):
    f, xs = FUNCTIONS[name]
    check(f, *xs)


def test_integer_results_keep_torchs_dtypes():
    assert torch.cumsum(torch.tensor([1, 2, 3]), 0).tolist() == [1, 3, 6]
    assert torch.cumsum(torch.tensor([1, 2, 3]), 0).dtype == torch.int64
    assert torch.tril(torch.ones(2, 2, dtype=torch.int64)).dtype == torch.int64
    assert torch.isnan(torch.tensor([1.0, float("nan")])).tolist() == [False, True]


# ---------------------------------------------------------------- torch.fft
@pytest.mark.parametrize("shape,dim", [((5,), None), ((4,), None), ((3, 4), None), ((3, 4), 1), ((3, 5), (0,))])
def test_fft_shifts(shape, dim):
    check(lambda T, x: T.fft.fftshift(x, dim), _x(*shape))
    check(lambda T, x: T.fft.ifftshift(x, dim), _x(*shape))
    x = _x(*shape)
    np.testing.assert_array_equal(torch.fft.ifftshift(torch.fft.fftshift(torch.tensor(x), dim), dim).numpy(), x)


@pytest.mark.parametrize("n,d", [(1, 1.0), (4, 1.0), (5, 0.1), (8, 2.0)])
def test_fft_frequencies(n, d):
    np.testing.assert_allclose(torch.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d).astype(np.float32))
    np.testing.assert_allclose(torch.fft.rfftfreq(n, d, dtype=torch.float64).numpy(), np.fft.rfftfreq(n, d))
    if real_torch is not None:
        np.testing.assert_array_equal(torch.fft.fftfreq(n, d).numpy(), real_torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_array_equal(torch.fft.rfftfreq(n, d).numpy(), real_torch.fft.rfftfreq(n, d).numpy())


# ---------------------------------------------------------------- missing names and version
def test_missing_names_say_the_facade_lacks_them_and_suggest():
    with pytest.raises(FacadeMissingName, match=r"lacks torch\.einsumm; close names it has: einsum"):
        _ = torch.einsumm
    with pytest.raises(AttributeError, match=r"lacks torch\.linalg\.choleski.*cholesky"):
        _ = torch.linalg.choleski
    with pytest.raises(AttributeError, match=r"lacks torch\.Tensor\.repeat_interleav.*repeat_interleave"):
        torch.ones(2).repeat_interleav(2)
    with pytest.raises(AttributeError, match=r"lacks torch\.nn\.functional\.relu7.*relu"):
        _ = torch.nn.functional.relu7
    with pytest.raises(AttributeError, match=r"lacks torch\.special\.zetaa"):
        _ = torch.special.zetaa
    assert not hasattr(torch, "no_such_name") and not hasattr(torch.ones(1), "no_such_method")
    assert getattr(torch.linalg, "no_such", 7) == 7
    with pytest.raises(ImportError):
        exec("from gradc.torch import no_such_name", {})


def test_module_helpers_are_not_suggested():
    with pytest.raises(AttributeError) as info:
        _ = torch.linalg.applyy
    assert "apply" not in str(info.value).split("close names it has:")[-1].split(", ")


def test_version_is_the_torch_release_followed():
    import gradc
    assert torch.__version__ == "2.13.0"
    assert gradc.__version__ != torch.__version__


def test_new_namespaces_import_under_torchs_paths():
    root = Path(__file__).resolve().parents[2]
    code = ("import sys, gradc.torch\nsys.modules['torch'] = gradc.torch\n"
            "import torch.linalg, torch.fft, torch.special\nfrom torch.linalg import solve\n"
            "from torch.special import erf\nimport torch\n"
            "assert torch.linalg.solve is solve and torch.special.erf is erf and torch.fft.fftshift\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": ""})
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("make", [lambda: torch.tensor([1 + 2j]), lambda: torch.tensor(np.array([1 + 2j])),
                                  lambda: torch.from_numpy(np.array([1j], np.complex64)),
                                  lambda: torch.as_tensor(np.ones(2, complex))])
def test_complex_values_are_kept_not_truncated(make):
    """Complex input makes a complex tensor (it used to lose its imaginary part; tests/facade/test_complex*.py)."""
    t = make()
    assert t.is_complex() and np.iscomplexobj(t.numpy())


NODE_NAMES = {  # the grad_fn torch 2.13.0 gives each (recorded from torch)
    "LinalgSolveExBackward0": lambda T, a, c: T.linalg.solve(c, a[0]),
    "LinalgInvExBackward0": lambda T, a, c: T.linalg.inv(c),
    "LinalgVectorNormBackward0": lambda T, a, c: T.linalg.matrix_norm(c),
    "LinalgCrossBackward0": lambda T, a, c: T.linalg.cross(c, c),
    "ErfBackward0": lambda T, a, c: T.special.erf(a),
    "LgammaBackward0": lambda T, a, c: T.special.gammaln(a),
    "SigmoidBackward0": lambda T, a, c: T.special.expit(a),
    "SpecialI0EBackward0": lambda T, a, c: T.special.i0e(a),
    "LogsumexpBackward0": lambda T, a, c: T.logsumexp(a, 1),
    "GatherBackward0": lambda T, a, c: T.gather(a, 1, T.tensor([[0], [1]])),
    "ViewBackward0": lambda T, a, c: T.einsum("ij,jk->ik", a, c),
    "LinalgDetBackward0": lambda T, a, c: T.linalg.det(c),
    "LinalgEighBackward0": lambda T, a, c: T.linalg.eigh(c).eigenvalues,
    "LinalgSvdBackward0": lambda T, a, c: T.linalg.svd(c).U,
    "SortBackward0": lambda T, a, c: T.sort(a).values,
    "TopkBackward0": lambda T, a, c: T.topk(a, 2).values,
    "IndexSelectBackward0": lambda T, a, c: T.index_select(a, 1, T.tensor([0])),
    "MaskedFillBackward0": lambda T, a, c: T.masked_fill(a, T.tensor([[True, False, False]] * 2), 1.0),
    "RollBackward0": lambda T, a, c: T.fft.fftshift(a),
    "CumsumBackward0": lambda T, a, c: T.cumsum(a, 1),
    "TrilBackward0": lambda T, a, c: T.tril(c),
    "MulBackward0": lambda T, a, c: T.outer(a[0], a[1]),
    "LinalgPinvBackward0": lambda T, a, c: T.linalg.pinv(c),
    "LinalgMatrixExpBackward0": lambda T, a, c: T.linalg.matrix_exp(c),
}


@pytest.mark.parametrize("name", sorted(NODE_NAMES))
def test_grad_fn_names_are_torchs(name):
    a = torch.tensor(_x(2, 3), requires_grad=True)
    c = torch.tensor(_x(3, 3), requires_grad=True)
    assert type(NODE_NAMES[name](torch, a, c).grad_fn).__name__ == name
    if real_torch is not None:
        ra, rc = real_torch.tensor(a.detach().numpy(), requires_grad=True), real_torch.tensor(c.detach().numpy(),
                                                                                               requires_grad=True)
        assert type(NODE_NAMES[name](real_torch, ra, rc).grad_fn).__name__ == name


TRACED_CASES = {
    "det": (lambda T, x: T.linalg.det(x), _x(3, 3)),
    "slogdet": (lambda T, x: T.linalg.slogdet(x)[1], _x(3, 3) + 3 * np.eye(3)),
    "solve": (lambda T, x: T.linalg.solve(x, T.ones(3, dtype=x.dtype)).sum(), _x(3, 3) + 3 * np.eye(3)),
    "norm": (lambda T, x: T.linalg.norm(x), _x(2, 3)),
    "einsum": (lambda T, x: T.einsum("ij,kj->", x, x), _x(2, 3)),
    "erf": (lambda T, x: T.special.erf(x).sum(), _x(4)),
    "gammaln": (lambda T, x: T.special.gammaln(x).sum(), np.abs(_x(4)) + 0.5),
    "logsumexp": (lambda T, x: T.logsumexp(x, 1).sum(), _x(2, 3)),
    "repeat_interleave": (lambda T, x: (T.repeat_interleave(x, 2, dim=0) ** 2).sum(), _x(2, 3)),
    "gather": (lambda T, x: (T.gather(x, 1, T.tensor([[2], [0]])) ** 3).sum(), _x(2, 3)),
    "cross": (lambda T, x: T.linalg.cross(x[0], x[1]).sum(), _x(2, 3)),
}


@pytest.mark.parametrize("name", sorted(TRACED_CASES))
def test_gradc_grad_of_torch_style_code(name):
    """The added functions also take gradc's traced values: gradc.grad of torch-style code on NumPy arrays equals
    the facade's eager gradient."""
    import gradc
    f, x = TRACED_CASES[name]
    t = torch.tensor(x, requires_grad=True)
    f(torch, t).backward()
    np.testing.assert_allclose(gradc.grad(lambda v: f(torch, v))(x), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_signatures_follow_torch():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert torch.cumsum(x, dim=0, dtype=torch.float64).dtype == torch.float64
    assert x.cumprod(1, dtype=torch.float64).dtype == torch.float64
    assert torch.cumsum(torch.tensor([1, 2]), 0, dtype=torch.float32).tolist() == [1.0, 3.0]
    with pytest.raises(TypeError, match="dim"):
        torch.logsumexp(x)


def test_torch_compile_of_the_added_functions_matches_eager():
    def f(a, b):
        return (torch.logsumexp(torch.einsum("ij,jk->ik", a, b), 1).sum() + torch.linalg.det(a @ a.T + torch.eye(2))
                + torch.special.erf(b).sum() + torch.gather(b, 1, torch.tensor([[0], [1], [1]])).sum()
                + torch.repeat_interleave(a, 2, dim=0).pow(2).sum())
    a = torch.tensor(_x(2, 3), requires_grad=True)
    b = torch.tensor(_x(3, 2), requires_grad=True)
    eager = f(a, b)
    eager.backward()
    grads = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    compiled = torch.compile(f)(a, b)
    compiled.backward()
    np.testing.assert_allclose(compiled.item(), eager.item(), rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), grads[0].numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), grads[1].numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("convert", [lambda t: t.to(torch.float16), lambda t: t.half()])
def test_float16_arithmetic_is_refused_clearly(convert):
    """The facade does not compute in float16: a clear TypeError naming the dtypes it computes in, not a KeyError."""
    with pytest.raises(TypeError, match=r"float16.*float32, .*float64"):
        convert(torch.ones(3))


def test_float32_plus_float16_is_float32_as_in_torch():
    """torch promotes float32 + float16 to float32 (the IR computes float16 by NumPy's rules since issue 26)."""
    total = torch.ones(3) + torch.zeros(3, dtype=torch.float16)
    assert total.dtype == torch.float32 and total.tolist() == [1.0, 1.0, 1.0]
