"""torch.compile in the facade: compiled code against eager and finite differences, recompiling,
the eager fallback, the option handling, and torch 2.13.0's recorded output (spec/gen_compile.py).
"""
import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

import gradc.torch as torch
from gradc.errors import ArgumentError, TraceError
from gradc.facade.compile import CompiledFunction, OptimizedModule
from gradc.torch import nn

SPEC = pathlib.Path(__file__).resolve().parent / "spec"


def _load(path):
    spec = importlib.util.spec_from_file_location(f"gradc_spec_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(SPEC))
runner = _load(SPEC / "spec_runner.py")
CASES = _load(SPEC / "gen_compile.py").CASES
EXPECTED = runner.read_expected(SPEC / "compile.expected.txt")


@pytest.mark.parametrize("name", [fn.__name__ for fn in CASES])
def test_case_matches_torch(name):
    fn = next(f for f in CASES if f.__name__ == name)
    expected = EXPECTED[name]
    assert not (isinstance(expected, str) and expected.startswith("CASE RAISED")), expected
    diffs = runner.compare(expected, runner.run_case(fn, torch), 1e-5)
    assert not diffs, "\n".join(diffs[:5])


def mlp(dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 5)).to(dtype)


def cnn(dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(3, 4, 3),
                         nn.Tanh(), nn.Flatten(), nn.Linear(4, 5)).to(dtype)


def batch(shape, dtype=torch.float32, n=4, seed=1):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((n,) + shape), dtype=dtype)
    return x, torch.tensor(rng.integers(0, 5, n))


def grads(model):
    return [p.grad.detach().numpy().copy() for p in model.parameters()]


