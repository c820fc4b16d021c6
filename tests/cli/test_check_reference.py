"""``gradc.check`` and ``gradc compile --check`` compare with the user's function, and can fail (issue 22, item 2).

The old ``--check`` compared the emitted gradient with finite differences of the emitted
forward: code wrong in its value and its gradient alike (the C target's integer ``%``) passed.
Here compiled functions are bent on purpose (value, derivative, or both consistently) on the
NumPy and C targets, in every mode, and the check must fail; the right code must pass. A seeded
generator of programs and perturbations covers the class.
"""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from cli_harness import run_cli

import gradc
from gradc.backends.c.build import find_compiler
from gradc.errors import CheckError

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(find_compiler() is None, reason="no C compiler"))]
MODES = ["grad", "vjp", "jvp", "jacobian", "hessian", "hvp"]


def loss(x, w):
    return np.sum(np.sin(x) * w) + np.sum(x ** 2) * w[0]


def pair(x, s):
    return np.sin(x) * s, np.sum(x ** 2)


X = np.array([0.3, 0.8, 1.2, 0.5])
W = np.array([0.7, -0.4, 1.1, 0.9])


@functools.lru_cache(maxsize=None)
def compiled(f, mode, target):
    args = (X, W) if f is loss else (X[:3], 0.6)
    return gradc.compile(f, *args, mode=mode, target=target, wrt=(0, 1))


def arguments(f):
    return (X, W) if f is loss else (X[:3], 0.6)


def scaled(tree, factor):
    if isinstance(tree, (tuple, list)):
        return type(tree)(scaled(t, factor) for t in tree)
    return np.asarray(tree) * factor if np.ndim(tree) else float(tree) * factor


class Bent:
    """A compiled object whose value and/or derivative is off by ``factor`` (all else delegated)."""

    def __init__(self, inner, value=1.0, derivative=1.0):
        self.inner, self.v, self.d = inner, value, derivative
        self.name, self.wrt, self.mode = inner.name, inner.wrt, getattr(inner, "mode", None)
        self.forward = lambda *a: scaled(inner.forward(*a), value)
        if self.mode is None:
            self.grad = lambda *a: scaled(inner.grad(*a), derivative)
            self.value_and_grad = lambda *a: self._pair(inner.value_and_grad(*a))
        elif self.mode in ("vjp", "jvp"):
            setattr(self, self.mode, lambda *a: self._pair(getattr(inner, self.mode)(*a)))
        else:
            setattr(self, self.mode, lambda *a: scaled(getattr(inner, self.mode)(*a), derivative))

    def _pair(self, result):
        return scaled(result[0], self.v), scaled(result[1], self.d)

    def __getattr__(self, name):
        return getattr(self.inner, name)


CASES = [(loss, m) for m in MODES] + [(pair, m) for m in ("vjp", "jvp", "jacobian")]
IDS = [f"{f.__name__}-{m}" for f, m in CASES]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("f, mode", CASES, ids=IDS)
def test_the_right_code_passes(f, mode, target):
    report = gradc.check(compiled(f, mode, target), f, *arguments(f))
    assert report.passed, str(report)
    assert all(c.compared > 0 for c in report.comparisons), str(report)  # nothing vacuous


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("f, mode", CASES, ids=IDS)
def test_a_wrong_value_fails(f, mode, target):
    bent = Bent(compiled(f, mode, target), value=1.001)
    with pytest.raises(CheckError) as info:
        gradc.check(bent, f, *arguments(f))
    failed = [c.kind for c in info.value.report.failures]
    assert failed and set(failed) == {"value"}, str(info.value.report)
    assert "disagrees" in str(info.value)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("f, mode", CASES, ids=IDS)
def test_a_wrong_derivative_fails(f, mode, target):
    report = gradc.check(Bent(compiled(f, mode, target), derivative=1.001), f, *arguments(f), raise_on_failure=False)
    assert not report.passed
    assert report.failures and {c.kind for c in report.failures} == {"derivative"}, str(report)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mode", MODES)
def test_code_wrong_in_value_and_derivative_alike_fails(mode, target):
    """What the old --check passed: a compiled function that is consistent with itself but not with f."""
    def scaled_loss(x, w):
        return 1.5 * loss(x, w)
    other = gradc.compile(scaled_loss, X, W, mode=mode, target=target, wrt=(0, 1))
    report = gradc.check(other, loss, X, W, raise_on_failure=False)
    assert not report.passed
    assert {c.kind for c in report.failures} == {"value", "derivative"}, str(report)  # both fail


