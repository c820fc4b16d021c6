"""``torch.save`` / ``torch.load`` for state dicts and checkpoints, in a NumPy file format (no pickle).

The file is a NumPy ``.npz`` archive: every tensor or array is one ``.npy`` member (``t0``,
``t1``, ...) and member ``__gradc__`` holds a JSON description of the saved object (dicts,
lists, tuples, numbers, strings, None, torch dtypes and references to the arrays). Loading
reads it with ``allow_pickle=False``, so a file can never run code; it is not torch's format
(torch cannot read it, nor gradc torch's). Files are written whole or not at all (gradc's one writing rule,
``gradc.files.write_atomically``), with fixed timestamps, so the same state gives the same bytes.

>>> import io, gradc.torch as torch
>>> buf = io.BytesIO(); torch.save({"w": torch.ones(2), "epoch": 3}, buf); _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([1., 1.]), 'epoch': 3}
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from gradc.errors import ArgumentError, user_facing
from gradc.facade import dtypes
from gradc.facade.nn.module_base import Parameter
from gradc.facade.tensor import Tensor
from gradc.files import write_atomically

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
    """Write ``obj`` (a state dict, or a dict/list of tensors, numbers and strings) to path or file ``f``.

    A path is written by gradc's one rule for files (``gradc.files.write_atomically``): a symlink is
    followed, the file is replaced whole or not at all, and an error names the path given.
    """
    writer = _Writer()
    manifest = {"format": MAGIC, "root": writer.encode(obj, "")}
    members = dict(writer.arrays)
    members["__gradc__"] = np.frombuffer(json.dumps(manifest, sort_keys=True).encode(), np.uint8)
    if hasattr(f, "write"):
        _write_npz(f, members)
        return
    buf = io.BytesIO()
    _write_npz(buf, members)
    write_atomically(f, buf.getvalue())


class Malformed(Exception):
    """What is wrong with a file given to ``load`` (turned into an ArgumentError naming the file)."""


MAX_DEPTH = 200  # nesting of dicts and lists in a file (a state dict nests two or three levels)


def _decode(node, arrays, depth=0):  # noqa: C901 - one case per stored type
    if depth > MAX_DEPTH:
        raise Malformed(f"its data nests deeper than {MAX_DEPTH} levels")
    if node is None or isinstance(node, (bool, str)):
        return node
    if not isinstance(node, dict) or not node or len(node) > 2 or (len(node) == 2 and "requires_grad" not in node):
        raise Malformed(f"it holds an entry gradc does not write: {_short(node)}")
    kind = next(k for k in node if k != "requires_grad")
    value = node[kind]
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
    except (TypeError, ValueError):
        raise Malformed(f"its {kind} entry {_short(value)} is not a number") from None
    if kind in ("tensor", "parameter", "ndarray"):
        if not isinstance(value, str) or value not in arrays:
            raise Malformed(f"an entry refers to array {_short(value)}, which the file does not hold")
        if kind == "ndarray":
            return arrays[value]
        t = Tensor._wrap(arrays[value])
        if kind == "parameter":
            return Parameter(t, requires_grad=bool(node.get("requires_grad", True)))
        t._requires_grad = bool(node.get("requires_grad", False))
        return t
    if kind == "dtype":
        try:
            return dtypes._by_name(value)
        except (KeyError, TypeError, ValueError):
            raise Malformed(f"it names an unknown dtype {_short(value)}") from None
    if kind in ("dict", "ordered", "list", "tuple") and not isinstance(value, list):
        raise Malformed(f"its {kind} entry is not a list")
    if kind in ("dict", "ordered"):
        if not all(isinstance(p, list) and len(p) == 2 for p in value):
            raise Malformed(f"its {kind} entry holds something other than key-value pairs")
        pairs = [(_key(k, arrays, depth), _decode(v, arrays, depth + 1)) for k, v in value]
        return OrderedDict(pairs) if kind == "ordered" else dict(pairs)
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays, depth + 1) for v in value]
        return tuple(items) if kind == "tuple" else items
    raise Malformed(f"it holds an entry of unknown kind {_short(kind)}")


def _key(node, arrays, depth):
    key = _decode(node, arrays, depth + 1)
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        raise Malformed(f"a dict key is {_short(key)}, not a string or an integer")
    return key


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _read(f):
    """The bytes of path or file object ``f`` and how to name it in messages."""
    if hasattr(f, "read"):
        return f.read(), getattr(f, "name", "the file object")
    path = os.fspath(f)
    with open(path, "rb") as stream:
        return stream.read(), path


def _members(data):
    """The arrays of an ``.npz`` archive, or ``Malformed`` saying what is wrong with it."""
    if not data:
        raise Malformed("it is empty")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise Malformed("it is not a zip archive (truncated, or not written by torch.save)") from None
    names = archive.namelist()
    if "__gradc__.npy" not in names:
        what = "a PyTorch checkpoint, which cannot be read without unpickling it" if any(
            n.endswith("data.pkl") for n in names) else \
            f"a zip archive without gradc's manifest (members: {_short(names)})"
        raise Malformed(f"it is {what}")
    arrays = {}
    for name in names:
        if not name.endswith(".npy"):
            raise Malformed(f"it holds a member {_short(name)} that torch.save does not write")
        try:
            with archive.open(name) as member:
                arrays[name[:-4]] = np.lib.format.read_array(member, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as err:
            raise Malformed(f"its member {_short(name)} is damaged ({err})") from None
    return arrays


@user_facing
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` wrote; any other file (a torch checkpoint, say) is a clear error, never unpickled."""
    where = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file object")
    try:
        data, where = _read(f)
    except FileNotFoundError:
        raise ArgumentError(f"torch.load: no such file: {where}", hint="check the path given to torch.save") from None
    except (IsADirectoryError, PermissionError) as err:
        raise ArgumentError(f"torch.load: cannot read {where}: {err.strerror}", hint="pass the path of a file "
                            "written by torch.save") from None
    try:
        arrays = _members(data)
        raw = arrays.pop("__gradc__")
        try:
            manifest = json.loads(bytes(raw).decode())
        except (UnicodeDecodeError, ValueError, TypeError):
            raise Malformed("its manifest is not valid JSON") from None
        except RecursionError:
            raise Malformed("its manifest nests too deeply") from None
        if not isinstance(manifest, dict) or manifest.get("format") != MAGIC or "root" not in manifest:
            raise Malformed(f"its manifest is not {MAGIC!r}")
        return _decode(manifest["root"], arrays)
    except Malformed as why:
        raise ArgumentError(f"torch.load: {where} is not a file written by gradc's torch.save: {why}",
                            hint="load a file written by gradc's torch.save (torch.save(model.state_dict(), path))"
                            ) from None
