"""Differential testing of integer arithmetic: random programs with ``%``, ``//``, shifts, bitwise ops,
comparisons and mixed int/float arithmetic (negative operands and zero divisors included), index
arithmetic inside loops (``x[(i + 1) % n]``, ``x[n - 1 - i]``), index assignment in loops
(``out[i] = ...``, ``out[(i + 2) % n] += ...``), branches on integers (``if i % 2 == 0:`` in a loop,
``if m > 2:`` on an int argument) and int64 array arguments.

Every program runs four ways: the user's Python function itself (plain NumPy, not traced), the emitted
NumPy module, the C target (one C unit per batch of ``C_BATCH`` programs) and central finite
differences of the Python function for the gradient with respect to its float inputs. A program
gradc refuses is not a mismatch, but its error must be a ``GradcError`` (never an internal error),
and refusals are counted by kind; a wrong value or gradient, or a C build failure, fails the test.

CI runs a fixed seed at modest counts; ``GRADC_FUZZ_LONG=1`` runs ``GRADC_INT_FUZZ_N`` (default
10,000) programs on each target; ``GRADC_FUZZ_SEED=N`` explores other programs. The counts are
printed (``pytest -s``) and, with ``GRADC_FUZZ_REPORT=path``, written there as JSON.
"""
import collections
import ctypes
import json
import linecache
import os
import re
import time
import warnings

import numpy as np
import pytest
from integer_programs import generate

from gradc.backends.c.build import find_compiler
from gradc.errors import GradcError
from gradc.ir.interpret import evaluate

LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
PROGRAMS = int(os.environ.get("GRADC_INT_FUZZ_N", 10000 if LONG else 150))
C_BATCH = 50  # programs per C unit: one build per batch
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261127))


class Tally:
    """Counts of one run: programs checked per target, refusals by kind, failures with their programs."""

    def __init__(self):
        self.checked = collections.Counter()
        self.refused = collections.Counter()
        self.failures: list = []
        self.start = time.perf_counter()

    def refuse(self, target, err):
        if not isinstance(err, GradcError):
            self.fail(target, "internal error", err)
            return
        if "C compiler" in str(err) and "failed" in str(err):
            self.fail(target, "C build failure", err)
            return
        first = str(err).splitlines()[0]
        first = re.sub(r"\b[tv]\d+\b|\d+", "#", first)[:90]  # the kind, not the instance
        self.refused[f"{type(err).__name__}: {first}"] += 1

    def fail(self, target, what, detail, prog=None):
        self.failures.append(f"[{target}] {what}: {detail}\n{prog.source if prog else ''}")

    def progress(self, made):
        """With ``GRADC_FUZZ_REPORT``: the counts so far, on stdout and in the report (a long run can be read)."""
        if os.environ.get("GRADC_FUZZ_REPORT"):
            print(f"{made} programs drawn: {dict(self.checked)} checked, {sum(self.refused.values())} refused, "
                  f"{len(self.failures)} failures, {time.perf_counter() - self.start:.0f} s", flush=True)
            self.report("progress", quiet=True)

    def report(self, name, quiet=False):
        lines = [f"{name}: {dict(self.checked)} programs checked, {sum(self.refused.values())} refused, "
                 f"{len(self.failures)} failures, {time.perf_counter() - self.start:.0f} s"]
        lines += [f"  refused {n} x {kind}" for kind, n in self.refused.most_common()]
        if not quiet:
            print("\n".join(lines), flush=True)
        path = os.environ.get("GRADC_FUZZ_REPORT")
        if path:
            with open(f"{path}.{name}.json", "w") as out:
                json.dump({"checked": dict(self.checked), "refused": dict(self.refused),
                           "failures": self.failures, "seconds": time.perf_counter() - self.start}, out, indent=1)


def function_of(prog):
    """The program as a Python function whose source the capture can read (a ``linecache`` entry)."""
    filename = f"<gradc-int-fuzz-{prog.key}>"
    linecache.cache[filename] = (len(prog.source), None, prog.source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(prog.source, filename, "exec"), namespace)
    return namespace["prog"]


def close(got, want, tol=1e-9):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    return bool(np.all(np.abs(got - want) <= tol * (1.0 + np.max(np.abs(want), initial=0.0))))


def central_differences(f, args, i, h):
    x = np.asarray(args[i], np.float64)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        hi, lo = list(args), list(args)
        hi[i], lo[i] = x.copy(), x.copy()
        hi[i][j] += h
        lo[i][j] -= h
        g[j] = (f(*hi) - f(*lo)) / (2 * h)
    return g


