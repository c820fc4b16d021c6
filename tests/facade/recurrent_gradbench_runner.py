"""Run GradBench's PyTorch lstm tool from an extracted copy of the GradBench sources.

``python recurrent_gradbench_runner.py <gradbench python dir> torch|gradc`` imports the tool with
``torch`` bound to real torch or to gradc's facade (``sys.modules["torch"] = gradc.torch``), runs
its ``objective`` and ``jacobian`` on seeded inputs in the lstm eval's format (the eval's own
generator: random state and parameters, a text as a bit matrix) and prints the outputs as JSON.
The tool is GradBench's own file, never copied into this repository:
``tests/facade/test_recurrent_gradbench.py`` extracts it from the mirror to a temporary folder.

GradBench's input classes decode with the ``dataclasses_json`` package; where it is not installed
a stand-in with the two names they use (``dataclass_json``'s ``from_dict``, ``config``) is entered.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
import types

import numpy as np

TEXT = ("It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness, it was the epoch of belief.")


def lstm_input(layers: int, chars: int, seed: int = 3) -> dict:
    """The lstm eval's input (``gen_lstm``): a text's characters as bit rows, random state and parameters."""
    rng = np.random.default_rng(seed)
    text = TEXT[:chars]
    bits = math.ceil(math.log2(max(ord(c) for c in text)))
    sequence = np.array([[int(b) for b in bin(ord(c))[2:].zfill(bits)] for c in text], dtype=np.float64)
    return {"main_params": rng.random((2 * layers, 4 * bits)).tolist(), "extra_params": rng.random((3, bits)).tolist(),
            "state": rng.random((2 * layers, bits)).tolist(), "sequence": sequence.tolist(),
            "min_runs": 1, "min_seconds": 0}


def _dataclasses_json_stand_in() -> types.ModuleType:
    """``dataclass_json`` (``from_dict`` through each field's decoder) and ``config``, as GradBench uses them."""
    module = types.ModuleType("dataclasses_json")

    def config(encoder=None, decoder=None):
        return {"dataclasses_json": {"encoder": encoder, "decoder": decoder}}

    def dataclass_json(cls):
        def from_dict(klass, data):
            values = {}
            for f in dataclasses.fields(klass):
                if f.name in data:
                    decode = f.metadata.get("dataclasses_json", {}).get("decoder") or (lambda v: v)
                    values[f.name] = decode(data[f.name])
            return klass(**values)
        cls.from_dict = classmethod(from_dict)
        return cls

    module.config, module.dataclass_json = config, dataclass_json
    return module


def _directional(tool, data: dict, jac: np.ndarray, h: float = 1e-6) -> list:
    """``[J v, central difference of the objective along v]`` for a seeded direction over both parameter arrays."""
    main, extra = np.asarray(data["main_params"]), np.asarray(data["extra_params"])
    v = np.random.default_rng(11).uniform(-1, 1, main.size + extra.size)

    def at(step):
        moved = np.concatenate([main.ravel(), extra.ravel()]) + step * v
        shifted = dict(data, main_params=moved[:main.size].reshape(main.shape).tolist(),
                       extra_params=moved[main.size:].reshape(extra.shape).tolist())
        return tool.objective.wrapped(shifted)["output"]
    return [float(jac @ v), (at(h) - at(-h)) / (2 * h)]


def main(root: str, which: str) -> None:
    sys.path.insert(0, root)
    try:
        import dataclasses_json  # noqa: F401
    except ImportError:
        sys.modules["dataclasses_json"] = _dataclasses_json_stand_in()
    if which == "gradc":
        import gradc.torch
        sys.modules["torch"] = gradc.torch
    from gradbench.tools.pytorch import lstm

    out = {}
    for layers, chars in ((1, 6), (2, 12), (3, 20)):
        data = lstm_input(layers, chars)
        out[f"objective l={layers} c={chars}"] = lstm.objective.wrapped(data)["output"]
        jac = lstm.jacobian.wrapped(data)["output"]
        out[f"jacobian l={layers} c={chars}"] = jac
        out[f"directional l={layers} c={chars}"] = _directional(lstm, data, np.asarray(jac))
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
