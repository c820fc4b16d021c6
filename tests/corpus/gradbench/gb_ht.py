"""GradBench ``ht`` (ADBench's hand tracking): residuals of a skinned hand model, and their Jacobian.

26 pose parameters ``theta`` (global rotation, scale fixed at 1, translation, then per finger 4
angles) drive 22 bones (parent table below: a wrist, four bones per finger, a forearm); each bone's
posed transform is its base relative transform times an Euler rotation; absolutes are products down
the parent table; vertices are weighted sums of bone transforms applied to the base positions; a
global angle-axis rotation and translation follow. ``hand_objective`` gives ``points_i -
vertex[correspondence_i]``; the "complicated" variant takes barycentric ``us`` per point on triangles.
The eval's ``jacobian`` is the derivative of the residuals in ``theta`` (and ``us``). Inputs: ADBench's
model files (22 bones, 10,000 vertices, 1,084 triangles in the big model) and 100 to 100,000 points;
here a synthetic model with the same bones and parents, and a few vertices.

Written as the PyTorch tool writes it: item assignments into zeros and ``eye``, a helper defined
inside a function, Python lists indexed by the parent table, ``int(...)`` of table entries.
"""
from __future__ import annotations

import numpy as np

PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0]
BONE_COUNT = 22
DEFAULT_SIZE = (10000, 1084, 100)  # (vertices, triangles, points): hand1 on the big model
SMALL_SIZE = (6, 4, 5)


def to_pose_params(theta, nbones):
    pose_params = np.zeros((nbones + 3, 3))
    pose_params[0, :] = theta[0:3]
    pose_params[1, :] = np.ones((3,))
    pose_params[2, :] = theta[3:6]
    i_theta = 6
    i_pose_params = 5
    n_fingers = 5
    for _finger in range(n_fingers):
        for i in [1, 2, 3]:
            pose_params[i_pose_params, 0] = theta[i_theta]
            i_theta += 1
            if i == 1:
                pose_params[i_pose_params, 1] = theta[i_theta]
                i_theta += 1
            i_pose_params += 1
        i_pose_params += 1
    return pose_params


def euler_angles_to_rotation_matrix(xzy):
    tx = xzy[0]
    ty = xzy[2]
    tz = xzy[1]
    Rx = np.eye(3)
    Rx[1, 1] = np.cos(tx)
    Rx[2, 1] = np.sin(tx)
    Rx[1, 2] = -Rx[2, 1]
    Rx[2, 2] = Rx[1, 1]
    Ry = np.eye(3)
    Ry[0, 0] = np.cos(ty)
    Ry[2, 0] = np.sin(ty)
    Ry[0, 2] = -Ry[2, 0]
    Ry[2, 2] = Ry[0, 0]
    Rz = np.eye(3)
    Rz[0, 0] = np.cos(tz)
    Rz[1, 0] = np.sin(tz)
    Rz[0, 1] = -Rz[1, 0]
    Rz[1, 1] = Rz[0, 0]
    return (Rz @ Ry) @ Rx


def get_posed_relatives(pose_params, base_relatives):
    def inner(rot_param, base_relative):
        tr = np.eye(4)
        R = euler_angles_to_rotation_matrix(rot_param)
        tr[:3, :3] = R
        return base_relative @ tr

    return np.stack([inner(pose_params[3:][i], base_relatives[i]) for i in range(len(pose_params[3:]))])


def relatives_to_absolutes(relatives, parents):
    absolutes = []
    for i in range(relatives.shape[0]):
        if parents[i] == -1:
            absolutes.append(relatives[i])
        else:
            absolutes.append(absolutes[parents[i]] @ relatives[i])
    return np.stack(absolutes)


def angle_axis_to_rotation_matrix(angle_axis):
    n = np.sqrt(np.sum(angle_axis ** 2))

    def aa2R():
        angle_axis_normalized = angle_axis / n
        x = angle_axis_normalized[0]
        y = angle_axis_normalized[1]
        z = angle_axis_normalized[2]
        s, c = np.sin(n), np.cos(n)
        R = np.zeros((3, 3))
        R[0, 0] = x * x + (1 - x * x) * c
        R[0, 1] = x * y * (1 - c) - z * s
        R[0, 2] = x * z * (1 - c) + y * s
        R[1, 0] = x * y * (1 - c) + z * s
        R[1, 1] = y * y + (1 - y * y) * c
        R[1, 2] = y * z * (1 - c) - x * s
        R[2, 0] = x * z * (1 - c) - y * s
        R[2, 1] = z * y * (1 - c) + x * s
        R[2, 2] = z * z + (1 - z * z) * c
        return R

    if n < 0.0001:
        return np.eye(3)
    else:
        return aa2R()


