"""The eager Tensor facade (forward + backward) against PyTorch eager and hand-written NumPy.

Workloads seed and logreg, float64, same data as ``run.py``. Each step is what a
training loop does: clear the parameters' grads, compute the loss, ``backward()``.
PyTorch is timed only when ``torch==2.13.0`` is importable (install that pinned CPU
build; never an unpinned torch). All callables run interleaved in this one process.

    python benchmarks/facade.py [--repeat 9] [--min-time 0.05]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc  # noqa: E402
from benchmarks.run import check, interleaved  # noqa: E402
from benchmarks.workloads import make_data, reference  # noqa: E402


def tensor_step(lib, name, params, consts):
    """A training-loop step written once against a torch-like module ``lib``."""
    f = lib.nn.functional
    x = lib.tensor(consts["x"], dtype=lib.float64)
    y = lib.tensor(consts["y"], dtype=lib.float64)
    w, b = (lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in params)

    def step():
        w.grad = None
        b.grad = None
        loss = f.binary_cross_entropy_with_logits(lib.matmul(x, w) + b, y)
        loss.backward()
        return loss, (w.grad, b.grad)

    def as_numpy(result):
        loss, grads = result
        return float(loss.detach()), tuple(g.detach().numpy() for g in grads)
    return step, as_numpy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args(argv)
    try:
        import torch
        torch.set_num_threads(1)
        peers = {"torch": torch} if torch.__version__.startswith("2.13.0") else {}
    except ImportError:
        peers = {}
    print(f"torch: {'2.13.0 (1 thread)' if peers else 'not installed: pip install torch==2.13.0'}")
    print("| workload | hand NumPy µs | gradc facade µs | torch µs | facade ÷ torch |")
    print("|---|---:|---:|---:|---:|")
    for name in ("seed", "logreg"):
        params, consts = make_data(name)
        ref = reference(name, consts)
        expected = ref(*params)
        steps = {"gradc": tensor_step(gradc, name, params, consts)}
        steps.update({k: tensor_step(lib, name, params, consts) for k, lib in peers.items()})
        for label, (step, as_numpy) in steps.items():
            check(f"{name}/{label}", expected, as_numpy(step()))
        labels = ["numpy"] + list(steps)
        fns = [lambda ref=ref, params=params: ref(*params)] + [s for s, _ in steps.values()]
        times = dict(zip(labels, interleaved(fns, a.min_time, a.repeat)))
        torch_us = times.get("torch")
        ratio = f"{times['gradc'] / torch_us:.2f}" if torch_us else "-"
        torch_text = f"{torch_us * 1e6:.1f}" if torch_us else "-"
        print(f"| {name} | {times['numpy'] * 1e6:.1f} | {times['gradc'] * 1e6:.1f} | {torch_text} | {ratio} |")


if __name__ == "__main__":
    main()
