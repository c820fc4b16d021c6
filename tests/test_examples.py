"""Every example runs as a script, quickly, and prints results that make sense."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from gradc.backends.c.build import find_compiler

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")


def run_example(name, *args, **env_overrides):
    env = dict(os.environ, PYTHONPATH=REPO, **env_overrides)
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def numbers(pattern, text):
    found = re.findall(pattern, text)
    return [float(v) for item in found for v in (item if isinstance(item, tuple) else (item,))]


def test_scipy_second_order_methods_agree():
    pytest.importorskip("scipy")
    out = run_example("scipy_second_order.py")
    exact = numbers(r"trust-exact, 100 parameters.*: (\d+) iterations, loss = (\S+), \|grad\| = (\S+)", out)
    ncg = numbers(r"trust-ncg.*: (\d+) iterations, loss = (\S+), max \|w_ncg - w_exact\| = (\S+)", out)
    assert exact[0] <= 20 and exact[2] < 1e-8  # Newton's method converges in a few steps with the exact Hessian
    assert abs(ncg[1] - exact[1]) < 1e-10 and ncg[2] < 1e-6
    theta = numbers(r"theta = \[([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\]", out)
    assert max(abs(a - b) for a, b in zip(theta, [2.0, 1.3, 0.5, 0.2])) < 0.02


def test_logistic():
    out = run_example("logistic.py")
    assert "loss  =" in out and "w_bar =" in out and "b_bar =" in out


def test_demo_gradient_agrees_with_finite_difference():
    out = run_example("demo.py")
    assert "== IR of loss" in out and "def loss_grad(" in out
    line = next(line for line in out.splitlines() if line.startswith("finite difference"))
    fd, ours = numbers(r"(-?\d+\.\d{6,})", line)
    assert abs(fd - ours) < 1e-6
    if find_compiler() is not None:
        assert "void gradc_fn_loss_grad(const double *x" in out
        assert numbers(r"C and NumPy targets differ by at most (\S+)", out)[0] < 1e-12
    else:
        assert "no C compiler found" in out


def test_demo_without_a_c_compiler_still_shows_the_c_header():
    out = run_example("demo.py", CC="", PATH=os.path.dirname(sys.executable))
    assert "no C compiler found (set $CC or install gcc)" in out and "void gradc_fn_loss_grad(const double *x" in out


@pytest.mark.parametrize("flags, method", [((), "BFGS"), (("--no-scipy",), "gradient descent")])
def test_rosenbrock_finds_the_minimum(flags, method):
    if not flags:
        pytest.importorskip("scipy")
    out = run_example("rosenbrock_scipy.py", *flags)
    assert method in out
    assert numbers(r"rosenbrock at x\* = (\S+)", out)[0] < 1e-8


def test_mlp_loss_decreases():
    out = run_example("mlp_train.py")
    losses = numbers(r"loss (\d+\.\d+)", out)
    assert len(losses) >= 3
    assert losses[-1] < 0.5 * losses[0]
    assert numbers(r"accuracy (\d\.\d+)", out)[-1] > 0.8


def test_curve_fit_recovers_parameters():
    out = run_example("curve_fit.py")
    fitted = numbers(r"fitted +a=(\S+) +k=(\S+) +c=(\S+)", out)
    true = numbers(r"true +a=(\S+) +k=(\S+) +c=(\S+)", out)
    assert len(fitted) == 3 and all(abs(f - t) < 0.1 for f, t in zip(fitted, true))
    assert "def sse_grad(t, y, a, k, c):" in out and "# backward" in out


def test_an_array_filled_in_a_loop_has_the_central_difference_gradient():
    out = run_example("recurrence.py")
    gradc_value, difference = numbers(r"gradc (\S+), central difference (\S+)", out)
    assert abs(gradc_value - difference) < 1e-6 * max(1.0, abs(difference))


def test_the_recursive_determinant_has_the_cofactor_gradient():
    out = run_example("cofactor.py")
    mine, numpys = numbers(r"det (\S+) \(numpy (\S+)\)", out)
    assert abs(mine - numpys) < 1e-10
    assert "gradient agrees with the cofactor matrix: True" in out


def test_every_example_is_listed_and_tested():
    scripts = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    listing = open(os.path.join(EXAMPLES, "README.md")).read()
    tested = open(__file__).read()
    for script in scripts:
        assert f"`{script}`" in listing, script
        assert f'"{script}"' in tested, script


def test_torch_style_tutorial_runs_on_the_facade():
    out = run_example("torch_tutorial.py")
    assert "Gradient function for loss = <BinaryCrossEntropyWithLogitsBackward0 object at 0x" in out
    assert "compiled gradient agrees with backward(): True" in out
    assert out.splitlines()[-2] == "False"  # z.requires_grad under no_grad


def test_unchanged_torch_code_runs_on_the_facade_as_on_torch():
    out = run_example("unchanged_torch.py")
    x0, x1, x2 = 0.5, -0.3, 1.2  # Rosenbrock's value and gradient at the script's point, by hand
    value = (1 - x0) ** 2 + 100 * (x1 - x0 ** 2) ** 2 + (1 - x1) ** 2 + 100 * (x2 - x1 ** 2) ** 2
    gradient = [-2 * (1 - x0) - 400 * x0 * (x1 - x0 ** 2),
                200 * (x1 - x0 ** 2) - 2 * (1 - x1) - 400 * x1 * (x2 - x1 ** 2), 200 * (x2 - x1 ** 2)]
    assert numbers(r"rosenbrock (\S+),", out) == [round(value, 4)]
    np.testing.assert_allclose(numbers(r"gradient \[(\S+), (\S+), (\S+)\]", out), gradient, rtol=1e-9)
    assert len(numbers(r"epoch \d: loss (\d\.\d+)", out)) == 3
    try:
        import torch
    except ImportError:
        return
    if torch.__version__.split("+")[0] == "2.13.0":  # the version the facade is checked against
        assert run_example("unchanged_torch.py", "--torch") == out


def test_c_gradient_example_calls_the_generated_c():
    out = run_example("c_gradient.py")
    assert "wrote ['loss.c', 'loss.h']" in out
    if "no C compiler found" in out:
        pytest.skip("no C compiler on this machine: the example only wrote the sources")
    assert "C agrees with the NumPy target: True" in out
    in_process = numbers(r"in-process C: loss = (\d+\.\d+)", out)[0]
    from_main = numbers(r"from C main: loss = (\d+\.\d+)", out)[0]
    assert in_process == from_main


def test_dask_logistic_fits_the_known_weights():
    pytest.importorskip("distributed")
    pytest.importorskip("scipy")
    out = run_example("dask_logistic.py", "--rows", "100000", "--chunk", "25000")
    assert "in 4 chunks; 2 workers with 2GB each" in out and "iteration   1: loss" in out
    assert "CONVERGENCE" in out
    assert numbers(r"max \|fitted - true\| = ([\d.]+)", out)[0] < 0.05  # 10^5 rows pin the weights to ~0.01
    assert numbers(r"final \|grad\| = (\S+)", out)[0] < 1e-5
