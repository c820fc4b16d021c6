"""GradBench's own PyTorch lstm tool runs unchanged on the facade and validates against torch 2.13.0.

The tool is read from the GradBench mirror (``GRADBENCH_MIRROR``, default
/work/.mirror/gradbench+gradbench/repo, a bare git repository) into a temporary folder, never copied
into this repository; ``recurrent_gradbench_runner.py`` runs it with ``torch`` bound to torch or to
``gradc.torch`` (its objective, its jacobian, and the jacobian along a direction beside the central
difference of its objective). Skipped when the mirror or torch is absent.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.facade.gradbench_mirror import run_both

NEEDED = ["__init__.py", "wrap.py", "adbench", "tools/pytorch"]
SIZES = ["l=1 c=6", "l=2 c=12", "l=3 c=20"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return run_both(tmp_path_factory.mktemp("gradbench_lstm"), NEEDED, "tools/pytorch/lstm.py",
                    "recurrent_gradbench_runner.py")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("function", ["objective", "jacobian"])
def test_lstm_tool_matches_torch(outputs, function, size):
    key = f"{function} {size}"
    expect, got = np.ravel(outputs["torch"][key]), np.ravel(outputs["gradc"][key])
    assert expect.shape == got.shape and np.all(np.isfinite(expect))
    if function == "jacobian":  # main_params (2l x 4b) and extra_params (3 x b) flattened, b = 7 bits a character
        layers = int(size.split()[0][2:])
        assert got.size == 2 * layers * 4 * 7 + 3 * 7
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("size", SIZES)
def test_lstm_tool_jacobian_matches_central_differences(outputs, size):
    along, difference = outputs["gradc"][f"directional {size}"]
    assert along == pytest.approx(difference, rel=1e-6, abs=1e-9)
