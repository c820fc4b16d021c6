"""Random programs with random checks (``raise`` under an ``if`` on traced data, ``assert``), in straight-line
code, branches, nested branches, ``for`` and ``while`` loops: on random inputs on both sides of the checks,
the compiled function raises what the Python function raises (class and arguments) or returns its value.

A fixed seed runs in the suite; ``GRADC_FUZZ_LONG=1`` runs many more programs.
"""
from __future__ import annotations

import importlib
import itertools
import linecache
import os
import random

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

api = importlib.import_module("gradc.api")
LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
N_PROGRAMS, N_C_PROGRAMS = (2000, 200) if LONG else (40, 4)
_COUNTER = itertools.count()

MESSAGES = ["x must be >= 0", "it's \"quoted\"", "back\\slash\nnew line", "{} %s */", "caf\u00e9", ""]
EXCEPTIONS = ["ValueError", "AssertionError", "ArithmeticError", "FloatingPointError", "ZeroDivisionError",
              "RuntimeError", "TypeError", "IndexError", "OverflowError", "KeyError"]


class Program:
    """A random function ``f(x)`` of ``x: f64[4]`` whose statements keep a scalar ``s``."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        lines = ["def f(x):", "    s = np.sum(x * x) * 0.25"]
        for _ in range(rng.randint(2, 6)):
            lines += ["    " + line for line in self.statement()]
        lines.append("    return s * x[0] + np.sin(s)")
        self.source = "\n".join(lines) + "\n"

    def threshold(self, lo=-1.2, hi=1.2):
        return round(self.rng.uniform(lo, hi), 2)

    def condition(self):
        r, k, t = self.rng, self.rng.randrange(4), self.threshold()
        return r.choice([f"x[{k}] < {t}", f"np.sum(x) > {t * 2}", f"np.any(x < {t - 1.0})",
                         f"not np.all(x > {t - 1.5})", f"np.max(x) > {t + 1.0}", f"s > {self.threshold(0.3, 2.5)}"])

    def exception(self):
        r = self.rng
        name, message = r.choice(EXCEPTIONS), r.choice(MESSAGES)
        return r.choice([f"{name}({message!r})", name, f"{name}({message!r}, {r.randint(0, 9)})"])

    def statement(self) -> list:
        r = self.rng
        kind = r.choice(["arith", "arith", "raise", "assert", "else", "nested", "for", "while"])
        a, k = round(r.uniform(0.5, 1.5), 2), r.randrange(4)
        if kind == "arith":
            return [f"s = s * {a} + np.sin(x[{k}])"]
        if kind == "raise":
            return [f"if {self.condition()}:", f"    raise {self.exception()}"]
        if kind == "assert":
            message = r.choice([f", {r.choice(MESSAGES)!r}", ""])
            return [f"assert not ({self.condition()}){message}"]
        if kind == "else":
            return [f"if not ({self.condition()}):", f"    s = s * {a}", "else:", f"    raise {self.exception()}"]
        if kind == "nested":
            return [f"if {self.condition()}:", f"    if {self.condition()}:", f"        raise {self.exception()}",
                    f"    s = s + {a}"]
        if kind == "for":
            return ["for i in range(4):", f"    if x[i] * s < {self.threshold(-2.0, 0.5)}:",
                    f"        raise {self.exception()}", f"    s = s + x[i] * {a}"]
        # while: s grows to the bound, or falls below -2 and on until the check raises (s * 1.5 + 1 moves away
        # from its fixed point -2 either way)
        return [f"while s < {self.threshold(2.0, 6.0)}:", "    if s < -10.0:", f"        raise {self.exception()}",
                "    s = s * 1.5 + 1.0"]

    def function(self):
        path = f"<generated-check-{next(_COUNTER)}>"
        linecache.cache[path] = (len(self.source), None, self.source.splitlines(True), path)
        namespace = {"np": np}
        exec(compile(self.source, path, "exec"), namespace)
        return namespace["f"]


def outcome(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return "ok", fn(*args)
    except gradc.GradcError:
        raise
    except Exception as e:  # noqa: BLE001  (the user's exception is the thing compared)
        return type(e), e.args


def agree(reference, got, what):
    if reference[0] != "ok":
        assert got[:2] == reference[:2], what
    else:
        assert got[0] == "ok", what
        np.testing.assert_allclose(got[1], reference[1], rtol=1e-9, atol=1e-12, err_msg=str(what))


def first(result):
    return (result[0], result[1][0]) if result[0] == "ok" else result


def inputs(rng: random.Random) -> list:
    seeds = np.random.default_rng(rng.randrange(2 ** 32))
    return [seeds.standard_normal(4) * scale for scale in (0.3, 0.8, 1.5, 3.0) for _ in range(2)]


def _run(program_count, targets, seed):
    rng = random.Random(seed)
    raised = returned = 0
    for _ in range(program_count):
        program = Program(rng)
        f = program.function()
        xs = inputs(rng)
        modules = [api.compile(f, xs[0], target=t) for t in targets]
        value_and_grad = gradc.value_and_grad(f)
        for x in xs:
            reference = outcome(f, x)
            raised += reference[0] != "ok"
            returned += reference[0] == "ok"
            what = (program.source, x)
            agree(reference, first(outcome(value_and_grad, x)), what)
            for module in modules:
                agree(reference, outcome(module.forward, x), what)
                agree(reference, first(outcome(module.value_and_grad, x)), what)
                gradient = outcome(module.grad, x)
                assert gradient[0] == reference[0], what
    return raised, returned


@pytest.mark.parametrize("seed", [22, 2022])
def test_random_checks_numpy_target(seed):
    raised, returned = _run(N_PROGRAMS // 2, ["numpy"], seed)
    assert raised > 20 and returned > 20, (raised, returned)  # both sides of the checks are exercised


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")
def test_random_checks_c_target():
    raised, returned = _run(N_C_PROGRAMS, ["c"], 11)
    assert raised and returned, (raised, returned)
