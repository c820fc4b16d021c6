"""torch.compile of views and in-place writes (gradc.facade.functionalize): each listed case against torch
2.13.0's recorded value and gradient (and live torch when installed), errors where torch refuses, inputs
written in place, and random programs of views, writes and ordinary ops (compile_view_programs).

``GRADC_FUZZ_LONG=1`` runs many more random programs.
"""
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest

import gradc.torch as torch
from gradc.errors import TraceError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compile_view_programs as programs  # noqa: E402

try:
    import torch as real_torch
except ImportError:
    real_torch = None

X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
CASES = {  # the body of f(x), x a (2, 3) float64 tensor that requires grad
 "brief": "y = x * 1.0\n    v = y.view(-1)\n    v.mul_(3.0)\n    y[0] += 1\n    return (y * y).sum()",
 "reshape": "y = x * 1.0\n    y.reshape(3, 2).mul_(3.0)\n    return (y * y).sum()",
 "unsqueeze": "y = x * 1.0\n    y.unsqueeze(0).add_(1.0)\n    return (y * y * y).sum()",
 "t": "y = x * 1.0\n    y.t()[0].mul_(2.0)\n    return (y * y).sum()",
 "slice": "y = x * 1.0\n    y[:, 1:].mul_(2.0)\n    return (y * y).sum()",
 "select": "y = x * 1.0\n    y[1][2] *= 3.0\n    y[0].sub_(1.0)\n    return (y * y).sum()",
 "expand_read": "y = x * 1.0\n    e = y[0].expand(2, 3)\n    y[0].mul_(2.0)\n    return (e * x).sum()",
 "chained": "y = x * 1.0\n    y.view(3, 2).t()[0].mul_(5.0)\n    return (y * y).sum()",
 "base_then_view": "y = x * 1.0\n    v = y[0]\n    w = y.t()\n    y.mul_(2.0)\n"
                   "    return (v * v).sum() + (w * x.t()).sum()",
 "view_then_base": "y = x.sin()\n    v = y.view(6)\n    v[::2] += x.view(6)[1::2]\n    return (y * y).sum()",
 "detach_write": "y = x * 1.0\n    y.detach().mul_(2.0)\n    return (y * y).sum()",
 "reshape_copy": "y = x * 1.0\n    y.t().reshape(-1).mul_(2.0)\n    return (y * y).sum()",
 "flip_copy": "y = x * 1.0\n    y.flip(0).mul_(2.0)\n    return (y * y).sum()",
 "permute_transpose": "y = x * 1.0\n    y.permute(1, 0).transpose(0, 1)[1].add_(x[0])\n    return (y * y).sum()",
 "fill_zero": "y = x * 1.0\n    y[0].fill_(2.0)\n    y[:, 2].zero_()\n    return (y * x).sum()",
 "contiguous_copy": "y = x * 1.0\n    y.t().contiguous().mul_(2.0)\n    y.contiguous().add_(1.0)\n"
                    "    return (y * y).sum()",
 "elementwise_keeps_layout": "y = x.t() * 1.0\n    y.reshape(-1).mul_(2.0)\n"
                             "    return (y * y).sum() + (y.contiguous().view(-1)[:2] * x[0, :2]).sum()",
 "new_axis_of_an_element": "y = x * 1.0\n    y.view(-1)[1][..., None].mul_(3.0)\n    return (y * y).sum()",
 "squeeze_chain": "y = x.unsqueeze(1) * 1.0\n    y.squeeze(1)[0].clamp_(1.5, 2.5)\n    return (y * y).sum()",
}
EXPECTED = {  # torch 2.13.0 (float64): value, gradient of x; recorded so the test runs without torch
    'brief': (858.0, [[24.0, 42.0, 60.0], [72.0, 90.0, 108.0]]),
    'reshape': (819.0, [[18.0, 36.0, 54.0], [72.0, 90.0, 108.0]]),
    'unsqueeze': (783.0, [[12.0, 27.0, 48.0], [75.0, 108.0, 147.0]]),
    't': (142.0, [[8.0, 4.0, 6.0], [32.0, 10.0, 12.0]]),
    'slice': (313.0, [[2.0, 16.0, 24.0], [8.0, 40.0, 48.0]]),
    'select': (370.0, [[0.0, 2.0, 4.0], [8.0, 10.0, 108.0]]),
    'expand_read': (92.0, [[12.0, 18.0, 24.0], [2.0, 4.0, 6.0]]),
    'chained': (931.0, [[50.0, 4.0, 150.0], [8.0, 250.0, 12.0]]),
    'base_then_view': (238.0, [[12.0, 24.0, 36.0], [16.0, 20.0, 24.0]]),
    'view_then_base': (52.1129215952, [[3.0705066503, 4.9261394743, -8.199355471],
                                       [9.2715982627, 2.8599251147, 9.5455785327]]),
    'detach_write': (364.0, [[4.0, 8.0, 12.0], [16.0, 20.0, 24.0]]),
    'reshape_copy': (91.0, [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]),
    'flip_copy': (91.0, [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]),
    'permute_transpose': (169.0, [[12.0, 18.0, 24.0], [10.0, 14.0, 18.0]]),
    'fill_zero': (47.0, [[2.0, 2.0, 0.0], [8.0, 10.0, 0.0]]),
    'contiguous_copy': (139.0, [[4.0, 6.0, 8.0], [10.0, 12.0, 14.0]]),
    'elementwise_keeps_layout': (100.0, [[4.0, 8.0, 6.0], [10.0, 10.0, 12.0]]),
    'new_axis_of_an_element': (123.0, [[2.0, 36.0, 6.0], [8.0, 10.0, 12.0]]),
    'squeeze_chain': (89.5, [[0.0, 4.0, 0.0], [8.0, 10.0, 12.0]]),
}


