"""Differential testing on random programs: emitted NumPy and C against the reference interpreter,
NumPy itself and central finite differences.

A program is a few statements of NumPy code over 1-3 inputs (scalars and arrays of rank 1-3,
float64 or float32): elementwise functions, arithmetic with broadcasting, reductions, slices,
integer-array indexing, masks through ``np.where``, ``maximum``/``minimum``, ``matmul`` and
reshapes, summed to a scalar. Hypothesis draws it with a fixed seed. Per CI run: at least 2,000
programs on the NumPy target and 200 on the C target (one C unit per batch of programs: a build
is ~1 s); ``GRADC_FUZZ_LONG=1`` runs ten times as many, ``GRADC_FUZZ_SEED=N`` other programs.

Each program is checked: the value against NumPy running the program itself and against the
interpreter (``gradc.ir.interpret.evaluate``) on the traced graph; every gradient against the
interpreter on the unoptimised adjoint graph and against central differences of the program
run by NumPy in float64 (entries where two step sizes disagree sit on a kink and are skipped).
"""
import ctypes
import functools
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from gradc.backends.numpy import Function, emit_module, load_source
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.trace import trace
from gradc.transforms import reverse as ad
from tests.fuzz.checks import assert_close, central_differences

LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
NUMPY_PROGRAMS = int(os.environ.get("GRADC_FUZZ_N", 20000 if LONG else 2000))
C_BATCH = 50  # programs per C unit
C_BATCHES = int(os.environ.get("GRADC_FUZZ_C_BATCHES", 40 if LONG else 4))
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261124))  # another seed explores other programs

SHAPES = [(), (3,), (4,), (2, 3), (3, 1), (1, 4), (2, 3, 2), (3, 3)]
UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.arctan({})", "np.exp(np.tanh({}))", "-{}",
         "np.log(np.abs({}) + 1.0)", "np.sqrt(np.abs({}) + 0.5)", "np.abs({})", "{} ** 2", "np.square({})",
         "np.log1p(np.abs({}))", "np.expm1(np.tanh({}))", "np.sinh(np.tanh({}))", "np.cosh(np.tanh({}))",
         "{} * 1.5", "0.5 - {}", "np.clip({}, -0.8, 0.9)", "np.logaddexp({}, 0.25)", "({} + np.zeros(4))",
         "np.maximum({}, 0.2)", "np.minimum(0.1, {})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (np.abs({}) + 1.0)", "np.maximum({}, {})", "np.minimum({}, {})",
          "np.where({0} > {1}, {0}, {1} * 0.5)", "np.where({} > 0.1, {}, 0.3)", "np.logaddexp({}, {})",
          "np.maximum({}, {})", "np.minimum({}, {})", "np.where({} < 0.2, 0.5, {})"]
REDUCE = ["np.sum({}{})", "np.mean({}{})", "np.max({}{})", "np.min({}{})", "{}.sum({})"]
SHAPE_OPS = ["{}.T", "{}.reshape(-1)", "np.broadcast_to({}, (2,) + np.shape({}))",
             "np.concatenate([{0}, {0} * 2.0])", "np.stack([{0}, -{0}])"]
KINDS = ["unary", "binary", "binary", "reduce", "index", "matmul", "shape", "mask", "gather"]


@functools.lru_cache(maxsize=None)
def _integers(lo, hi):
    return st.integers(lo, hi)  # built once: making a strategy costs more than drawing from it


@functools.lru_cache(maxsize=None)
def _sampled(options):
    return st.sampled_from(options)