def train(model, forward, steps, x, y):
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        loss = loss_fn(forward(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, grads(model)


@pytest.mark.parametrize("make,shape", [(mlp, (3, 4)), (cnn, (1, 6, 6))])
@pytest.mark.parametrize("how", ["module", "loss"])
def test_training_matches_eager(make, shape, how):
    """Compiled module or compiled loss: the same losses and gradients as eager, step after step."""
    x, y = batch(shape)
    eager_model, model = make(), make()
    eager = train(eager_model, eager_model, 4, x, y)
    if how == "module":
        got = train(model, torch.compile(model), 4, x, y)
    else:
        loss_fn = nn.CrossEntropyLoss()
        step = torch.compile(lambda x, y: loss_fn(model(x), y))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(4):
            loss = step(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        got = losses, grads(model)
    np.testing.assert_allclose(got[0], eager[0], rtol=1e-5)
    for a, b in zip(got[1], eager[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_gradients_against_finite_differences():
    model = cnn(torch.float64)
    x, y = batch((1, 6, 6), torch.float64)
    loss_fn = nn.CrossEntropyLoss()
    step = torch.compile(lambda x, y: loss_fn(model(x), y))
    step(x, y).backward()
    rng = np.random.default_rng(3)
    for p in model.parameters():
        direction = rng.standard_normal(tuple(p.shape))
        base = p.detach().numpy().copy()
        eps = 1e-6
        with torch.no_grad():  # the compiled code reads the parameters' current storage on each call
            p.data = torch.tensor(base + eps * direction)
            up = step(x, y).item()
            p.data = torch.tensor(base - eps * direction)
            down = step(x, y).item()
            p.data = torch.tensor(base)
        numeric = (up - down) / (2 * eps)
        assert np.isclose(float(np.sum(p.grad.numpy() * direction)), numeric, rtol=1e-6, atol=1e-9)


def test_input_gradient_and_non_scalar_output():
    model = mlp(torch.float64)
    compiled = torch.compile(model)
    x = torch.randn(3, 3, 4, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(3, 5, dtype=torch.float64)
    (compiled(x) * weights).sum().backward()
    assert compiled._compiled_forward._last.halves is not None  # backward did not recompute the forward
    got = x.grad.numpy().copy()
    x.grad = None
    (model(x) * weights).sum().backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)


def test_recompiles_per_signature_and_reads_parameters_each_call():
    model = mlp()
    compiled = torch.compile(model)
    fn = compiled._compiled_forward
    for n in (2, 3, 2):
        x = torch.randn(n, 3, 4)
        np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert len(fn._cache) == 1 * 2  # one entry per batch size
    with torch.no_grad():
        model[1].weight.mul_(2.0)  # an in-place update is seen without recompiling
    x = torch.randn(2, 3, 4)
    np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    model.eval()
    compiled(x)  # train/eval mode is part of the signature
    assert len(fn._cache) == 3


def test_fallback_warns_once_and_runs_eagerly():
    def f(x):
        return x * 2 if x.sum().item() > 0 else x - 1

    g = torch.compile(f)
    with pytest.warns(UserWarning, match=r"torch.compile: f runs eagerly \(it cannot be traced: .*converted to a Py"):
        assert g(torch.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g(torch.tensor([-1.0, -2.0, 0.5])).tolist() == [-2.0, -3.0, -0.5]


def test_fullgraph_turns_the_fallback_into_an_error():
    g = torch.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(TraceError, match="Python number"):
        g(torch.tensor([1.0, 2.0]))


def test_unreachable_tensor_requiring_grad_falls_back():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    helper = {"w": w}

    def f(x):
        return (x * helper["w"]).sum()

    g = torch.compile(f)
    with pytest.warns(UserWarning, match="requires grad but is neither"):
        g(torch.tensor([3.0, 4.0])).backward()
    assert w.grad.tolist() == [3.0, 4.0]


def test_dropout_in_training_draws_torchs_stream_as_eager_does():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3), nn.Dropout(0.2))
    twin = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3), nn.Dropout(0.2))
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model)
    x = torch.randn(5, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not a fallback
        for seed in (5, 6):
            torch.manual_seed(seed)
            got = compiled(x)
            got.pow(2).sum().backward()
            after = torch.rand(1)  # the stream continues where eager's would
            torch.manual_seed(seed)
            want = twin(x)
            want.pow(2).sum().backward()
            assert torch.equal(got, want) and torch.equal(after, torch.rand(1))
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    assert "dropout_noise0" in compiled.source
    model.eval()
    assert torch.equal(compiled(x), twin.eval()(x))  # eval mode: another signature, no noise


def test_random_draws_inside_fall_back_and_keep_the_stream():
    f = torch.compile(lambda x: x + torch.randn(2))
    torch.manual_seed(1)
    with pytest.warns(UserWarning, match="draws random numbers"):
        got = [f(torch.zeros(2)), f(torch.zeros(2))]
    torch.manual_seed(1)
    assert torch.equal(got[0], torch.randn(2)) and torch.equal(got[1], torch.randn(2))


def test_batchnorm_training_compiles_its_running_statistics_updates():
    """The running statistics and the batch counter are written in place: compiled, written back, as eager."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    twin = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not a fallback
        for _ in range(3):
            x = torch.randn(5, 4)
            got, want = compiled(x), twin(x)
            got.pow(2).sum().backward()
            want.pow(2).sum().backward()
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert model[1].num_batches_tracked.item() == twin[1].num_batches_tracked.item() == 3
    for (name, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=name)
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    model.eval()
    twin.eval()
    x = torch.randn(5, 4)
    np.testing.assert_allclose(compiled(x).detach().numpy(), twin(x).detach().numpy(), rtol=1e-6)


def test_in_place_writes_to_inputs_are_written_back():
    f = torch.compile(lambda x, total: (total.add_(x.sum()), x * 2)[1])
    total = torch.zeros(())
    for _ in range(3):
        f(torch.ones(4), total)
    assert total.item() == 12.0


def test_options():
    f = lambda x: x + 1  # noqa: E731
    assert torch.compile(f, disable=True) is f
    assert isinstance(torch.compile(f, backend="eager", dynamic=True, mode="reduce-overhead"), CompiledFunction)
    with pytest.raises(ArgumentError, match="backend"):
        torch.compile(f, backend=lambda gm, inputs: gm)
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        torch.compile(f, mode="fast")
    deco = torch.compile(mode="max-autotune")
    assert isinstance(deco(f), CompiledFunction)
    assert isinstance(torch.compile(nn.Linear(2, 2)), OptimizedModule)


def test_source_shows_the_training_step():
    model = mlp()
    loss_fn = nn.CrossEntropyLoss()

    def training_loss(x, y):
        return loss_fn(model(x), y)

    step = torch.compile(training_loss)
    with pytest.raises(RuntimeError, match="not been compiled yet"):
        _ = step.source
    x, y = batch((3, 4))
    eager = training_loss(x, y).item()
    step(x, y)
    source = step.source
    assert source.startswith("# Generated by gradc from test_compile.py:training_loss (reverse mode, wrt "
                             "model_1_weight")
    assert "def training_loss_value_and_grad(x, y, model_1_weight, model_1_bias," in source
    assert "    # backward\n" in source and "model_5_bias_bar" in source
    assert np.isclose(step(x, y).item(), eager, rtol=1e-6)


def test_compile_with_example_tensors_compiles_at_once():
    model = mlp()
    x, y = batch((3, 4))
    compiled = torch.compile(lambda x, y: nn.functional.cross_entropy(model(x), y), x, y)
    assert "def lambda__value_and_grad" in compiled.source
    assert torch.compile(model, x).source.count("def forward_vjp") == 1


def test_compile_refuses_numpy_example_inputs_with_the_compilers_name():
    # NumPy code is gradc.compile's (the compiler's API); torch.compile takes Tensors
    with pytest.raises(ArgumentError, match="not NumPy arrays") as info:
        torch.compile(lambda v: np.sum(v ** 2), np.ones(2))
    assert "gradc.compile" in info.value.hint and "test_compile.py" in str(info.value)
    with pytest.raises(ArgumentError, match="need the function"):
        torch.compile(None, torch.ones(2))


def test_module_compile_method():
    model = mlp()
    eager = mlp()
    model.compile()
    x = torch.randn(2, 3, 4)
    assert isinstance(model.forward, CompiledFunction)
    np.testing.assert_allclose(model(x).detach().numpy(), eager(x).detach().numpy(), rtol=1e-6)
    assert repr(model) == repr(eager)


def test_no_grad_runs_forward_only():
    model = mlp()
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(torch.randn(2, 3, 4))
    assert out.grad_fn is None and not out.requires_grad


def test_double_backward_through_compiled_code_is_refused():
    f = torch.compile(lambda x: (x ** 3).sum())
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(f(x), x, create_graph=True)
