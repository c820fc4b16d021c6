"""In-place ops through views and indexed writes follow torch's eager semantics: values, gradients,
``grad_fn`` names, version counters and torch's refusals.

Three layers: listed examples with torch's numbers written in; 240 seeded random programs of view and
in-place ops whose torch 2.13.0 outcomes are recorded in spec/view_inplace.expected.json (regenerate
with spec/gen_view_inplace.py); and a hypothesis state machine running random programs under gradc
and torch side by side (skipped without torch; ``GRADC_FUZZ_LONG=1`` runs many more examples).
"""
import json
import os
import pathlib
import sys
import warnings

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

import gradc.torch as torch

SPEC = pathlib.Path(__file__).parent / "spec"
sys.path.insert(0, str(SPEC))
import view_programs as vp  # noqa: E402

VIEWS = {
    "view": lambda y: y.view(2, 1),
    "reshape": lambda y: y.reshape(1, 2),
    "unsqueeze": lambda y: y.unsqueeze(0),
    "t": lambda y: y.view(2, 1).t(),
    "transpose": lambda y: y.view(1, 2).transpose(0, 1),
    "permute": lambda y: y.view(1, 2).permute(1, 0),
    "expand": lambda y: y.expand(1, 2),
    "squeeze": lambda y: y.view(1, 2).squeeze(0),
    "flatten": lambda y: y.view(2, 1).flatten(),
    "T": lambda y: y.view(2, 1).T,
    "mT": lambda y: y.view(1, 2).mT,
    "slice": lambda y: y[:],
    "chain": lambda y: y.view(2, 1)[:, 0].unsqueeze(1).t(),
}


@pytest.mark.parametrize("make_view", list(VIEWS.values()), ids=list(VIEWS))
def test_inplace_through_a_view_of_a_non_leaf_changes_value_and_gradient(make_view):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    make_view(y).mul_(3.0)
    assert y.tolist() == [3.0, 6.0]
    assert type(y.grad_fn).__name__ == "CopySlices"
    (y * y).sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]  # torch 2.13.0


def test_a_partial_view_changes_only_its_elements_and_other_views_see_the_new_history():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    row, diag = y[1], y.diagonal()
    diag.mul_(2.0)  # y[0, 0] and y[1, 1] doubled
    assert row.tolist() == [3.0, 8.0] and type(row.grad_fn).__name__ == "AsStridedBackward0"
    (row * row).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [6.0, 32.0]]  # torch 2.13.0


def test_narrow_select_and_views_of_views_write_through():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    y = x * 1.0
    y.narrow(1, 1, 2).select(0, 1).add_(10.0)
    assert y.tolist() == [[0.0, 1.0, 2.0], [3.0, 14.0, 15.0]]
    (y * y).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [6.0, 28.0, 30.0]]


def test_an_in_place_op_on_a_0_d_view_sends_its_gradient_to_one_element():
    w = torch.tensor([0.25, -2.0, 1.5], dtype=torch.float64, requires_grad=True)
    b = w * 2.0
    b.select(0, 1).clamp_(-0.5, 1.25)
    assert b.tolist() == [0.5, -0.5, 3.0]
    (b * b).sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 12.0]  # torch 2.13.0


def test_versions_are_shared_and_a_modified_saved_view_is_an_error():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    v = y.view(2, 1)
    v.add_(1.0)
    assert (y._version, v._version) == (1, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation: .*output 0 of Exp, is at version 1; "
                                           "expected version 0"):  # torch 2.13.0's message
        y.sum().backward()


@pytest.mark.parametrize(("make", "message"), [
    (lambda x: x.view(2).mul_(2.0), "a view of a leaf Variable that requires grad is being used in an in-place "
                                    "operation."),
    (lambda x: x.mul_(2.0), "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda x: x[0].zero_(), "a view of a leaf Variable that requires grad"),
    (lambda x: (x * 1).unbind()[0].mul_(2.0), "Output 0 of Unbind is a view and is being modified inplace. This view "
                                              "is the output of a function that returns multiple views."),
    (lambda x: (x * 1).split(1)[1].add_(1.0), "Output 1 of Split is a view and is being modified inplace."),
    (lambda x: (x * 1).expand(3, 2).add_(1.0), "unsupported operation: more than one element of the written-to "
                                               "tensor refers to a single memory location."),
    (lambda x: (lambda y: y.add_(y[:1]))(x * 1), "unsupported operation: some elements of the input tensor and "
                                                 "the written-to tensor refer to a single memory location."),
])
def test_torch_refusals(make, message):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        make(x)
    assert str(info.value).startswith(message)


def test_a_view_made_in_no_grad_mode_cannot_be_written_with_grad_mode_on():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    with torch.no_grad():
        v = y.view(2)
    assert v.requires_grad and v.grad_fn is None  # torch: a leaf that requires grad
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled. Given that"):
        v.mul_(2.0)
    y.mul_(2.0)  # the base written with grad mode on: the view's history is refused from now on
    with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
        v * 2.0


def test_writes_in_no_grad_mode_change_values_only():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    with torch.no_grad():
        y.view(2, 1)[0].fill_(5.0)
    assert y.tolist() == [5.0, 2.0] and type(y.grad_fn).__name__ == "MulBackward0"
    (y * y).sum().backward()
    assert x.grad.tolist() == [10.0, 4.0]  # torch: the recorded product, with the new value


def test_repeated_integer_indices_keep_the_last_write_with_torch_gradients():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    y[[0, 0, 1]] += t
    assert y.tolist() == [3.0, 5.0] and type(y.grad_fn).__name__ == "IndexPutBackward0"
    (y * y).sum().backward()
    assert x.grad.tolist() == [12.0, 10.0] and t.grad.tolist() == [6.0, 6.0, 10.0]  # torch 2.13.0


def test_mask_and_mixed_index_writes():
    x = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], requires_grad=True)
    y = x * 1.0
    y[y < 0] = 0.0
    assert type(y.grad_fn).__name__ == "IndexPutBackward0"
    y[1, [0, 2, 2]] += torch.tensor([1.0, 2.0, 3.0])
    assert y.tolist() == [[1.0, 0.0, 3.0], [1.0, 5.0, 3.0]]
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


