"""float32 sums and means under torch and gradc, compared bit for bit (torch's summation order).

    /work/main/.venv/bin/python tests/facade/spec/gen_reductions.py torch > tests/facade/spec/reductions.expected.txt
    python tests/facade/spec/gen_reductions.py gradc.torch      # the same cases under gradc

Inputs are drawn by ``randn`` after a seed (the same numbers under both: see gen_random.py).
torch runs with one thread: a reduction of more than 32768 values split among threads adds the
threads' partial sums in another order, which the facade does not follow.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402
from gen_random import t  # noqa: E402

CASES, case = spec_runner.registry()
SHAPES = [((64, 100), 0), ((64, 100), 1), ((1000, 33), 0), ((33, 1000), 1), ((8, 5000), 1), ((2, 3, 4), (1, 2)),
          ((5, 6, 7), -1), ((5, 6, 7), 1), ((3, 7), 0), ((3, 7), 1), ((2, 50, 20), 1), ((300, 70), 0),
          ((12, 130), 0), ((257, 5), 0), ((40, 9), 0), ((9, 40), 1), ((4, 8, 16), (0, 1)), ((100000, 2), 0)]


@case
def sums_over_dims(T):
    T.set_num_threads(1)
    out = {}
    for i, (shape, dim) in enumerate(SHAPES):
        T.manual_seed(i)
        x = T.randn(*shape) * 10
        out[f"{shape}/{dim}/sum"] = t(x.sum(dim))
        out[f"{shape}/{dim}/sum_keepdim"] = t(x.sum(dim, keepdim=True))
        out[f"{shape}/{dim}/mean"] = t(x.mean(dim))
    return out


@case
def training_statistics(T):
    """What tutorials print: per-feature means of a batch, row sums of a batch of uniforms."""
    T.set_num_threads(1)
    T.manual_seed(0)
    batch = T.randn(64, 10)
    probs = T.rand(32, 10)
    return [t(batch.mean(0)), t(batch.sum(1)), t(probs.sum(dim=1)), t(batch.mean(dim=0, keepdim=True))]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
