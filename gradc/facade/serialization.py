"""``torch.save`` / ``torch.load`` for state dicts and checkpoints, in a NumPy file format (no pickle).

The file is a NumPy ``.npz`` archive: every tensor or array is one ``.npy`` member (``t0``,
``t1``, ...) and member ``__gradc__`` holds a JSON description of the saved object (dicts,
lists, tuples, numbers, strings, None, torch dtypes and references to the arrays). Loading
reads it with ``allow_pickle=False``, so a file can never run code; it is not torch's format
(torch cannot read it, nor gradc torch's). Files are written whole or not at all (a temporary
file renamed over the target), with fixed timestamps, so the same state gives the same bytes.

>>> import io, gradc as torch
>>> buf = io.BytesIO(); torch.save({"w": torch.ones(2), "epoch": 3}, buf); _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([1., 1.]), 'epoch': 3}
"""
from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections import OrderedDict

import numpy as np

from gradc.errors import ArgumentError, user_facing
from gradc.facade import dtypes
from gradc.facade.nn.module_base import Parameter
from gradc.facade.tensor import Tensor

MAGIC = "gradc-state/1"
HINT = "torch.save in gradc stores state dicts: save model.state_dict() and load it with model.load_state_dict(...)"


class _Writer:
    def __init__(self):
        self.arrays = {}

    def encode(self, obj, path):  # noqa: C901 - one case per supported type
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":  # a NumPy number: as the Python number
            obj = obj.item()
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return {"int": str(obj)}
        if isinstance(obj, float):
            return {"float": repr(obj)}
        if isinstance(obj, Tensor):
            name = f"t{len(self.arrays)}"
            self.arrays[name] = np.array(obj._data, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
            kind = "parameter" if isinstance(obj, Parameter) else "tensor"
            return {kind: name, "requires_grad": bool(obj.requires_grad)}
        if isinstance(obj, np.ndarray) and obj.dtype.kind in "biuf":
            name = f"t{len(self.arrays)}"
            self.arrays[name] = np.array(obj, order="C")
            return {"ndarray": name}
        if isinstance(obj, dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, dict):
            keys = list(obj)
            if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in keys):
                raise ArgumentError(f"torch.save: the dict at {path or 'top level'} has a key that is not a string "
                                    "or an integer", hint=HINT)
            items = [[self.encode(k, path), self.encode(v, f"{path}[{k!r}]")] for k, v in obj.items()]
            return {"ordered" if isinstance(obj, OrderedDict) else "dict": items}
        if isinstance(obj, (list, tuple)):
            return {type(obj).__name__ if type(obj) in (list, tuple) else "list":
                    [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        what = "a Module" if hasattr(obj, "state_dict") and hasattr(obj, "forward") else f"a {type(obj).__name__}"
        raise ArgumentError(f"torch.save cannot store {what} (at {path or 'top level'}): gradc writes tensors, "
                            "numbers, strings and dicts/lists of them, never pickled objects", hint=HINT)


def _write_npz(stream, members):
    """An ``.npz`` archive as ``np.savez`` writes it, but with fixed timestamps: the same state, the same bytes."""
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in members.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, array, allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), buf.getvalue())


@user_facing
def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (a state dict, or a dict/list of tensors, numbers and strings) to path or file ``f``."""
    writer = _Writer()
    manifest = {"format": MAGIC, "root": writer.encode(obj, "")}
    members = dict(writer.arrays)
    members["__gradc__"] = np.frombuffer(json.dumps(manifest, sort_keys=True).encode(), np.uint8)
    if hasattr(f, "write"):
        _write_npz(f, members)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".gradc-save-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_npz(out, members)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _decode(node, arrays):  # noqa: C901 - one case per stored type
    if node is None or isinstance(node, (bool, str)):
        return node
    (kind, value), *rest = sorted(node.items(), key=lambda kv: kv[0] == "requires_grad")
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind in ("tensor", "parameter"):
        t = Tensor._wrap(arrays[value])
        if kind == "parameter":
            return Parameter(t, requires_grad=node.get("requires_grad", True))
        t._requires_grad = bool(node.get("requires_grad", False))
        return t
    if kind == "ndarray":
        return arrays[value]
    if kind == "dtype":
        return dtypes._by_name(value)
    if kind in ("dict", "ordered"):
        pairs = [(_decode(k, arrays), _decode(v, arrays)) for k, v in value]
        return OrderedDict(pairs) if kind == "ordered" else dict(pairs)
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays) for v in value]
        return tuple(items) if kind == "tuple" else items
    raise ValueError(f"unknown entry {kind!r}")


@user_facing
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` wrote; any other file (a torch checkpoint, say) is a clear error, never unpickled."""
    where = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file object")
    try:
        if hasattr(f, "read"):
            data = f.read()
        else:
            with open(os.fspath(f), "rb") as stream:
                data = stream.read()
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        manifest = json.loads(bytes(arrays.pop("__gradc__")).decode())
        if manifest.get("format") != MAGIC:
            raise ValueError("format")
        return _decode(manifest["root"], arrays)
    except FileNotFoundError:
        raise ArgumentError(f"torch.load: no such file: {where}", hint="check the path given to torch.save") from None
    except (IsADirectoryError, PermissionError) as err:
        raise ArgumentError(f"torch.load: cannot read {where}: {err.strerror}", hint="pass the path of a file "
                            "written by torch.save") from None
    except (ValueError, KeyError, TypeError, AttributeError, OSError, EOFError, zipfile.BadZipFile, UnicodeDecodeError):
        raise ArgumentError(f"torch.load: {where} is not a file written by gradc's torch.save (a checkpoint saved "
                            "by PyTorch itself cannot be read without unpickling it)",
                            hint="re-save it with gradc (torch.save(model.state_dict(), path))") from None
