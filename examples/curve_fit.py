"""Fit the model curve ``a * exp(-k t) + c`` to noisy data by least squares.

Run it: ``python examples/curve_fit.py``. The residual sum of squares is written
in NumPy; gradc compiles its gradient with respect to the three parameters,
and gradient descent with Nesterov momentum recovers the parameters used to
generate the data. The emitted code is printed at the end:
it is plain NumPy a person can read.
"""
import numpy as np

import gradc


def sse(t, y, a, k, c):
    """Sum of squared residuals of ``a * exp(-k t) + c`` against the data ``y``."""
    model = a * np.exp(-k * t) + c
    return np.sum((model - y) ** 2)


def main(steps=4000, lr=2e-3, momentum=0.9):
    rng = np.random.default_rng(0)
    true = (2.5, 1.3, 0.5)
    t = np.linspace(0.0, 4.0, 40)
    y = true[0] * np.exp(-true[1] * t) + true[2] + 0.02 * rng.standard_normal(t.shape)
    compiled = gradc.compile(sse, t, y, 1.0, 1.0, 0.0, wrt=("a", "k", "c"))
    p = np.array([1.0, 0.5, 0.0])
    velocity = np.zeros(3)
    first = compiled.forward(t, y, *p)
    for _ in range(steps):
        ahead = p + momentum * velocity
        _, grads = compiled.value_and_grad(t, y, *ahead)
        velocity = momentum * velocity - lr * np.array(grads)
        p = p + velocity
    last = compiled.forward(t, y, *p)
    print(f"sum of squares: {first:.4f} -> {last:.6f}")
    print(f"fitted  a={p[0]:.3f}  k={p[1]:.3f}  c={p[2]:.3f}")
    print(f"true    a={true[0]:.3f}  k={true[1]:.3f}  c={true[2]:.3f}")
    print("\n# the gradient gradc emitted:")
    source = compiled.source
    print(source[source.index("def sse_grad"):source.index("def sse_value_and_grad")].rstrip())
    return p, true


if __name__ == "__main__":
    main()
