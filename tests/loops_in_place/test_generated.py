"""Random fill-style programs (``fill_programs.py``): gradc agrees with the user's function and with finite differences.

For each seeded program: the value of the emitted NumPy module equals the function run by NumPy,
its gradient equals central differences of that function, the argument is left unchanged, the loop
stays a loop in the emitted source, and no whole-array copy runs per iteration of its loops.
"""
from __future__ import annotations

import importlib.util
import random
import sys

import numpy as np
import pytest
from emitted_structure import per_iteration_copies
from fill_programs import program
from finite_differences import central_gradient as _central

import gradc

SEEDS = range(40)


def _load(tmp_path, seed: int):
    path = tmp_path / f"fill_program_{seed}.py"
    path.write_text(program(random.Random(seed)))
    name = f"fill_program_{seed}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module



@pytest.mark.parametrize("seed", SEEDS)
def test_random_fill_program(tmp_path, seed):
    module = _load(tmp_path, seed)
    f = module.f
    rng = np.random.default_rng(seed)
    matrix = "def f(X)" in (tmp_path / f"fill_program_{seed}.py").read_text()
    x = rng.uniform(-1.0, 1.0, (5, 4) if matrix else 9)
    before = x.copy()
    compiled = gradc.compile(f, x)
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(compiled.grad(x), grad, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-5, atol=1e-6)
    assert " for " in compiled.source or "\n    for " in compiled.source, "the loop was unrolled"
    assert per_iteration_copies(compiled.source, x.size) == [], compiled.source
