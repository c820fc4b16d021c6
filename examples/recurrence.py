"""An array filled in a loop, as it is written by hand: gradc keeps the loop and writes the slot in place."""
import numpy as np


def smooth(x):
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = 0.5 * out[i - 1] + x[i] * x[i]
    return np.sum(out)
