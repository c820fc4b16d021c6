"""GradBench's own PyTorch tools (lse, gmm, kmeans, ba) run unchanged on the facade and agree with torch 2.13.0.

The tools are read from the GradBench mirror (``GRADBENCH_MIRROR``, default
/work/.mirror/gradbench+gradbench/repo, a bare git repository) into a temporary folder, never copied
into this repository; ``gradbench_tools.py`` runs them with ``torch`` bound to torch or to
``gradc.torch``. Skipped when the mirror or torch is absent.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.facade.gradbench_mirror import run_both

NEEDED = ["__init__.py", "wrap.py", "adbench", "tools/__init__.py", "tools/pytorch"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return run_both(tmp_path_factory.mktemp("gradbench"), NEEDED, "tools/pytorch/lse.py", "gradbench_tools.py")


def _flat(value):
    if isinstance(value, dict):
        return np.concatenate([_flat(value[k]) for k in sorted(value)])
    return np.ravel(np.asarray(value, dtype=np.float64))


@pytest.mark.parametrize("function", ["lse.primal", "lse.gradient", "kmeans.cost", "kmeans.dir", "gmm.objective",
                                      "gmm.jacobian", "ba.objective", "ba.jacobian"])
def test_tool_matches_torch(outputs, function):
    expect, got = _flat(outputs["torch"][function]), _flat(outputs["gradc"][function])
    assert expect.shape == got.shape
    assert np.all(np.isfinite(expect))
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-12)
