"""Train a small multilayer perceptron with a gradient compiled by gradc.

Run it: ``python examples/mlp_train.py``. A two-layer tanh network learns to
classify points of two interleaved spirals-like blobs (a synthetic dataset),
with softmax cross-entropy loss and plain full-batch gradient descent. The
loss is written in plain NumPy; gradc emits its gradient once, and every
training step runs only the generated code.
"""
import numpy as np

import gradc


def loss(x, labels, w1, b1, w2, b2):
    """Mean softmax cross-entropy of a tanh MLP; ``labels`` are integer classes."""
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    m = np.max(z, axis=1, keepdims=True)
    log_norm = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
    return np.mean(log_norm - z[np.arange(x.shape[0]), labels])


def make_data(rng, n=200, classes=3):
    """Points around ``classes`` centres on a circle, with noise."""
    labels = rng.integers(0, classes, size=n)
    angles = 2 * np.pi * labels / classes
    centres = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return centres + 0.45 * rng.standard_normal((n, 2)), labels


def accuracy(x, labels, w1, b1, w2, b2):
    z = np.tanh(x @ w1 + b1) @ w2 + b2
    return float(np.mean(np.argmax(z, axis=1) == labels))


def main(steps=300, lr=0.5, hidden=16):
    rng = np.random.default_rng(0)
    x, labels = make_data(rng)
    params = [0.5 * rng.standard_normal((2, hidden)), np.zeros(hidden),
              0.5 * rng.standard_normal((hidden, 3)), np.zeros(3)]
    step_fn = gradc.value_and_grad(loss, wrt=("w1", "b1", "w2", "b2"))
    history = []
    for step in range(steps + 1):
        value, grads = step_fn(x, labels, *params)
        history.append(value)
        if step % 50 == 0:
            print(f"step {step:4d}  loss {value:.4f}  accuracy {accuracy(x, labels, *params):.3f}")
        params = [p - lr * g for p, g in zip(params, grads)]
    print(f"loss went from {history[0]:.4f} to {history[-1]:.4f}")
    return history


if __name__ == "__main__":
    main()