def run(module, body, compiled=False):
    env = {"torch": module}
    exec(f"def f(x):\n    {body}\n", env)  # noqa: S102 - the case's source
    f = module.compile(env["f"], fullgraph=True) if compiled else env["f"]
    x = module.tensor(X, dtype=module.float64, requires_grad=True)
    value = f(x)
    value.backward()
    return float(value.detach()), x.grad.detach().numpy().copy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_view_and_in_place_case_matches_torch(name):
    value, grad = run(torch, CASES[name], compiled=True)
    want_value, want_grad = EXPECTED[name]
    np.testing.assert_allclose(value, want_value, rtol=1e-9)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-9, atol=1e-12)
    if real_torch is not None:
        live_value, live_grad = run(real_torch, CASES[name])
        np.testing.assert_allclose(value, live_value, rtol=1e-9)
        np.testing.assert_allclose(grad, live_grad, rtol=1e-9, atol=1e-12)


def test_compiled_code_has_no_fallback_and_reads_like_numpy():
    env = {"torch": torch}
    exec(f"def f(x):\n    {CASES['brief']}\n", env)  # noqa: S102
    f = torch.compile(env["f"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(torch.tensor([1.0, 2.0])).item() == 52.0  # y = [3, 6] -> [4, 6]
    assert "def f_grad" not in f.source or "def f" in f.source


def test_a_write_into_an_expanded_tensor_is_refused_as_torch_does():
    def f(x):
        y = x * 1.0
        y[0].expand(2, 3).mul_(2.0)
        return y.sum()

    x = torch.tensor(X)
    with pytest.raises(TraceError, match=r"more than one element of the written-to tensor.*clone\(\)"):
        torch.compile(f, fullgraph=True)(x)
    with pytest.warns(UserWarning, match="runs eagerly"), pytest.raises((RuntimeError, ValueError)):
        torch.compile(f)(x)  # eager's own error, as eager would raise it


def test_view_of_a_non_contiguous_tensor_is_refused_as_eager_refuses():
    def f(x):
        return (x * 1.0).t().view(-1).sum()

    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.compile(f, fullgraph=True)(torch.tensor(X))
    with pytest.warns(UserWarning, match="runs eagerly"), pytest.raises(RuntimeError, match="view size"):
        torch.compile(f)(torch.tensor(X))


def test_input_written_in_place_through_a_view_is_written_back():
    def f(x, z):
        z.view(-1)[1:].add_(x.view(-1)[:-1])
        z.t()[0] *= 2.0
        return (z * x).sum()

    results = []
    for g in (f, torch.compile(f, fullgraph=True)):
        x = torch.tensor(X, dtype=torch.float64)
        z = torch.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], dtype=torch.float64)
        values = [g(x, z).item() for _ in range(2)]  # the second call reads the first call's writes
        results.append((values, z.numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_an_input_written_with_a_value_that_requires_grad_takes_its_history():
    """``z.add_(x)``, x requiring grad: z gets an autograd history, as eager's in-place op gives it."""
    def f(x, z):
        z.view(-1)[1:].add_(x[:-1] * x[1:])
        return (z * z).sum()

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    z = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    value = torch.compile(f, fullgraph=True)(x, z)
    (value + (z * x).sum()).backward()  # a later eager use of z reaches x through z's new history
    # torch 2.13.0: 65.25, z = [0.5, 1, 8] requiring grad, x.grad = [8.5, 62, 46]
    assert value.item() == 65.25 and z.tolist() == [0.5, 1.0, 8.0] and z.requires_grad
    assert x.grad.tolist() == [8.5, 62.0, 46.0]


def test_a_write_into_an_input_that_shares_memory_with_another_runs_eagerly():
    def f(a, b):
        a.mul_(2.0)
        return b.sum()

    x = torch.ones(2, 3)
    with pytest.raises(TraceError, match=r"shares memory with another input.*x\[0\]\.clone"):
        torch.compile(f, fullgraph=True)(x, x[0])
    g = torch.compile(f)
    with pytest.warns(UserWarning, match="runs eagerly"):
        assert g(x, x[0]).item() == 6.0 and x.tolist() == [[2.0] * 3] * 2
    assert g(torch.ones(2, 3), torch.ones(3)).item() == 3.0  # separate tensors: another signature, compiled
    read = torch.compile(lambda a, b: (a * b).sum(), fullgraph=True)
    assert read(x, x[0]).item() == 24.0  # no write: sharing is harmless


def test_outputs_share_the_inputs_memory_as_eager_outputs_do():
    """A returned input is that tensor; a returned view of an input views its memory, so a later write
    through it reaches the input, and its gradient still flows."""
    def scale(x):
        x.mul_(2.0)
        return x

    def column(x):
        return x.t()[0], (x * 2.0).sum()

    x = torch.ones(2, 3)
    r = torch.compile(scale, fullgraph=True)(x)
    assert r is x and x.tolist() == [[2.0] * 3] * 2
    results = []
    for f in (column, torch.compile(column, fullgraph=True)):
        x = torch.ones(2, 3)
        r, total = f(x)
        r.mul_(5.0)
        x_grad = torch.ones(2, 3, requires_grad=True)
        r_grad, total_grad = f(x_grad)
        (r_grad.sum() + total_grad).backward()
        results.append((x.tolist(), total.item(), x_grad.grad.tolist()))
    assert results[0] == results[1] == ([[5.0, 1.0, 1.0]] * 2, 12.0, [[3.0, 2.0, 2.0]] * 2)


def test_the_input_layout_decides_whether_a_reshape_is_a_view():
    def f(z):
        z.reshape(-1).mul_(2.0)  # a view of a contiguous z (written back), a copy of a transposed one
        return z.sum()

    g = torch.compile(f, fullgraph=True)
    for make in (lambda: torch.ones(2, 3), lambda: torch.ones(3, 2).t(), lambda: torch.ones(2, 3)):
        z, twin = make(), make()
        assert g(z).item() == f(twin).item() and z.tolist() == twin.tolist()
    assert len(g._cache) == 2


def test_out_argument_into_a_view():
    def f(a, b):
        y = a * 1.0
        torch.mul(a[0], b[1], out=y[1])
        return (y * y).sum()

    a, b = torch.tensor(X), torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]])
    assert torch.compile(f, fullgraph=True)(a, b).item() == f(a, b).item() == 1.0 + 4 + 9 + 0.25 + 1 + 36


