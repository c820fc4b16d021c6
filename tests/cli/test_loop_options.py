"""``--checkpoint`` (the loops' memory policy) and ``--max-trips`` (the C target's bound on a while loop's tape)."""
from __future__ import annotations

import numpy as np

from tests.cli.cli_harness import assert_one_line_error, run_cli

MODEL = '''import numpy as np


def simulate(x0, k):
    x = x0
    for _ in range(200):
        x = x + 0.01 * (-k * x + np.sin(x))
    return np.sum(x ** 2)


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x
'''


def _load(path):
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def test_checkpoint_policies_give_the_same_gradient(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    x0, k = np.linspace(-1.0, 1.0, 5), 0.7
    grads = {}
    for policy in ("none", "sqrt", "7", "binomial:4"):
        out = f"out_{policy.replace(':', '_')}.py"
        result = run_cli("compile", "model.py:simulate", "--arg", "x0=f64[5]", "--arg", "k=f64[]",
                         "--checkpoint", policy, "-o", out, cwd=tmp_path)
        assert result.status == 0, result.stderr
        text = (tmp_path / out).read_text()
        assert f"--checkpoint {policy}" in text.splitlines()[1]  # the Regenerate line keeps the option
        grads[policy] = _load(tmp_path / out)["simulate_grad"](x0, k)
    assert "revolve_schedule(200, 4)" in (tmp_path / "out_binomial_4.py").read_text()
    for policy in ("sqrt", "7", "binomial:4"):
        for got, want in zip(grads[policy], grads["none"]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_show_reports_the_binomial_schedule(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    result = run_cli("show", "model.py:simulate", "--arg", "x0=f64[5]", "--arg", "k=f64[]",
                     "--checkpoint", "binomial:4", cwd=tmp_path)
    assert result.status == 0, result.stderr
    assert "binomial checkpointing (Revolve) of 200 steps with 4 snapshots" in result.stdout


def test_a_bad_policy_is_one_line_error(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    result = run_cli("compile", "model.py:simulate", "--arg", "x0=f64[5]", "--arg", "k=f64[]",
                     "--checkpoint", "binomial:0", "-o", "out.py", cwd=tmp_path)
    assert_one_line_error(result, "'binomial:0' is not a checkpointing policy")
    assert not (tmp_path / "out.py").exists()


def test_max_trips_sizes_the_c_tape(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    result = run_cli("compile", "model.py:newton_sqrt", "--arg", "a=f64[]", "--target", "c", "--max-trips", "50",
                     "-o", "out.c", cwd=tmp_path)
    assert result.status == 0, result.stderr
    source = (tmp_path / "out.c").read_text()
    assert "--max-trips 50" in source.splitlines()[1]
    assert "if (trips >= 50) return 1;" in source and "while (" in source
    result = run_cli("compile", "model.py:newton_sqrt", "--arg", "a=f64[]", "--target", "c", "--max-trips", "0",
                     "-o", "out2.c", cwd=tmp_path)
    assert_one_line_error(result, "'0' is not a positive integer")
