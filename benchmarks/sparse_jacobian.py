#!/usr/bin/env python3
"""Sparse Jacobians by colouring on GradBench's ht (hand tracking, complicated) and ba (bundle adjustment):
gradc's sparse Jacobian (NumPy and C targets) beside gradc's dense Jacobian and JAX, ratios in one process.

ht at GradBench's default size (10,000 vertices, 1,084 triangles, 100 points, synthetic model with ADBench's
22 bones): d residuals (300) / d (us, theta) (226), dense in theta, block diagonal in us. ba at ADBench's
ba1 size (49 cameras, 7,776 points, 31,843 observations): the whole problem's Jacobian (95,529 x 55,710,
923,447 nonzeros; 42 GB dense, so gradc's dense Jacobian is not run); JAX computes what GradBench's JAX
tool computes, each observation's 2 x 15 block (``vmap`` of ``jacrev``), not a sparse matrix.
"build" is gradc's pattern detection, colouring, compressed-graph emission and load (C: compiler included);
"eval" the median call. Results are checked against each other (rtol 1e-8) before timing.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=.:/work/jaxsite python benchmarks/sparse_jacobian.py [--dense] [--problems ht,ba]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("GRADC_NOTICE_AFTER", "never")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "tests", "corpus", "gradbench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "sparse_derivatives"))

import ba_whole  # noqa: E402
import gb_ba  # noqa: E402
import gb_ht  # noqa: E402
from run import interleaved  # noqa: E402

import gradc  # noqa: E402
from gradc.derivatives.sparse import SparseJacobian  # noqa: E402

try:
    import gradbench_jax
    import jax
    import jax.numpy as jnp
except ImportError:  # JAX is optional
    gradbench_jax = None


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def ht_case(size):
    data = gb_ht.generate(size, complicated=True)
    parents = tuple(int(p) for p in data["parents"])

    def ht_objective(all_params, base_relatives, inverse_base_absolutes, base_positions, weights, points,
                     correspondences, triangles):
        return gb_ht.hand_objective_complicated(all_params, 22, parents, base_relatives, inverse_base_absolutes,
                                                base_positions, weights, points, correspondences, triangles)

    names = ("all_params", "base_relatives", "inverse_base_absolutes", "base_positions", "weights", "points",
             "correspondences", "triangles")
    return ht_objective, tuple(data[k] for k in names), data


def jax_ba_blocks(args):
    """GradBench's JAX tool's ba: every observation's 2 x 15 block, vmapped."""
    cams, X, w, obs, feats = args

    def rotate(rot, x):
        theta = jnp.sqrt(jnp.sum(rot ** 2))
        k = rot / theta
        return x * jnp.cos(theta) + jnp.cross(k, x) * jnp.sin(theta) + k * jnp.dot(k, x) * (1 - jnp.cos(theta))

    def reproj_err(cam, x, wj, feat):
        xc = rotate(cam[:3], x - cam[3:6])
        p = xc[:2] / xc[2]
        rsq = jnp.sum(p ** 2)
        p = p * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
        return wj * (p * cam[6] + cam[7:9] - feat)

    jac = jax.jit(jax.vmap(jax.jacrev(reproj_err, argnums=(0, 1, 2))))
    jargs = (jnp.asarray(cams[obs[:, 0]]), jnp.asarray(X[obs[:, 1]]), jnp.asarray(w), jnp.asarray(feats))
    return lambda: [np.asarray(a.block_until_ready()) for a in jac(*jargs)]


def work_note(sj):
    """The C target's work buffer (bytes its Jacobian function asks, allocated once and kept between calls)."""
    found = re.search(r"_jacobian_work_size\(void\)\n\{\n    return (\d+);", sj.source or "")
    return f", work {int(found.group(1)) / 2 ** 20:.0f} MB" if found else ""


def report(name, rows, base):
    print(f"\n{name}")
    for label, (build, seconds, note) in rows.items():
        ratio = f"{seconds / base:7.2f}x" if seconds else "       "
        build_text = f"build {build:6.2f} s" if build is not None else " " * 14
        shown = f"{seconds * 1e3:10.2f} ms" if seconds else "         -   "
        print(f"  {label:<28} {build_text}  eval {shown}  {ratio}  {note}")


