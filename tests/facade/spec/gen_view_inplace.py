#!/usr/bin/env python3
"""Record torch's outcomes of seeded random view + in-place programs (``view_programs``) as JSON.

    python tests/facade/spec/gen_view_inplace.py > tests/facade/spec/view_inplace.expected.json

Needs torch 2.13.0 and gradc importable (gradc's tensors choose each valid next step; torch runs
the programs). tests/facade/test_view_inplace.py replays every program under gradc and compares.
"""
import json
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import view_programs as vp  # noqa: E402

PROGRAMS = 240
STEPS = 12


def program(seed, T):
    """The steps of program ``seed``: up to ``STEPS`` random steps, stopping after the first that raises."""
    rng = random.Random(seed)
    leaves, env, steps = vp.leaves(T), [], []
    for _ in range(STEPS):
        step = vp.choose_step(rng.randrange, env)
        steps.append(step)
        try:
            vp.run_step(T, env, leaves, step)
        except Exception:  # noqa: BLE001 - the program ends at its first error
            break
    return steps


def main():
    import torch

    import gradc.torch
    warnings.simplefilter("ignore")
    cases = []
    for seed in range(PROGRAMS):
        steps = program(seed, gradc.torch)
        cases.append({"seed": seed, "steps": steps, "torch": vp.run(torch, steps)})
    json.dump({"torch": torch.__version__, "cases": cases}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
