"""``torch.svd`` (the pre-``linalg`` form: ``V`` not ``Vh``, ``some``, ``compute_uv``) against real torch 2.13.0 on
seeded random matrices (values up to the singular vectors' signs, shapes, node names) and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as gt

real = pytest.importorskip("torch")


@pytest.mark.parametrize("seed", range(8))
def test_svd_matches_torch(seed):
    rng = np.random.default_rng(seed)
    shape = [(3, 2), (2, 3), (3, 3), (2, 4, 3)][seed % 4]
    data = rng.standard_normal(shape)
    some = seed % 3 != 0
    got, want = (T.svd(T.tensor(data), some=some) for T in (gt, real))
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
    np.testing.assert_allclose(got.S.numpy(), want.S.numpy(), rtol=1e-12)
    u, s, v = (t.numpy() for t in got)
    k = s.shape[-1]
    recon = (u[..., :k] * s[..., None, :]) @ np.swapaxes(v[..., :k], -1, -2)
    np.testing.assert_allclose(recon, data, atol=1e-12)  # A = U diag(S) V^T, V not transposed
    none = [T.svd(T.tensor(data), compute_uv=False) for T in (gt, real)]
    np.testing.assert_array_equal(none[0].U.numpy(), none[1].U.numpy())  # zeros, m x m
    np.testing.assert_array_equal(none[0].V.numpy(), none[1].V.numpy())  # zeros, n x n
    np.testing.assert_allclose(none[0].S.numpy(), none[1].S.numpy(), rtol=1e-12)


def test_svd_nodes_and_gradient():
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    names = []
    for T in (gt, real):
        x = T.tensor(data, requires_grad=True)
        names.append([type(t.grad_fn).__name__ for t in x.svd()])
    assert names[0] == names[1] == ["LinalgSvdBackward0", "LinalgSvdBackward0", "TransposeBackward0"]
    x = gt.tensor(data, requires_grad=True)
    gt.svd(x).S.sum().backward()
    h = 1e-6
    numeric = np.zeros_like(data)
    for i in np.ndindex(*data.shape):
        e = np.zeros_like(data)
        e[i] = h
        numeric[i] = (np.linalg.svd(data + e, compute_uv=False).sum()
                      - np.linalg.svd(data - e, compute_uv=False).sum()) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)
