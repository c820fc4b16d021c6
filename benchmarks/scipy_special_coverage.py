"""Which public ``scipy.special`` functions gradc differentiates: each is called on a traced float64 array (its
other operands 0.5, so an order or degree argument is traced too and refused by design) under ``gradc.grad``,
and the refusals are listed with their first line.

Run from the repository root: ``python benchmarks/scipy_special_coverage.py``.
"""
from __future__ import annotations

import inspect

import numpy as np
import scipy.special as special

import gradc


def probe(fn):
    """A scalar loss of ``fn`` on a traced argument, or None where ``fn`` has no float64 loop."""
    if isinstance(fn, np.ufunc):
        if not any(t.split("->")[0] == "d" * fn.nin for t in fn.types):
            return None
        others = fn.nin - 1  # read here: when tracing, gradc routes ``fn`` to its own function, which has no nin

        def loss(v):
            out = fn(*([0.5 + 0 * v] * others), v)
            return np.sum(out[0] if isinstance(out, tuple) else out)
        return loss

    def loss(v):
        out = fn(v)
        return np.sum(out[0] if isinstance(out, tuple) else out)
    return loss


def main() -> None:
    x = np.array([0.3, 0.6])
    differentiated, refused, skipped = [], [], []
    for name in sorted(dir(special)):
        fn = getattr(special, name)
        if name.startswith("_") or inspect.ismodule(fn) or inspect.isclass(fn) or not callable(fn):
            continue
        loss = probe(fn)
        if loss is None:
            skipped.append(name)
            continue
        try:
            gradc.grad(loss)(x)
            differentiated.append(name)
        except Exception as error:  # a refusal, or SciPy's own complaint about the probe's arguments
            refused.append(f"{name} | {type(error).__name__} | {str(error).splitlines()[0][:110]}")
    print(f"differentiated {len(differentiated)}:", " ".join(differentiated))
    print(f"refused {len(refused)}:")
    print("\n".join(refused))
    print("no float64 loop:", " ".join(skipped))


if __name__ == "__main__":
    main()