def test_mixed_index_reads_apply_basic_parts_first_as_torch_does():
    y = torch.arange(24.0).reshape(2, 3, 4)
    assert tuple(y[0, :, [0, 1]].shape) == (3, 2)  # NumPy would give (2, 3)
    assert y[0, :, [0, 1]].tolist() == [[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]]


def test_an_output_written_in_place_after_its_node_keeps_its_gradient():
    # the fast lane's division read its output in backward: a later d.sub_() changed the gradient silently
    x = torch.tensor([0.5, -1.25], dtype=torch.float64, requires_grad=True)
    q = x * 1.0
    d = q / (q * q + 1.0)
    d.sub_(2.0)
    d.sum().backward()
    expected = [(1 - v * v) / (v * v + 1) ** 2 for v in (0.5, -1.25)]
    assert x.grad.tolist() == pytest.approx(expected, rel=1e-14)


def test_fill_copy_and_zero_give_the_overwritten_tensor_a_zero_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    for op, name in [(lambda y: y.fill_(3.0), "FillBackward2"), (lambda y: y.zero_(), "ZeroBackward0"),
                     (lambda y: y.copy_(torch.ones(2)), "CopyBackwards")]:
        x.grad = None
        y = x * 1.0
        op(y)
        assert type(y.grad_fn).__name__ == name
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]  # zeros, not None, as in torch


# ---------------------------------------------------------------- recorded torch outcomes
RECORDED = json.loads((SPEC / "view_inplace.expected.json").read_text())


def test_recorded_programs_match_torch():
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in RECORDED["cases"]:
            diff = vp.differences(vp.run(torch, case["steps"]), case["torch"])
            if diff:
                bad.append((case["seed"], diff[:3]))
    assert not bad, bad[:5]


def test_the_recorded_programs_are_the_generator_s():
    gen = _load_generator()
    assert len(RECORDED["cases"]) == gen.PROGRAMS
    for case in RECORDED["cases"][:20]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert gen.program(case["seed"], torch) == case["steps"], "regenerate view_inplace.expected.json"


def _load_generator():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_view_inplace", SPEC / "gen_view_inplace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- side by side with torch
LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"


def _torch():
    try:
        import torch as real
    except ImportError:
        return None
    return real if real.__version__.startswith("2.13.0") else None


REAL = _torch()


def _outcome(T, env, leaves, step):
    try:
        vp.run_step(T, env, leaves, step)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return vp.error_of(e)
    return None


class ViewInplaceMachine(RuleBasedStateMachine):
    """Random view, in-place and out-of-place steps on tensors derived from leaves, applied to gradc and torch
    at once; every step's error and every tensor's value, version and ``grad_fn`` must agree, and at the end the
    backward's error or the leaves' gradients."""

    def __init__(self):
        super().__init__()
        self.steps, self.stopped = [], False
        self.gradc_leaves, self.gradc_env = vp.leaves(torch), []
        self.torch_leaves, self.torch_env = vp.leaves(REAL), []

    @rule(data=st.data())
    def step(self, data):
        if self.stopped:  # the programs end at their first error
            return
        step = vp.choose_step(lambda n: data.draw(st.integers(0, n - 1)), self.gradc_env)
        self.steps.append(step)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = _outcome(torch, self.gradc_env, self.gradc_leaves, step)
            want = _outcome(REAL, self.torch_env, self.torch_leaves, step)
            assert got == want, (self.steps, got, want)
            self.stopped = got is not None
            snap_got, snap_want = vp.snapshot(self.gradc_env), vp.snapshot(self.torch_env)
        diff = vp.differences({**_EMPTY, "env": snap_got}, {**_EMPTY, "env": snap_want})
        if diff:
            print(json.dumps(self.steps))  # the program, whole (the assertion's message is cut)
        assert not diff, (self.steps, diff)

    def teardown(self):
        if not self.steps:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diff = vp.differences(vp.run(torch, self.steps), vp.run(REAL, self.steps))
        if diff:
            print(json.dumps(self.steps))
        assert not diff, (self.steps, diff)


_EMPTY = {"error": None, "backward_error": None, "grads": None}

ViewInplaceMachine.TestCase.settings = settings(
    max_examples=3000 if LONG else 60, stateful_step_count=20 if LONG else 12, derandomize=not LONG, deadline=None,
    suppress_health_check=list(HealthCheck), database=None,
    phases=[Phase.explicit, Phase.generate] if os.environ.get("GRADC_FUZZ_NO_SHRINK") == "1" else list(Phase))
TestViewInplaceAgainstTorch = pytest.mark.skipif(REAL is None, reason="torch 2.13.0 is not installed")(
    ViewInplaceMachine.TestCase)
