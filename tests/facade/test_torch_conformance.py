"""gradc against torch 2.13.0's recorded output for optim, lr_scheduler, nn.Module, utils.data and API details.

The cases are in spec/gen_*.py (runnable under torch or gradc); spec/*.expected.txt hold what
torch printed (regenerate: ``/tmp/torchenv/bin/python tests/facade/spec/gen_optim.py torch >
tests/facade/spec/optim.expected.txt``, likewise for modules, data, api). Optimiser
trajectories compare to 1e-6 relative in float64 and to 4 significant digits in float32;
everything else (strings, shapes, orders, learning rates, RNG draws) must be equal.
"""
import importlib.util
import pathlib
import sys

import pytest

import gradc.torch

SPEC = pathlib.Path(__file__).resolve().parent / "spec"
SCRIPTS = ("optim", "modules", "data", "api")
FOUR_DIGITS = {"training_loop_with_loader", "clip_gradients"}  # float32 values through autograd


def _load(path):
    spec = importlib.util.spec_from_file_location(f"gradc_spec_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(SPEC))
runner = _load(SPEC / "spec_runner.py")
MODULES = {name: _load(SPEC / f"gen_{name}.py") for name in SCRIPTS}
EXPECTED = {name: runner.read_expected(SPEC / f"{name}.expected.txt") for name in SCRIPTS}


def tolerance(case_name):
    if case_name.startswith("f64_"):
        return 1e-6
    if case_name.startswith(("f32_", "fed32_")) or case_name in FOUR_DIGITS:
        return 1e-4
    return 1e-12


PARAMS = [(script, fn.__name__) for script in SCRIPTS for fn in MODULES[script].CASES]


def test_every_recorded_case_exists():
    for script in SCRIPTS:
        assert sorted(EXPECTED[script]) == sorted(fn.__name__ for fn in MODULES[script].CASES), script


@pytest.mark.parametrize("script,name", PARAMS)
def test_case_matches_torch(script, name):
    fn = next(f for f in MODULES[script].CASES if f.__name__ == name)
    actual = runner.run_case(fn, gradc.torch)
    expected = EXPECTED[script][name]
    assert not (isinstance(expected, str) and expected.startswith("CASE RAISED")), expected
    diffs = runner.compare(expected, actual, tolerance(name))
    assert not diffs, "\n".join(diffs[:5])


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_sgd_float32_is_bit_exact(index):
    """SGD's float32 updates (fused multiply-adds) round exactly as torch's, given the same gradients."""
    name = f"fed32_sgd_{index}"
    fn = next(f for f in MODULES["optim"].CASES if f.__name__ == name)
    assert runner.run_case(fn, gradc.torch) == EXPECTED["optim"][name]


def test_compare_detects_a_wrong_number():
    assert runner.compare([1.0, [2.0]], [1.0, [2.001]], 1e-4)
    assert not runner.compare([1.0, [2.0]], [1.0, [2.00001]], 1e-4)
    assert runner.compare({"a": "x"}, {"a": "y"}, 1e-4)