@pytest.mark.parametrize("target", TARGETS)
def test_float32(target):
    def f(x):
        return np.sum(np.sqrt(x) * x)
    x = np.linspace(0.5, 1.5, 5).astype(np.float32)
    for mode in ("grad", "vjp", "jvp", "hessian", "hvp"):
        c = gradc.compile(f, x, mode=mode, target=target)
        assert gradc.check(c, f, x).passed
        assert not gradc.check(Bent(c, derivative=1.05), f, x, raise_on_failure=False).passed


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_computing_in_float32_inside_passes(target):
    """Its finite differences round at float32's eps even from float64 inputs: the allowance follows."""
    def f(x):
        return np.sum(np.sin(x.astype(np.float32)) * x.astype(np.float32))
    x = np.linspace(0.5, 1.5, 6).astype(np.float32)
    for mode in ("grad", "jvp", "hvp"):
        assert gradc.check(gradc.compile(f, x, mode=mode, target=target), f, x).passed


def test_integer_arguments_stay_fixed_and_matter():
    """The C target's old ``%`` bug, imitated: code for ``k + 1`` checked against ``(k + 1) % 3``."""
    def user(x, k):
        return np.sum(x * ((k + 1) % 3))

    def wrong(x, k):
        return np.sum(x * (k + 1))
    k = np.array([0, 2, 1, 2])
    report = gradc.check(gradc.compile(wrong, X, k), user, X, k, raise_on_failure=False)
    assert not report.passed and [c.what for c in report.comparisons if "d/d" in c.what] == [
        "value_and_grad: d/dx", "grad: d/dx"]  # k is not differentiated
    assert gradc.check(gradc.compile(user, X, k), user, X, k).passed
    assert gradc.check(gradc.compile(wrong, X, k), user, X, np.zeros(4, np.int64)).passed  # why zeros hid it


def test_non_finite_results_are_failures_that_name_the_entries():
    def f(x):
        with np.errstate(invalid="ignore"):
            return np.sum(np.log(x - 1.0))
    c = gradc.compile(f, X)
    report = gradc.check(c, f, X, raise_on_failure=False)  # X has entries below 1: log of a negative
    assert not report.passed
    value = report.comparisons[0]
    assert value.what == "value" and value.non_finite and "not finite" in value.line()
    gradient = next(c for c in report.comparisons if c.what == "value_and_grad: d/dx")
    assert {label for label, _, _ in gradient.non_finite} >= {"x[0]", "x[3]"}

    nan_gradient = Bent(c, derivative=float("nan"))
    assert not gradc.check(nan_gradient, f, X + 1.0, raise_on_failure=False).passed


@pytest.mark.parametrize("f, x, skipped", [
    (lambda x: np.sum(np.abs(x)), np.array([1e-7, 0.5, -0.7]), 1),  # the kink between the two steps' points
    (lambda x: np.sum(np.abs(x)), np.array([0.0, 0.5, -0.7]), 1),  # the kink hit exactly
    (lambda x: np.sum(np.maximum(x, 0.0)), np.array([0.0, 0.0, 2.0]), 2),
    (lambda x: np.sum(np.exp(10 * x)), np.array([1.0, 0.5, 0.2]), 0),  # strong curvature is no kink
    (lambda x: 1e6 + np.sum(x), np.array([1.0, 0.5, 0.2]), 0),  # nor is rounding noise on a large value
])
def test_kinks_are_skipped_not_failed(f, x, skipped):
    report = gradc.check(gradc.compile(f, x), f, x)
    gradient = next(c for c in report.comparisons if c.what == "grad: d/dx")
    assert gradient.skipped == skipped and gradient.compared == 3 - skipped, str(report)
    assert not gradc.check(Bent(gradc.compile(f, x), derivative=1.01), f, x, raise_on_failure=False).passed


def test_misuse_is_an_argument_error():
    with pytest.raises(gradc.ArgumentError, match="not a compiled function"):
        gradc.check(loss, loss, X, W)
    with pytest.raises(gradc.ArgumentError, match="not an argument"):
        gradc.check(compiled(loss, "grad", "numpy"), lambda a, b: loss(a, b), X, W)


# ---------------------------------------------------------------- a generator of programs and perturbations
UNARY = [np.sin, np.cos, np.tanh, np.exp, lambda a: a ** 2, lambda a: np.log1p(a * a), np.arctan,
         lambda a: 1.0 / (1.0 + a * a), np.sqrt, lambda a: a ** 3 - a]


def random_program(rng):
    """``f(x, w)``: a random composition of smooth ops, reduced to a scalar (sqrt only on positive values)."""
    ops = [int(i) for i in rng.integers(0, len(UNARY), size=3)]
    mix = int(rng.integers(0, 3))

    def f(x, w):
        a = UNARY[ops[0]](x) if ops[0] != 8 else np.sqrt(x * x + 1.0)
        b = UNARY[ops[1]](w) if ops[1] != 8 else np.sqrt(w * w + 1.0)
        c = a * b if mix == 0 else a + b if mix == 1 else a - 0.5 * b
        return np.sum(UNARY[ops[2]](c) if ops[2] != 8 else np.sqrt(c * c + 1.0))
    return f


