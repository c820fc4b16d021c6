"""GradBench ``ba`` as one vectorised program over all observations: the residual vector whose Jacobian the eval
asks for (2 p reprojection errors, row-major per observation, then p weight errors), in (cams, X, w).

Written from the published definition (``tests/corpus/gradbench/gb_ba.py`` is the per-observation port it
is checked against): Rodrigues rotation, radial distortion, projection, ``w (proj - feat)`` and ``1 - w^2``.
"""
from __future__ import annotations

import numpy as np


def rodrigues_rotate_points(rot, X):
    sqtheta = np.sum(rot ** 2, axis=1, keepdims=True)
    theta = np.sqrt(sqtheta)
    w = rot / theta
    w_cross_X = np.cross(w, X)
    tmp = np.sum(w * X, axis=1, keepdims=True) * (1.0 - np.cos(theta))
    return X * np.cos(theta) + w_cross_X * np.sin(theta) + w * tmp


def ba_residuals(cams, X, w, obs, feats):
    cam = cams[obs[:, 0]]
    point = X[obs[:, 1]]
    Xcam = rodrigues_rotate_points(cam[:, 0:3], point - cam[:, 3:6])
    proj = Xcam[:, 0:2] / Xcam[:, 2:3]
    rsq = np.sum(proj ** 2, axis=1, keepdims=True)
    distortion = 1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq
    projected = proj * distortion * cam[:, 6:7] + cam[:, 7:9]
    reproj = w[:, None] * (projected - feats)
    return np.concatenate([reproj.reshape(-1), 1.0 - w ** 2])
