"""GradBench's own PyTorch tools for lstm and ht, loaded against torch or against ``gradc.torch``.

The tools (``python/gradbench/gradbench/tools/pytorch/{lstm,ht}.py`` and the modules they import)
and the ht eval's first hand instance are read from the GradBench mirror (a bare git repository,
``GRADBENCH_MIRROR``, default /work/.mirror/gradbench+gradbench/repo) into a temporary folder:
they are GradBench's files, never copied into this repository. GradBench decodes its inputs with
``dataclasses_json``; where that package is absent a stand-in with the two names the input classes
use is entered (the classes are then built from arrays directly).

>>> tools = load(facade)                         # doctest: +SKIP
>>> step = lstm_steps(tools, layers=2, chars=256)  # doctest: +SKIP
"""
from __future__ import annotations

import importlib
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import types
from pathlib import Path

import numpy as np

MIRROR = Path(os.environ.get("GRADBENCH_MIRROR", "/work/.mirror/gradbench+gradbench/repo"))
_PACKAGE = "python/gradbench/gradbench"
_NEEDED = [f"{_PACKAGE}/{p}" for p in ("__init__.py", "wrap.py", "adbench", "evals/ht/io.py", "tools/pytorch")]
_HAND = "evals/ht/data/complicated_big"
_ROOT: Path | None = None


def _extract() -> Path:
    """The mirror's tool sources and the first ht instance in a temporary folder (once per process)."""
    global _ROOT
    if _ROOT is not None:
        return _ROOT
    if not MIRROR.exists():
        raise FileNotFoundError(f"no GradBench mirror at {MIRROR} (set GRADBENCH_MIRROR)")
    git = ["git", f"--git-dir={MIRROR}"]
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "--", *_NEEDED, f"{_HAND}/model",
                             f"{_HAND}/hand1_t26_c100.txt"], capture_output=True, text=True, check=True)
    dest = Path(tempfile.mkdtemp(prefix="gradc-gradbench-"))
    archive = dest / "tools.tar"
    with open(archive, "wb") as out:  # (git may warn of the mirror's absent large files it is not asked for)
        made = subprocess.run([*git, "archive", "--format=tar", "HEAD", "--", *listed.stdout.split()], stdout=out,
                              stderr=subprocess.PIPE, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"git archive of the GradBench mirror failed: {made.stderr.strip()}")
    with tarfile.open(archive) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(dest, filter="data")
        else:  # git's own archive of the mirror's files
            tar.extractall(dest)  # noqa: S202
    _ROOT = dest
    return dest


def _dataclasses_json_stand_in() -> types.ModuleType:
    module = types.ModuleType("dataclasses_json")
    module.config = lambda encoder=None, decoder=None: {}
    module.dataclass_json = lambda cls: cls
    return module


def load(lib) -> dict:
    """``{"lstm": module, "ht": module, "ht_io": module}``: GradBench's tools imported with ``torch`` bound to
    ``lib`` (torch or ``gradc.torch``); each call imports them afresh (their defaults bind ``torch.float64``)."""
    root = _extract()
    path = str(root / "python" / "gradbench")
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        import dataclasses_json  # noqa: F401
    except ImportError:
        sys.modules["dataclasses_json"] = _dataclasses_json_stand_in()
    saved = sys.modules.get("torch")
    sys.modules["torch"] = lib
    for name in [k for k in sys.modules if k.startswith("gradbench.tools")]:
        del sys.modules[name]
    try:
        return {"lstm": importlib.import_module("gradbench.tools.pytorch.lstm"),
                "ht": importlib.import_module("gradbench.tools.pytorch.ht"),
                "ht_io": importlib.import_module("gradbench.evals.ht.io")}
    finally:
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved


def lstm_input(tools, layers: int, chars: int, seed: int = 0):
    """The lstm eval's input (its generator's recipe: a text as bit rows, uniform random state and parameters)."""
    from gradbench.adbench.lstm_data import LSTMInput
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz ,."), chars))
    bits = math.ceil(math.log2(max(ord(c) for c in text)))
    sequence = np.array([[int(b) for b in bin(ord(c))[2:].zfill(bits)] for c in text], dtype=np.float64)
    return LSTMInput(rng.random((2 * layers, 4 * bits)), rng.random((3, bits)), rng.random((2 * layers, bits)),
                     sequence)


def hand_input(tools):
    """The ht eval's first instance (complicated variant, big model: 100 correspondences, 26 + 200 parameters)."""
    folder = _extract() / _HAND
    return tools["ht_io"].read_hand_instance(folder / "model", folder / "hand1_t26_c100.txt", True)


def prepared(tools, name: str, data):
    """The tool's test object, prepared on ``data`` (``calculate_objective`` / ``calculate_jacobian``)."""
    module = tools[name]
    obj = module.PyTorchLSTM() if name == "lstm" else module.PyTorchHand()
    obj.prepare(data)
    return obj


def result(obj, name: str, function: str) -> np.ndarray:
    """The output of the last call of ``function`` as a float64 array."""
    if function == "calculate_objective":
        value = obj.objective
    else:
        value = obj.gradient if name == "lstm" else obj.jacobian
    return np.asarray(value.detach().numpy(), dtype=np.float64)