def test_out_argument_of_another_shape_is_refused_clearly():
    def f(a):
        y = a * 1.0
        torch.mul(a.view(-1), 2.0, out=y[0])  # torch resizes out: the compiled code cannot
        return y.sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own resize warning
        with pytest.raises(TraceError, match="out= tensor of another shape"):
            torch.compile(f, fullgraph=True)(torch.ones(2, 3))


def test_in_place_on_a_leaf_that_requires_grad_is_refused_as_eager_refuses():
    def f(x):
        x.add_(1.0)
        return x.sum()

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TraceError, match="leaf Variable that requires grad"):
        torch.compile(f, fullgraph=True)(x)
    with pytest.warns(UserWarning, match="runs eagerly"), pytest.raises(RuntimeError, match="leaf Variable"):
        torch.compile(f)(x)
    assert x.tolist() == [1.0, 2.0]
    with torch.no_grad():  # allowed under no_grad, as in torch: the input is written back
        assert torch.compile(f, fullgraph=True)(x).item() == 5.0
    assert x.tolist() == [2.0, 3.0]


def _fuzz(count, seed):
    """Random programs run compiled and in torch (else eagerly): ``(checked, refused, mismatches)``."""
    checked, refused, bad = 0, 0, []
    modules = (real_torch,) if real_torch is not None else ()
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        source, spec = programs.program(rng, modules=modules)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = programs.outcome(torch, source, spec, compiled=True)
            want = programs.outcome(real_torch or torch, source, spec)
        if got == "refused":
            refused += 1
        elif isinstance(want, str):
            continue  # torch refuses the whole program (a value needed by backward was overwritten)
        else:
            checked += 1
            if not programs.same(got, want):
                bad.append(source)
    return checked, refused, bad


def test_random_view_and_in_place_programs_match_torch():
    checked, refused, bad = _fuzz(60, seed=2026)
    assert not bad, "\n".join(bad[:3])
    assert refused <= 3 and checked >= 50


@pytest.mark.skipif(os.environ.get("GRADC_FUZZ_LONG") != "1", reason="the long run: GRADC_FUZZ_LONG=1")
def test_random_view_and_in_place_programs_long():
    count = int(os.environ.get("GRADC_FUZZ_COUNT", "3000"))
    checked, refused, bad = _fuzz(count, seed=7)
    print(f"\n{count} programs: {checked} compared, {refused} refused, {len(bad)} mismatches")
    assert not bad, "\n".join(bad[:3])