def bench_ht(args):
    objective, values, data = ht_case((10000, 1084, 100))
    rows, fns, labels = {}, [], []
    sparse = {}
    for target in ("numpy", "c"):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["GRADC_CACHE_DIR"] = cache
            sj, build = timed(lambda t=target: SparseJacobian.of(objective, values, (0,), target=t))
        sparse[target] = sj
        fns.append(lambda sj=sj: sj(*values))
        labels.append((f"gradc sparse {target}", build, f"{sj.n_colours} {sj.mode} sweeps, {sj.pattern.nnz} nonzeros"
                       + (work_note(sj) if target == "c" else "")))
    want = sparse["numpy"](*values).toarray()
    np.testing.assert_allclose(sparse["c"](*values).toarray(), want, rtol=1e-8, atol=1e-10)
    if gradbench_jax is not None:
        jargs = [data["all_params"], 22, tuple(int(p) for p in data["parents"])] + list(values[1:])
        jac = gradbench_jax.ht(jargs, True)
        np.testing.assert_allclose(np.asarray(jac()).reshape(want.shape), want, rtol=1e-8, atol=1e-10)
        fns.append(jac)
        labels.append(("JAX jit(jacfwd), dense", None, "226 forward sweeps, vectorised"))
    medians = interleaved(fns, args.min_time, args.repeat)
    for (label, build, note), m in zip(labels, medians):
        rows[label] = (build, m, note)
    if args.dense:
        dense_fn, build = timed(lambda: gradc.jacobian(objective))
        out, seconds = timed(lambda: dense_fn(*values))
        np.testing.assert_allclose(np.asarray(out).reshape(want.shape), want, rtol=1e-8, atol=1e-10)
        _, seconds = timed(lambda: dense_fn(*values))
        rows["gradc dense numpy (1 call)"] = (None, seconds, "226 forward sweeps")
    report("ht complicated, v=10000 t=1084 p=100: d residuals (300) / d (us, theta) (226)", rows, medians[0])


def bench_ba(args):
    data = gb_ba.generate((49, 7776, 31843), jitter=0.01)
    values = (data["cams"], data["X"], data["w"], data["obs"], data["feats"])
    rows, fns, labels, sparse = {}, [], [], {}
    for target in ("numpy", "c"):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["GRADC_CACHE_DIR"] = cache
            sj, build = timed(lambda t=target: SparseJacobian.of(ba_whole.ba_residuals, values, (0, 1, 2), target=t))
        sparse[target] = sj
        fns.append(lambda sj=sj: sj(*values))
        labels.append((f"gradc sparse {target}", build, f"{sj.n_colours} {sj.mode} sweeps, {sj.pattern.nnz} nonzeros"
                       + (work_note(sj) if target == "c" else "")))
    want = sparse["numpy"](*values)
    np.testing.assert_allclose(sparse["c"](*values).data, want.data, rtol=1e-8, atol=1e-10)
    if gradbench_jax is not None:
        blocks = jax_ba_blocks(values)
        d_cam = blocks()[0]
        j = 7
        cam = data["obs"][j, 0]
        np.testing.assert_allclose(d_cam[j], want[2 * j:2 * j + 2, 11 * cam:11 * cam + 11].toarray(), rtol=1e-8)
        fns.append(blocks)
        labels.append(("JAX jit(vmap(jacrev)) blocks", None, "2 x 15 blocks per observation, not a matrix"))
    medians = interleaved(fns, args.min_time, args.repeat)
    for (label, build, note), m in zip(labels, medians):
        rows[label] = (build, m, note)
    rows["gradc dense"] = (None, None, "not run: 95,529 x 55,710 dense is 42 GB")
    report("ba1 whole problem, n=49 m=7776 p=31843: d residuals (95,529) / d (cams, X, w) (55,710)", rows,
           medians[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="ht,ba")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--dense", action="store_true", help="also time gradc's dense Jacobian of ht once (slow)")
    args = parser.parse_args()
    for name in args.problems.split(","):
        {"ht": bench_ht, "ba": bench_ba}[name](args)
    print(f"\npeak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
