"""Time GradBench's hand-written C++ (its ``manual`` tool) on this machine, for ``HAND_CPP_MS`` in gradbench.py.

GradBench's sources are read from a git mirror (``--mirror``, a bare repository) into a temporary directory,
never into this repository; each tool is built the way GradBench's ``cpp/common.mk`` builds it (``-std=c++17
-O3 -march=native``, single-threaded) and run on the input our port generates (``tests/corpus/gradbench``, the
same shapes and distributions), through GradBench's own timing loop (``evaluate`` nanoseconds per run). It
needs ``g++`` and nlohmann's ``json.hpp`` (Debian: ``nlohmann-json3-dev``).

    python benchmarks/gradbench_manual.py --evals ode,det,kmeans,lstm

prints, per eval, the median and the minimum microseconds of the derivative (and of the primal, for scale).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests", "corpus", "gradbench")]

import gb_det  # noqa: E402
import gb_kmeans  # noqa: E402
import gb_lstm  # noqa: E402
import gb_ode  # noqa: E402

MIRROR = "/work/.mirror/gradbench+gradbench/repo"


def _lists(value):
    return np.asarray(value).tolist()


# eval: (input JSON at the eval's smallest default size, derivative function, primal function, runs)
def inputs() -> dict:
    lstm = gb_lstm.generate(gb_lstm.DEFAULT_SIZE)
    kmeans = gb_kmeans.generate(gb_kmeans.DEFAULT_SIZE)
    ode = gb_ode.generate(gb_ode.DEFAULT_SIZE)
    det = gb_det.generate(gb_det.DEFAULT_SIZE)
    return {
        "lstm": ({k: _lists(lstm[k]) for k in ("main_params", "extra_params", "state", "sequence")},
                 "jacobian", "objective", 50),
        "kmeans": ({"points": _lists(kmeans["points"]), "centroids": _lists(kmeans["centroids"])}, "dir", "cost",
                   2000),
        "ode": ({"x": _lists(ode["x"]), "s": int(ode["s"])}, "gradient", "primal", 20000),
        "det": ({"A": _lists(det["A"]), "ell": int(det["ell"])}, "gradient", "primal", 20000),
    }


def extract(mirror: str, into: str) -> str:
    """GradBench's ``cpp`` and ``tools/manual`` trees from the bare ``mirror`` into ``into``."""
    archive = subprocess.run(["git", f"--git-dir={mirror}", "archive", "HEAD", "cpp", "tools/manual"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "x", "-C", into], input=archive, check=True)
    with open(os.path.join(into, "cpp", "json.hpp"), "w") as f:  # GradBench downloads it; the system's is the same
        f.write("#include <nlohmann/json.hpp>\n")
    return os.path.join(into, "tools", "manual")


def run_times(binary: str, data: str, function: str) -> list:
    out = subprocess.run([binary, data, function], capture_output=True, text=True, check=True).stdout
    return [json.loads(line)["nanoseconds"] / 1e3 for line in out.splitlines() if '"evaluate"' in line]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evals", default="ode,det,kmeans,lstm")
    ap.add_argument("--mirror", default=MIRROR, help="a bare git mirror of github.com/gradbench/gradbench")
    a = ap.parse_args(argv)
    wanted = [e for e in a.evals.split(",") if e]
    data = inputs()
    print("| eval | derivative median us | min us | primal median us |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        manual = extract(a.mirror, tmp)
        for name in wanted:
            values, derivative, primal, runs = data[name]
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as f:
                json.dump(dict(values, min_runs=runs), f)
            binary = os.path.join(tmp, f"{name}.bin")
            subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-Wno-unknown-pragmas",
                            f"-I{os.path.join(tmp, 'cpp')}", "-o", binary, os.path.join(manual, f"{name}.cpp"),
                            "-lm"], check=True, cwd=manual)
            d, p = run_times(binary, path, derivative), run_times(binary, path, primal)
            print(f"| {name} | {statistics.median(d):.4g} | {min(d):.4g} | {statistics.median(p):.4g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