def apply_global_transform(pose_params, positions):
    R = angle_axis_to_rotation_matrix(pose_params[0])
    s = pose_params[1]
    R *= s
    t = pose_params[2]
    return np.transpose(R @ np.transpose(positions)) + t


def get_skinned_vertex_positions(pose_params, base_relatives, parents, inverse_base_absolutes, base_positions,
                                 weights):
    relatives = get_posed_relatives(pose_params, base_relatives)
    absolutes = relatives_to_absolutes(relatives, parents)
    transforms = np.stack([absolutes[i] @ inverse_base_absolutes[i] for i in range(len(absolutes))])
    positions = np.stack([transforms[i, :, :] @ base_positions.T for i in range(transforms.shape[0])])
    positions = positions.transpose(2, 0, 1)
    positions2 = np.sum(positions * weights.reshape((*weights.shape, 1)), 1)[:, :3]
    return apply_global_transform(pose_params, positions2)


def hand_objective(theta, nbones, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
                   points, correspondences):
    pose_params = to_pose_params(theta, nbones)
    vertex_positions = get_skinned_vertex_positions(pose_params, base_relatives, parents, inverse_base_absolutes,
                                                    base_positions, weights)
    return np.stack([points[i] - vertex_positions[int(correspondences[i])] for i in range(points.shape[0])])


def hand_objective_complicated(all_params, nbones, parents, base_relatives, inverse_base_absolutes, base_positions,
                               weights, points, correspondences, triangles):
    npts = points.shape[0]
    us = all_params[:2 * npts].reshape((npts, 2))
    theta = all_params[2 * npts:]
    pose_params = to_pose_params(theta, nbones)
    vertex_positions = get_skinned_vertex_positions(pose_params, base_relatives, parents, inverse_base_absolutes,
                                                    base_positions, weights)

    def get_hand_pt(u, triangle):
        return (u[0] * vertex_positions[int(triangle[0])] + u[1] * vertex_positions[int(triangle[1])]
                + (1.0 - u[0] - u[1]) * vertex_positions[int(triangle[2])])

    return np.stack([points[i] - get_hand_pt(us[i], triangles[int(correspondences[i])])
                     for i in range(points.shape[0])])


def _rigid(rng):
    """A random rotation (QR of a Gaussian matrix, det +1) and translation as a 4 x 4 transform."""
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    transform = np.eye(4)
    transform[:3, :3] = q
    transform[:3, 3] = rng.standard_normal(3)
    return transform


def generate(size=SMALL_SIZE, seed=31337, complicated=False):
    """A synthetic model with ADBench's bones and parents; points near posed vertices."""
    n_vertices, n_triangles, n_points = size
    rng = np.random.RandomState(seed)
    base_relatives = np.stack([_rigid(rng) for _ in range(BONE_COUNT)])
    absolutes = []
    for i, parent in enumerate(PARENTS):
        absolutes.append(base_relatives[i] if parent == -1 else absolutes[parent] @ base_relatives[i])
    inverse_base_absolutes = np.stack([np.linalg.inv(a) for a in absolutes])
    base_positions = np.ones((n_vertices, 4))
    base_positions[:, :3] = rng.standard_normal((n_vertices, 3))
    weights = rng.random_sample((n_vertices, BONE_COUNT)) * (rng.random_sample((n_vertices, BONE_COUNT)) < 0.3)
    weights[:, 0] += 0.1
    weights /= weights.sum(1, keepdims=True)
    theta = 0.3 * rng.standard_normal(26)
    data = {"nbones": BONE_COUNT, "parents": np.array(PARENTS), "base_relatives": base_relatives,
            "inverse_base_absolutes": inverse_base_absolutes, "base_positions": base_positions, "weights": weights,
            "points": rng.standard_normal((n_points, 3)),
            "correspondences": rng.randint(0, n_triangles if complicated else n_vertices, n_points)}
    if complicated:
        data["triangles"] = rng.randint(0, n_vertices, (n_triangles, 3))
        us = rng.random_sample((n_points, 2)) * 0.5
        return {"all_params": np.concatenate([us.ravel(), theta]), **data}
    return {"theta": theta, **data}
