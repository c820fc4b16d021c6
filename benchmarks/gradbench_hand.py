"""GradBench ``ht``'s hand model written once for the array libraries the peers use (torch, jax.numpy).

``residuals(xp, args, complicated)`` returns the function of the parameters whose Jacobian the eval asks
for; ``xp`` is the library's namespace, with ``concatenate`` standing for ``torch.cat`` (see ``torch_ns``).
The model follows ``tests/corpus/gradbench/gb_ht.py`` (checked there against finite differences);
``gradbench.py`` checks each peer's Jacobian against gradc's before timing.

>>> import numpy as np
>>> class Plain:  # NumPy as a namespace: the model runs on plain arrays
...     def __getattr__(self, name):
...         return getattr(np, name)
>>> import gb_ht
>>> data = gb_ht.generate()
>>> args = [data["theta"]] + [data[k] for k in ("nbones", "parents", "base_relatives", "inverse_base_absolutes",
...                                              "base_positions", "weights", "points", "correspondences")]
>>> r = residuals(Plain(), args, complicated=False)(np.asarray(args[0]))
>>> bool(np.allclose(r, gb_ht.hand_objective(*args).reshape(-1)))
True
"""
from __future__ import annotations

import numpy as np


def torch_ns():
    """torch with NumPy's names where the model needs them."""
    import torch

    class TorchNS:
        def __getattr__(self, name):
            return getattr(torch, name)

        @staticmethod
        def concatenate(parts, axis=0):
            return torch.cat(parts, axis)

        @staticmethod
        def asarray(value):
            return torch.as_tensor(value, dtype=torch.float64)
    return TorchNS()


def residuals(xp, args, complicated):
    """The residuals ``points - model(params)`` (flattened) as a function of ``params`` (theta, with the
    correspondences' barycentric coordinates first when ``complicated``)."""
    nbones, parents = args[1], args[2]
    base_relatives, inverse_base_absolutes, base_positions, weights, points = (xp.asarray(a) for a in args[3:8])
    correspondences = np.asarray(args[8], dtype=int)
    triangles = np.asarray(args[9], dtype=int) if complicated else None
    zero, one = xp.asarray(0.0), xp.asarray(1.0)

    def rows(*entries):
        return xp.stack([xp.stack(list(row)) for row in entries])

    def euler(xzy):
        cx, sx, cy, sy, cz, sz = (xp.cos(xzy[0]), xp.sin(xzy[0]), xp.cos(xzy[2]), xp.sin(xzy[2]),
                                  xp.cos(xzy[1]), xp.sin(xzy[1]))
        rx = rows((one, zero, zero), (zero, cx, -sx), (zero, sx, cx))
        ry = rows((cy, zero, -sy), (zero, one, zero), (sy, zero, cy))
        rz = rows((cz, -sz, zero), (sz, cz, zero), (zero, zero, one))
        return rz @ ry @ rx

    def angle_axis(aa):
        n = xp.sqrt(xp.sum(aa ** 2))
        x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
        s, c = xp.sin(n), xp.cos(n)
        return rows((x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s),
                    (x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s),
                    (x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c))

    def vertices(theta):
        pose_rows = [theta[0:3], xp.ones(3), theta[3:6], xp.zeros(3), xp.zeros(3)]  # rows 3, 4: wrist, forearm
        i_theta = 6
        for _finger in range(5):
            for i in (1, 2, 3):
                second = theta[i_theta + 1] if i == 1 else zero
                pose_rows.append(xp.stack([theta[i_theta], second, zero]))
                i_theta += 2 if i == 1 else 1
            pose_rows.append(xp.zeros(3))
        pose = xp.stack(pose_rows)
        last_row = xp.asarray([[0.0, 0.0, 0.0, 1.0]])
        absolutes = []
        for i in range(nbones):
            local = xp.concatenate([xp.concatenate([euler(pose[3 + i]), xp.zeros((3, 1))], 1), last_row], 0)
            relative = base_relatives[i] @ local
            absolutes.append(relative if parents[i] == -1 else absolutes[parents[i]] @ relative)
        transforms = xp.stack(absolutes) @ inverse_base_absolutes
        positions = xp.einsum("bij,vj,vb->vi", transforms, base_positions, weights)[:, :3]
        return positions @ angle_axis(pose[0]).T + pose[2]

    def function(params):
        if not complicated:
            return (points - vertices(params)[correspondences]).reshape(-1)
        npts = points.shape[0]
        us, verts = params[:2 * npts].reshape(npts, 2), vertices(params[2 * npts:])
        tri = triangles[correspondences]
        hand = (us[:, :1] * verts[tri[:, 0]] + us[:, 1:] * verts[tri[:, 1]]
                + (1.0 - us[:, :1] - us[:, 1:]) * verts[tri[:, 2]])
        return (points - hand).reshape(-1)
    return function