def fd_mismatch(prog, f, grads):
    """None, or which gradient disagrees with central differences (entries on a kink are skipped)."""
    for n, (i, g) in enumerate(zip(prog.float_args, grads)):
        coarse = central_differences(f, prog.args, i, 1e-5)
        fine = central_differences(f, prog.args, i, 1e-6)
        smooth = np.abs(coarse - fine) <= 1e-5 * (1.0 + np.abs(fine))
        scale = 1.0 + np.max(np.abs(fine), initial=0.0)
        bad = smooth & (np.abs(np.asarray(g, np.float64) - fine) > 2e-5 * scale)
        if np.any(bad):
            return f"gradient {n} {np.asarray(g).tolist()} vs finite differences {fine.tolist()}"
    return None


def prepare(prog, tally):
    """``(f, graph, optimised graph, optimised value-and-grad graph)``, or None when gradc refuses it."""
    from gradc.passes import optimize
    from gradc.trace import trace
    from gradc.transforms import reverse as ad

    f = function_of(prog)
    try:
        graph = trace(f, *prog.args)
        wrt = [graph.inputs[i].name for i in prog.float_args]
        vg = optimize(ad.value_and_grad_graph(graph, wrt, name="prog_value_and_grad"))
        return f, graph, optimize(graph), vg
    except Exception as err:  # noqa: BLE001 (a refusal must be a GradcError: Tally.refuse checks)
        tally.refuse("trace", err)
        if not isinstance(err, GradcError):
            tally.failures[-1] += prog.source
        return None


def check_numpy(prog, prepared, tally):
    from gradc.backends.numpy import Function, emit_module, load_source

    f, graph, g, vg = prepared
    want = prog.value
    try:
        source = emit_module([Function("prog", g, "Value."),
                              Function("prog_value_and_grad", vg, "Both.",
                                       returns=(0, tuple(range(1, len(prog.float_args) + 1))))])
        namespace = load_source(source, "prog")
        forward = namespace["prog"](*prog.args)
        value, grads = namespace["prog_value_and_grad"](*prog.args)
    except Exception as err:  # noqa: BLE001
        tally.refuse("numpy", err)
        return
    tally.checked["numpy"] += 1
    interpreted = evaluate(graph, *prog.args)[0]
    for what, got in [("forward", forward), ("value", value), ("interpreter", interpreted)]:
        if not close(got, want):
            tally.fail("numpy", f"{what} {got} != Python's {want}", "", prog)
            return
    mismatch = fd_mismatch(prog, f, grads)
    if mismatch:
        tally.fail("numpy", mismatch, "", prog)
    prog.numpy_grads = grads


def c_functions(entries):
    """One C unit of ``entries`` (``(prog, graph, vg)``); returns the loaded ``(forward, value_and_grad)``."""
    from gradc.backends.c.build import _CFunction, build, function_names, output_names
    from gradc.backends.c.control import loop_limits
    from gradc.backends.c.emit import emit_c

    functions, names = [], []
    for n, (prog, g, vg) in enumerate(entries):
        g, vg = g.replace(name=f"prog{n}"), vg.replace(name=f"prog{n}_value_and_grad")
        wrt = [g.inputs[i].name for i in prog.float_args]
        value, bars = output_names(g, wrt)
        name, grad_name = function_names(g.name)
        functions += [(g, name, [value], "value"), (vg, grad_name, [value] + bars, "gradient")]
        names.append((name, g, grad_name, vg))
    source, _ = emit_c(functions, ["random integer programs"], "GRADC_INT_FUZZ_H")
    lib = ctypes.CDLL(build(source, "intfuzz"))
    loaded = []
    for name, g, grad_name, vg in names:
        pair = []
        for fname, graph in ((name, g), (grad_name, vg)):
            work = int(re.search(rf"size_t {fname}_work_size\(void\)\n{{\n    return (\d+);", source).group(1))
            pair.append(_CFunction(lib, fname, graph, work, loop_limits(graph, None)))
        loaded.append(pair)
    return loaded


def emits(entry) -> Exception | None:
    """The error the C emitter raises on one program alone, else None."""
    from gradc.backends.c.emit import emit_c

    _, g, vg = entry
    try:
        emit_c([(g, "f", ["value"], ""), (vg, "f_grad", ["value"] + [f"b{i}" for i in range(len(vg.outputs) - 1)],
                                           "")], [""], "G")
    except Exception as err:  # noqa: BLE001
        return err
    return None


