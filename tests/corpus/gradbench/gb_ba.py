"""GradBench ``ba`` (ADBench's bundle adjustment): reprojection errors and their sparse Jacobian.

A camera is 11 numbers ``[r (Rodrigues rotation, 3), C (centre, 3), f, u0, v0, k1, k2]``; a point is 3;
each observation j has a weight ``w_j`` and a 2-d feature. ``reproj_err_j = w_j (project(cam, X) - feat)``
with ``project = distort(Xcam[:2] / Xcam[2]) * f + (u0, v0)``, ``Xcam = R(r) (X - C)``;
``w_err_j = 1 - w_j^2``. The eval's ``jacobian`` is each observation's 2 x 15 block (cam, X, w) and
the derivative of each ``w_err``. Inputs: one camera, point, weight and feature repeated (n cameras,
m points, p observations; observation i sees camera i mod n and point i mod m); the default files
start at ADBench's ``ba1`` (n = 49, m = 7,776, p = 31,843), whose first instance is ``BA1`` below.
"""
from __future__ import annotations

import numpy as np

ROT_IDX, C_IDX, F_IDX, X0_IDX, RAD_IDX = 0, 3, 6, 7, 9

# the numbers of ADBench's ba1 file (the eval repeats them n, m and p times)
BA1 = {"n": 49, "m": 7776, "p": 31843,
       "cam": [-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673, 419.194514, 5.864426, -8.518870,
               0.087812, 0.002739],
       "x": [7.203245, 0.001144, 3.023326], "w": 0.417022, "feat": [271.760969, 834.209256]}
DEFAULT_SIZE = (49, 7776, 31843)
SMALL_SIZE = (2, 3, 4)


def rodrigues_rotate_point(rot, X):
    sqtheta = np.sum(rot ** 2)
    if sqtheta != 0.0:
        theta = np.sqrt(sqtheta)
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        theta_inverse = 1.0 / theta
        w = theta_inverse * rot
        w_cross_X = np.cross(w, X)
        tmp = np.dot(w, X) * (1.0 - costheta)
        return X * costheta + w_cross_X * sintheta + w * tmp
    else:
        return X + np.cross(rot, X)


def radial_distort(rad_params, proj):
    rsq = np.sum(proj ** 2)
    L = 1.0 + rad_params[0] * rsq + rad_params[1] * rsq * rsq
    return proj * L


def project(cam, X):
    Xcam = rodrigues_rotate_point(cam[ROT_IDX:ROT_IDX + 3], X - cam[C_IDX:C_IDX + 3])
    distorted = radial_distort(cam[RAD_IDX:RAD_IDX + 2], Xcam[0:2] / Xcam[2])
    return distorted * cam[F_IDX] + cam[X0_IDX:X0_IDX + 2]


def compute_reproj_err(cam, X, w, feat):
    return w * (project(cam, X) - feat)


def compute_w_err(w):
    return 1.0 - w ** 2


def ba_objective(cams, X, w, obs, feats):
    """All observations: a loop over them writing rows of preallocated arrays (the tools' objective)."""
    p = obs.shape[0]
    reproj_error = np.empty((p, 2))
    w_err = np.empty(p)
    for j in range(p):
        reproj_error[j] = compute_reproj_err(cams[obs[j, 0]], X[obs[j, 1]], w[j], feats[j])
        w_err[j] = compute_w_err(w[j])
    return np.concatenate([reproj_error.flatten(), w_err])


def generate(size=SMALL_SIZE, seed=31337, jitter=0.01):
    """The eval's repetition of one instance; ``jitter`` perturbs the copies so a test can tell them apart."""
    n, m, p = size
    rng = np.random.RandomState(seed)
    cams = np.tile(BA1["cam"], (n, 1)) * (1 + jitter * rng.standard_normal((n, 11)))
    X = np.tile(BA1["x"], (m, 1)) * (1 + jitter * rng.standard_normal((m, 3)))
    w = np.tile(BA1["w"], p) * (1 + jitter * rng.standard_normal(p))
    feats = np.tile(BA1["feat"], (p, 1))
    obs = np.stack([np.arange(p) % n, np.arange(p) % m], axis=1).astype(np.int64)
    return {"cams": cams, "X": X, "w": w, "obs": obs, "feats": feats}
