"""Shared by the gen_*.py conformance scripts: one ``<case>: <repr(result)>`` line per case.

    /tmp/torchenv/bin/python tests/facade/spec/gen_optim.py torch > tests/facade/spec/optim.expected.txt
    python tests/facade/spec/gen_optim.py gradc.torch      # the same cases under gradc

A case is ``case_name(T) -> plain Python value`` (lists, floats at full precision, strings),
where ``T`` is the module standing in for torch. The tests under tests/facade load a script,
run its cases with gradc and compare with the recorded torch output (``compare``).
"""
import ast
import importlib
import math
import sys
import warnings


def registry():
    """A ``(cases, decorator)`` pair for one script."""
    cases = []

    def case(fn):
        cases.append(fn)
        return fn
    return cases, case


def run_case(fn, T):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(T)
    except Exception as e:  # noqa: BLE001 - recorded as the case's result
        return "CASE RAISED %s: %s" % (type(e).__name__, e)
    finally:
        T.set_grad_enabled(True)


def main(cases, argv):
    T = importlib.import_module(argv[1] if len(argv) > 1 else "torch")
    importlib.import_module(T.__name__ + ".utils.data")
    for fn in cases:
        print("%s: %r" % (fn.__name__, run_case(fn, T)))
    return 0


def read_expected(path):
    """``{case: value}`` from a recorded output file."""
    out = {}
    with open(path) as f:
        for line in f:
            name, _, text = line.rstrip("\n").partition(": ")
            out[name] = ast.literal_eval(text)
    return out


def compare(expected, actual, rtol, path="result"):
    """Differences between two results: numbers within ``rtol`` (relative, with an absolute floor), all else equal."""
    if isinstance(expected, float) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        if math.isnan(expected) and math.isnan(actual):
            return []
        if math.isclose(expected, actual, rel_tol=rtol, abs_tol=rtol * 1e-2):
            return []
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {actual!r}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            diffs += compare(e, a, rtol, f"{path}[{i}]")
        return diffs
    if isinstance(expected, dict) and isinstance(actual, dict) and expected.keys() == actual.keys():
        diffs = []
        for k in expected:
            diffs += compare(expected[k], actual[k], rtol, f"{path}[{k!r}]")
        return diffs
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


if __name__ == "__main__":
    sys.exit("run one of the gen_*.py scripts")