def check_c(batch, tally):
    """``batch``: ``(prog, prepared)`` pairs; programs the emitter refuses are counted and left out."""
    entries = [(prog, g, vg) for prog, (_, _, g, vg) in batch]
    try:
        loaded = c_functions(entries)
    except Exception:  # noqa: BLE001 (find the program it came from, alone)
        kept = []
        for entry in entries:
            err = emits(entry)
            if err is None:
                kept.append(entry)
            else:
                tally.refuse("c", err)
                if tally.failures and not isinstance(err, GradcError):
                    tally.failures[-1] += entry[0].source
        entries = kept
        try:
            loaded = c_functions(entries) if entries else []
        except Exception as err:  # noqa: BLE001 (every program emits alone: the unit fails to build)
            tally.fail("c", "C build failure", err, entries[0][0])
            return
    for (prog, _, _), (forward, value_and_grad) in zip(entries, loaded):
        try:
            fwd = forward(*prog.args)[0]
            outs = value_and_grad(*prog.args)
        except Exception as err:  # noqa: BLE001
            tally.refuse("c", err)
            continue
        tally.checked["c"] += 1
        if not close(fwd, prog.value) or not close(outs[0], prog.value):
            tally.fail("c", f"value {fwd}, {outs[0]} != Python's {prog.value}", "", prog)
            continue
        mismatch = fd_mismatch(prog, function_of(prog), outs[1:])
        if mismatch is None and getattr(prog, "numpy_grads", None) is not None:
            if not all(close(a, b) for a, b in zip(outs[1:], prog.numpy_grads)):
                mismatch = f"gradient {[np.asarray(o).tolist() for o in outs[1:]]} != NumPy target's"
        if mismatch:
            tally.fail("c", mismatch, "", prog)


def run(targets, count, seed):
    rng = np.random.default_rng(seed)
    tally = Tally()
    batch = []
    made = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy's warnings on x % 0, gradc's on frozen reads
        while made < count:
            prog = generate(rng, made)
            if prog is None:
                continue  # the Python function itself raised or gave a non-finite value: drawn again
            made += 1
            prepared = prepare(prog, tally)
            if prepared is None:
                continue
            if "numpy" in targets:
                check_numpy(prog, prepared, tally)
            if "c" in targets:
                batch.append((prog, prepared))
                if len(batch) == C_BATCH:
                    check_c(batch, tally)
                    batch = []
            if made % C_BATCH == 0:
                tally.progress(made)
        if batch:
            check_c(batch, tally)
    return tally


def test_numpy_and_c_targets_agree_with_python():
    targets = ("numpy", "c") if find_compiler() is not None else ("numpy",)
    tally = run(targets, PROGRAMS, SEED)
    tally.report("integer programs")
    assert not tally.failures, f"{len(tally.failures)} failures; the first:\n" + "\n".join(tally.failures[:5])
    for target in targets:
        assert tally.checked[target] >= 0.6 * PROGRAMS, f"too few programs ran on {target}: {tally.refused}"


@pytest.mark.parametrize("source, args, want", [
    # issue 22: precedence and type of k % 3 when k is an int64 array (the C target gave 26.7)
    ("def prog(x, k):\n    return np.sum(x * ((k + 1) % 3))\n",
     (np.array([0.5, 1.0, 1.5, 2.0]), np.array([0, 1, 2, 3])), 4.5),
    # issue 22: the C target read past the end of x ((i + 1 % n) for (i + 1) % n)
    ("def prog(x):\n    n = x.shape[0]\n    out = np.zeros(n)\n    for i in range(n):\n"
     "        out[i] = x[i] ** 2 * x[(i + 1) % n]\n    return np.sum(out)\n", (np.array([0.5, 1.0, 1.5, 2.0]),), 8.25),
    # issue 22: double % int did not compile
    ("def prog(x):\n    s = 0.0\n    for i in range(4):\n        s = s + x[i] * ((i * 3) // 2 % 5)\n    return s\n",
     (np.array([0.5, 1.0, 1.5, 2.0]),), 13.5),
])
def test_issue_examples(source, args, want):
    from integer_programs import Program

    prog = Program(source, list(args), "issue")
    assert close(prog.value, want)
    tally = Tally()
    prepared = prepare(prog, tally)
    assert prepared is not None, tally.refused
    check_numpy(prog, prepared, tally)
    if find_compiler() is not None:
        check_c([(prog, prepared)], tally)
    assert not tally.failures and not tally.refused, tally.failures + list(tally.refused)
    assert tally.checked["c" if find_compiler() else "numpy"] == 1


def test_the_checks_can_fail():
    """A wrong gradient and a wrong value are caught (the comparisons are not vacuous)."""
    from integer_programs import Program

    prog = Program("def prog(x, k):\n    return np.sum(x * (k % 3))\n", [np.array([1.0, 2.0]), np.array([-4, 5])],
                   "probe")
    assert fd_mismatch(prog, function_of(prog), [np.array([2.0, 1.0])]) is not None  # C's -4 % 3 is -1
    assert fd_mismatch(prog, function_of(prog), [np.array([2.0, 2.0])]) is None
    assert not close(1.0, 1.0 + 1e-6)
    tally = Tally()
    tally.refuse("c", KeyError("internal"))
    tally.refuse("trace", GradcError("refused for a reason"))
    assert len(tally.failures) == 1 and sum(tally.refused.values()) == 1