def perturbations(rng, mode):
    """Ways the compiled code can be wrong: the value, one derivative entry, a swap of entries."""
    k = int(rng.integers(0, 4))

    def one_entry(tree):
        leaves = tree if isinstance(tree, (tuple, list)) else (tree,)
        out = [np.array(a, dtype=np.float64, copy=True) for a in leaves]
        flat = out[0].reshape(-1)
        flat[k % flat.size] += 1e-2 * (1.0 + abs(flat[k % flat.size]))
        return tuple(out) if isinstance(tree, (tuple, list)) else out[0]

    def swap(tree):
        leaves = tree if isinstance(tree, (tuple, list)) else (tree,)
        out = [np.array(a, dtype=np.float64, copy=True) for a in leaves]
        out[0] = out[0].reshape(-1)[::-1].reshape(out[0].shape) + 1e-2
        return tuple(out) if isinstance(tree, (tuple, list)) else out[0]
    def value(v):  # 1e-6 relative and absolute: far above rounding, far below what a reader would notice
        v = np.asarray(v, np.float64)
        return v + 1e-6 * (1.0 + np.abs(v))
    return {"value": ("value", value), "one entry": ("derivative", one_entry),
            "swap": ("derivative", swap)}


class Perturbed(Bent):
    def __init__(self, inner, part, change):
        super().__init__(inner)
        if part == "value":
            self.forward = lambda *a: change(inner.forward(*a))
        elif self.mode is None:
            self.grad = lambda *a: change(inner.grad(*a))
            self.value_and_grad = lambda *a: (lambda r: (r[0], change(r[1])))(inner.value_and_grad(*a))
        elif self.mode in ("vjp", "jvp"):
            setattr(self, self.mode, lambda *a: (lambda r: (r[0], change(r[1])))(getattr(inner, self.mode)(*a)))
        else:
            setattr(self, self.mode, lambda *a: change(getattr(inner, self.mode)(*a)))


@pytest.mark.parametrize("seed", range(300 if os.environ.get("GRADC_FUZZ_LONG") == "1" else 12))
def test_random_programs_pass_and_every_perturbation_fails(seed):
    rng = np.random.default_rng(seed)
    f = random_program(rng)
    x, w = rng.uniform(-1.5, 1.5, 4), rng.uniform(-1.5, 1.5, 4)
    mode = MODES[seed % len(MODES)]
    target = "c" if seed % 4 == 3 and find_compiler() is not None else "numpy"
    c = gradc.compile(f, x, w, mode=mode, wrt=(0, 1), target=target)
    assert gradc.check(c, f, x, w).passed
    for name, (part, change) in perturbations(rng, mode).items():
        report = gradc.check(Perturbed(c, part, change), f, x, w, raise_on_failure=False)
        assert not report.passed, f"{name} ({mode}, {target}) passed:\n{report}"


# ---------------------------------------------------------------- the command line
MODEL = '''\
import numpy as np


def loss(x: "f64[4]", w: "f64[4]"):
    return np.sum(np.sin(x) * w) + np.sum(x ** 2)


def indexed(x: "f64[4]", k: "i64[4]"):
    return np.sum(x * ((k + 1) % 3))


def far_index(x: "f64[4]", k: "i64[2]"):
    return np.sum(x[k * 5])


def layer(x: "f64[3]", W: "f64[3,3]"):
    return np.tanh(W @ x) * x
'''


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def patch(monkeypatch, target, mode, wrap):
    """Make the CLI's compiled object ``wrap(real compiled object)`` for ``target`` and ``mode``."""
    if mode == "grad" and target == "numpy":
        import gradc.api as module
        name = "Compiled"
    elif mode == "grad":
        import gradc.backends.c.build as module
        name = "CCompiled"
    elif target == "numpy":
        import gradc.cli.modes as module
        name = "_Loaded"
    else:
        import gradc.backends.c.unit as module
        name = "CUnit"
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: wrap(real(*a, **k)))