class Program:
    """Source text of ``def prog(a0, ...)`` and example inputs; built by drawing choices."""

    def __init__(self, draw):
        self.draw = draw
        self.dtype = np.float32 if self.between(0, 3) == 0 else np.float64
        rng = np.random.default_rng(self.between(0, 2 ** 16))
        n_inputs = self.between(1, 3)
        self.args = []
        self.values = []  # (expression, example value)
        mixed = self.between(0, 7) == 0  # float32 and float64 inputs together: NumPy's promotion
        for i in range(n_inputs):
            shape = self.one_of(SHAPES)
            dtype = self.one_of((np.float32, np.float64)) if mixed else self.dtype
            if dtype != self.dtype:
                self.dtype = np.float32  # the tolerance of the least precise input
            x = rng.uniform(-1.5, 1.5, size=shape).astype(dtype)
            # a Python float is weak in NumPy (f32 + 1.5 is f32) but an f64[] input in gradc: mixed
            # programs pass np.float64 scalars (noted in the issue), others Python floats (math-module code)
            self.args.append((float(x) if dtype == np.float64 and not mixed else dtype(x)) if shape == () else x)
            self.values.append((f"a{i}", self.args[-1]))
        self.lines = []
        for _ in range(self.between(1, 6)):
            self.step()
        terms = [f"np.sum({name})" for name, _ in self.values[-self.between(1, 3):]]
        terms += [f"np.sum(a{i}) * 0.25" for i in range(n_inputs) if self.flip()]
        self.lines.append("return " + " + ".join(terms))
        self.source = "def prog({}):\n    {}\n".format(", ".join(f"a{i}" for i in range(n_inputs)),
                                                       "\n    ".join(self.lines))

    def __repr__(self):  # what hypothesis prints for a falsifying example
        return f"Program({self.source!r}, args={self.args!r})"

    def between(self, lo, hi):
        return self.draw(_integers(lo, hi))

    def flip(self):
        return self.draw(_integers(0, 1)) == 1

    def one_of(self, options):
        return self.draw(_sampled(tuple(options)))

    def pick(self):
        """A value so far: its name and (for its shape) its example as an array."""
        n = len(self.values)  # half the time the newest: chains of ops fuse into one C loop
        name, value = self.values[n - 1 if self.flip() else self.between(0, n - 1)]
        return name, np.asarray(value)

    def step(self):
        """One statement ``v<k> = <op>``; an op that does not fit its operands' shapes is drawn again."""
        for _ in range(8):
            expr = self.expression()
            if expr is None:
                continue
            try:
                with np.errstate(all="ignore"):
                    value = eval(expr, {"np": np}, dict(self.values))
            except (ValueError, IndexError, TypeError, AttributeError):
                continue
            array = np.asarray(value)
            if array.dtype.kind != "f" or array.size == 0 or array.size > 64 or not np.all(np.isfinite(array)) \
                    or np.max(np.abs(array), initial=0.0) > 1e3:
                continue
            name = f"v{len(self.lines)}"
            self.lines.append(f"{name} = {expr}")
            self.values.append((name, value))
            return

    def expression(self):
        kind = self.one_of(KINDS)
        a, x = self.pick()
        if kind == "unary":
            return self.one_of(UNARY).format(a)
        if kind == "binary":
            b, _ = self.pick()
            return self.one_of(BINARY).format(a, b)
        if kind == "reduce":
            form = self.one_of(REDUCE)
            if x.ndim == 0:
                return form.format(a, "")
            axis = self.between(-1, x.ndim - 1)
            keep = self.flip()
            args = "" if axis < 0 else f", axis={axis}" + (", keepdims=True" if keep else "")
            return form.format(a, args.lstrip(", ") if form.startswith("{}.") else args)
        if kind == "index":
            if x.ndim == 0:
                return None
            parts = []
            for d in x.shape:
                choice = self.between(0, 4)
                if choice == 0:
                    parts.append(str(self.between(-d, d - 1)))
                elif choice == 1:
                    lo = self.between(0, d - 1)
                    parts.append(f"{lo}:")
                elif choice == 2:
                    parts.append("::-1" if self.flip() else ":")
                elif choice == 3:
                    parts.append(f":{self.between(1, d)}")
                else:
                    parts.append("None, :")
            return f"{a}[{', '.join(parts)}]"
        if kind == "gather":
            if x.ndim == 0:
                return None
            d = x.shape[0]
            idx = [self.between(-d, d - 1) for _ in range(self.between(1, 5))]
            return f"{a}[np.array({idx})]"
        if kind == "mask":  # boolean selection the way gradc supports it (a mask is data-dependent in shape)
            mask = [self.flip() for _ in range(x.shape[-1] if x.ndim else 1)]
            b, _ = self.pick()
            return f"np.where(np.array({mask}), {a}, {b})" if x.ndim else f"np.where({a} > {b}, {a}, {b})"
        if kind == "matmul":
            b, y = self.pick()
            if x.ndim == 0 or y.ndim == 0:
                return None
            if x.shape[-1] != (y.shape[-2] if y.ndim >= 2 else y.shape[0]):
                return f"{a} @ {b}.T" if y.ndim == 2 and y.shape[-1] == x.shape[-1] else None
            return f"{a} @ {b}"
        form = self.one_of(SHAPE_OPS)
        if x.ndim == 0 and "concatenate" in form:
            return None
        return form.format(a, a)

    def function(self):
        namespace = {"np": np}
        exec(self.source, namespace)
        return namespace["prog"]


@st.composite
def program(draw):
    return Program(draw)


def tolerance(dtype):
    return 2e-4 if dtype == np.float32 else 1e-9


