"""An array filled in a loop, as it is written by hand: gradc keeps the loop and writes the slot in place."""
import numpy as np


def smooth(x):
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = 0.5 * out[i - 1] + x[i] * x[i]
    return np.sum(out)


if __name__ == "__main__":
    import gradc

    x = np.linspace(0.1, 1.0, 1000)
    grad = gradc.grad(smooth)(x)
    h = 1e-6
    e = np.zeros_like(x)
    e[500] = h
    difference = (smooth(x + e) - smooth(x - e)) / (2 * h)
    print(f"d smooth / d x[500]: gradc {grad[500]:.10f}, central difference {difference:.10f}")