def check_line(result):
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("gradc: check:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result
    return lines[0]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("part", ["value", "derivative"])
@pytest.mark.parametrize("mode", ["grad", "vjp", "jacobian", "hvp"])
def test_cli_check_fails_wrong_code(work, monkeypatch, target, part, mode):
    func = "layer" if mode in ("vjp", "jacobian") else "loss"
    options = ["--mode", mode] if mode != "grad" else []
    out = "out.c" if target == "c" else "out.py"
    factor = {"value": 1.0 + 1e-6, "derivative": 1.0 + 1e-3}
    patch(monkeypatch, target, mode, lambda c: Bent(c, **{part: factor[part]}))
    result = run_cli("compile", f"model.py:{func}", *options, "--target", target, "--check", "-o", out, cwd=work)
    assert result.status == 3, result
    line = check_line(result)
    against = f"(the value against {func} run by NumPy)" if part == "value" else \
        f"(a derivative against central finite differences of {func})"
    assert f"MISMATCH {against}: " in line, line


@pytest.mark.parametrize("target", TARGETS)
def test_cli_check_fails_code_wrong_in_value_and_gradient_alike(work, monkeypatch, target):
    """The issue's C ``%`` bug, imitated on both targets: the compiled ``indexed`` computes ``k + 1``."""
    def wrong(x, k):
        return np.sum(x * (k + 1))
    other = gradc.compile(wrong, np.ones(4), np.zeros(4, np.int64), target=target)
    patch(monkeypatch, target, "grad", lambda c: other)
    out = "out.c" if target == "c" else "out.py"
    result = run_cli("compile", "model.py:indexed", "--target", target, "--check", "-o", out, cwd=work)
    assert result.status == 3, result
    assert "MISMATCH" in check_line(result)


def test_cli_check_passes_the_right_code_with_integer_inputs(work):
    result = run_cli("compile", "model.py:indexed", "--check", "-o", "out.py", cwd=work)
    assert result.status == 0, result
    assert "ok: the value agrees with indexed run by NumPy" in check_line(result)


def test_cli_draws_small_integers_and_falls_back_to_zeros(work):
    import argparse

    from gradc.cli.check import draw_arguments
    from gradc.cli.load import Job

    def job(func):
        args = argparse.Namespace(function=f"{work}/model.py:{func}", arg=[], wrt=None, checkpoint=None)
        return Job(args)
    (x, k), _ = draw_arguments(job("indexed"))
    assert k.dtype == np.int64 and 0 <= k.min() and k.max() < 4 and k.any()  # not all zeros: k % 3 matters
    assert np.all((0.5 <= x) & (x <= 1.5))
    (_, k), _ = draw_arguments(job("far_index"))  # k * 5 indexes past the end unless k is 0
    assert not k.any()


@pytest.mark.parametrize("target", TARGETS)
def test_keyword_only_parameters_and_integer_arrays(work, target):
    """The C target's functions take no keywords: the compiled code gets every argument positionally."""
    (work / "kw.py").write_text('import numpy as np\n\n\ndef f(x: "f64[3]", *, s: "f64[]" = 2.0, k: "i64[3]"):\n'
                                '    return np.sum(np.sin(x) * s * x[k])\n')
    out = "out.c" if target == "c" else "out.py"
    result = run_cli("compile", "kw.py:f", "--target", target, "--check", "-o", out, cwd=work)
    assert result.status == 0, result
    assert "ok: the value agrees" in check_line(result)

    def f(x, *, s, k):
        return np.sum(np.sin(x) * s * x[k])
    k = np.array([2, 0, 1])
    c = gradc.compile(f, X[:3], s=2.0, k=k, target=target, wrt=(0, "s"))  # s has no position (keyword-only): by name
    assert gradc.check(c, f, X[:3], s=2.0, k=k).passed
    assert not gradc.check(Bent(c, derivative=1.01), f, X[:3], s=2.0, k=k, raise_on_failure=False).passed


@pytest.mark.parametrize("mode", MODES)
def test_missing_or_misshapen_results_are_failures_not_crashes(mode):
    """A compiled function that drops a gradient or returns the wrong shape fails the check, with the reason."""
    c = compiled(loss, mode, "numpy")

    def drop(tree):
        return tree[:1] if isinstance(tree, (tuple, list)) else np.zeros(1)
    for part, change in (("derivative", drop), ("derivative", lambda t: scaled(t, np.ones((2, 2)) * 1.0))):
        if mode in ("jacobian", "hessian") and change is drop:
            change = lambda t: (t[0],)  # noqa: E731 - one block where two are expected
        report = gradc.check(Perturbed(c, part, change), loss, X, W, raise_on_failure=False)
        assert not report.passed and any(c.problem or c.non_finite or c.max_rel > c.tolerance
                                         for c in report.failures), str(report)


def test_a_function_that_draws_random_numbers_cannot_be_the_reference():
    def noisy(x):
        return np.sum(x * np.random.normal(size=x.shape))
    with pytest.warns(gradc.GradcWarning):
        c = gradc.compile(noisy, X)
    report = gradc.check(c, noisy, X, raise_on_failure=False)
    assert not report.passed and report.comparisons[0].what == "f itself"
    assert "two calls with the same arguments" in report.comparisons[0].problem