def check_fd(prog, f, grads):
    """Gradients against central differences in float64; entries on a kink (steps disagree) are skipped."""
    tol = 2e-3 if prog.dtype == np.float32 else 2e-5
    with np.errstate(all="ignore"):
        for i, g in enumerate(grads):
            coarse = central_differences(f, prog.args, i, 1e-5)
            fine = central_differences(f, prog.args, i, 1e-6)
            smooth = np.abs(coarse - fine) <= 1e-5 * (1.0 + np.abs(fine))
            g = np.asarray(g, np.float64)
            scale = 1.0 + np.max(np.abs(fine), initial=0.0)
            bad = smooth & (np.abs(g - fine) > tol * scale)
            assert not np.any(bad), f"gradient {i} vs finite differences\n{prog.source}\n{g}\n{fine}"


def references(prog):
    """``(f, graph, raw, value, grads)``: the program, its graph, the unoptimised adjoint graph, and the
    interpreter's value and gradients on that graph."""
    f = prog.function()
    graph = trace(f, *prog.args)
    raw = ad.value_and_grad_graph(graph, [v.name for v in graph.inputs], name="prog_value_and_grad")
    outs = evaluate(raw, *prog.args)
    return f, graph, raw, outs[0], outs[1:]


def check_numpy(prog):
    """The emitted module (forward and value-and-gradient, optimised) against NumPy and the interpreter."""
    f, graph, raw, value, grads = references(prog)
    tol = tolerance(prog.dtype)
    with np.errstate(all="ignore"):
        direct = f(*prog.args)
    assert_close(value, direct, tol, "interpreter value vs NumPy", prog)
    n = len(prog.args)
    source = emit_module([Function("prog", optimize(graph), "Value."),
                          Function("prog_value_and_grad", optimize(raw), "Both.", returns=(0, tuple(range(1, n + 1))))])
    namespace = load_source(source, "prog")
    got_value, got_grads = namespace["prog_value_and_grad"](*prog.args)
    assert_close(got_value, value, tol, "emitted NumPy value", prog)
    forward = namespace["prog"](*prog.args)
    assert_close(forward, direct, tol, "emitted NumPy forward vs NumPy", prog)
    assert np.asarray(forward).dtype == np.asarray(direct).dtype, f"dtype of the value\n{prog.source}"
    for i, (g, want) in enumerate(zip(got_grads, grads)):
        assert_close(g, want, tol, f"emitted NumPy gradient {i}", prog)
        assert np.shape(g) == np.shape(prog.args[i])
    check_fd(prog, f, got_grads)


FUZZ = settings(max_examples=NUMPY_PROGRAMS, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@seed(SEED)
@FUZZ
@given(program())
def test_numpy_target(prog):
    check_numpy(prog)


# ---------------------------------------------------------------- the C target, a batch of programs per unit
def _c_batch(progs):
    """Compile ``progs`` into one C unit; returns the loaded ``(forward, value_and_grad)`` pairs."""
    from gradc.backends.c.build import _CFunction, build, function_names, output_names
    from gradc.backends.c.emit import emit_c

    functions, graphs = [], []
    for n, prog in enumerate(progs):
        graph = trace(prog.function(), *prog.args).replace(name=f"prog{n}")
        wrt = [v.name for v in graph.inputs]
        g = optimize(graph)
        vg = optimize(ad.value_and_grad_graph(graph, wrt, name=f"prog{n}_value_and_grad"))
        value, bars = output_names(graph, wrt)
        name, grad_name = function_names(graph.name)
        functions += [(g, name, [value], "value"), (vg, grad_name, [value] + bars, "gradient")]
        graphs.append((name, g, grad_name, vg))
    source, _ = emit_c(functions, ["random programs"], "GRADC_FUZZ_H")
    lib = ctypes.CDLL(build(source, "fuzz"))
    loaded = []
    for name, g, grad_name, vg in graphs:
        work = [int(re.search(rf"size_t {n}_work_size\(void\)\n{{\n    return (\d+);", source).group(1))
                for n in (name, grad_name)]
        loaded.append((_CFunction(lib, name, g, work[0]), _CFunction(lib, grad_name, vg, work[1])))
    return loaded


C_FUZZ = settings(max_examples=C_BATCHES, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.skipif(__import__("gradc.backends.c.build", fromlist=["find_compiler"]).find_compiler() is None,
                    reason="no C compiler")
@seed(SEED + 1)
@C_FUZZ
@given(st.lists(program(), min_size=C_BATCH, max_size=C_BATCH))
def test_c_target(progs):
    for prog, (forward, value_and_grad) in zip(progs, _c_batch(progs)):
        f, graph, raw, value, grads = references(prog)
        tol = tolerance(prog.dtype)
        outs = value_and_grad(*prog.args)
        assert_close(forward(*prog.args)[0], value, tol, "C forward", prog)
        assert_close(outs[0], value, tol, "C value", prog)
        for i, (g, want) in enumerate(zip(outs[1:], grads)):
            assert_close(g, want, tol, f"C gradient {i}", prog)
        check_fd(prog, f, outs[1:])
