"""The PyTorch autograd tutorial's one-layer network, written in plain NumPy.

Run it: ``python examples/logistic.py``. gradc traces ``loss``, differentiates
it with respect to ``w`` and ``b``, and runs the generated NumPy code.
"""
import numpy as np

import gradc


def loss(x, y, w, b):
    """Binary cross-entropy with logits of a linear layer, as in the tutorial."""
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def main():
    rng = np.random.default_rng(0)
    x = np.ones(5)            # input tensor
    y = np.zeros(3)           # expected output
    w = rng.standard_normal((5, 3))
    b = rng.standard_normal(3)
    w_bar, b_bar = gradc.grad(loss, wrt=("w", "b"))(x, y, w, b)
    print("loss  =", loss(x, y, w, b))
    print("w_bar =\n", w_bar)
    print("b_bar =", b_bar)
    return w_bar, b_bar


if __name__ == "__main__":
    main()
