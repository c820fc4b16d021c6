"""Run GradBench's PyTorch tools (lse, gmm, kmeans, ba) from an extracted copy of the GradBench sources.

``python gradbench_tools.py <gradbench python dir> torch|gradc`` imports the tools with ``torch``
bound to real torch or to gradc's facade, runs each tool function on seeded inputs and prints
their outputs as JSON. The tools are GradBench's own files, never copied into this repository:
``tests/facade/test_gradbench_tools.py`` extracts them from the mirror to a temporary folder.
"""
from __future__ import annotations

import json
import sys

import numpy as np


def inputs():
    """Seeded inputs in each eval's input format (small sizes; the tools take any size)."""
    rng = np.random.default_rng(7)
    runs = {"min_runs": 1, "min_seconds": 0}
    d, k, n = 4, 3, 6
    gmm = {"d": d, "k": k, "n": n, "x": rng.normal(size=(n, d)).tolist(), "m": 0, "gamma": 1.0,
           "alpha": rng.normal(size=k).tolist(), "mu": rng.normal(size=(k, d)).tolist(),
           "q": rng.normal(size=(k, d)).tolist(), "l": rng.normal(size=(k, d * (d - 1) // 2)).tolist(), **runs}
    ba = {"n": 3, "m": 5, "p": 7, "cam": rng.normal(scale=0.3, size=11).tolist(),
          "x": rng.normal(size=3).tolist(), "w": float(rng.uniform(0.5, 1.5)),
          "feat": rng.normal(size=2).tolist(), **runs}
    ba["cam"][5] = 3.0  # the point lies in front of the camera
    return {
        "lse": {"x": rng.normal(size=9).tolist(), **runs},
        "kmeans": {"points": rng.normal(size=(40, 3)).tolist(), "centroids": rng.normal(size=(4, 3)).tolist(), **runs},
        "gmm": gmm,
        "ba": ba,
    }


FUNCTIONS = {"lse": ("primal", "gradient"), "kmeans": ("cost", "dir"), "gmm": ("objective", "jacobian"),
             "ba": ("objective", "jacobian")}


def main(root: str, which: str) -> None:
    sys.path.insert(0, root)
    if which == "gradc":
        import gradc.torch
        sys.modules["torch"] = gradc.torch
    import importlib
    out = {}
    data = inputs()
    for tool, names in FUNCTIONS.items():
        module = importlib.import_module(f"gradbench.tools.pytorch.{tool}")
        for name in names:
            result = getattr(module, name).wrapped(data[tool])
            out[f"{tool}.{name}"] = result["output"]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
