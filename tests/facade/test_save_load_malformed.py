"""``torch.load`` of a damaged or foreign file names the file and what is wrong (never a RecursionError, a
StopIteration or a traceback from inside gradc); ``torch.save`` to a path follows gradc's one writing rule."""
import io
import json
import os
import random
import zipfile

import numpy as np
import pytest

import gradc.torch as torch
from gradc.errors import ArgumentError, WriteError


def _saved(obj=None):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2, 3), "epoch": 3} if obj is None else obj, buf)
    return buf.getvalue()


def _npz(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, array in members.items():
            data = io.BytesIO()
            np.lib.format.write_array(data, np.asarray(array), allow_pickle=False)
            archive.writestr(name + ".npy", data.getvalue())
    return buf.getvalue()


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _npz_member(array):
    data = io.BytesIO()
    np.lib.format.write_array(data, array, allow_pickle=False)
    return data.getvalue()


def _manifest(root):
    return np.frombuffer(json.dumps({"format": "gradc-state/1", "root": root}).encode(), np.uint8)


def _deep(n):
    text = '{"format": "gradc-state/1", "root": ' + '{"list": [' * n + "null" + "]}" * n + "}"
    return np.frombuffer(text.encode(), np.uint8)


MALFORMED = {
    "empty": (b"", "it is empty"),
    "random bytes": (bytes(random.Random(0).randrange(256) for _ in range(300)), "not a zip archive"),
    "truncated": (_saved()[:-40], "not a zip archive"),
    "wrong member": (_npz({"other": np.zeros(2)}), "without gradc's manifest"),
    "torch checkpoint": (_zip({"archive/data.pkl": b"\x80\x02}q\x00.", "archive/version": b"3\n"}),
                         "PyTorch checkpoint"),
    "foreign member": (_zip({"__gradc__.npy": _npz_member(_manifest(None)), "evil.pkl": b"x"}), "does not write"),
    "manifest not json": (_npz({"__gradc__": np.frombuffer(b"{not json", np.uint8)}), "not valid JSON"),
    "not the format": (_npz({"__gradc__": np.frombuffer(b'{"format": "x"}', np.uint8)}), "manifest is not"),
    "nested 300 deep": (_npz({"__gradc__": _deep(300)}), "nests deeper than 200 levels"),
    "nested 100000 deep": (_npz({"__gradc__": _deep(100000)}), "nests too deeply"),
    "missing array": (_npz({"__gradc__": _manifest({"tensor": "t7"})}), "array 't7', which the file does not hold"),
    "empty entry": (_npz({"__gradc__": _manifest({})}), "an entry gradc does not write"),
    "unknown kind": (_npz({"__gradc__": _manifest({"lambda": 1})}), "unknown kind 'lambda'"),
    "bad number": (_npz({"__gradc__": _manifest({"int": "1e"})}), "is not a number"),
    "bad pairs": (_npz({"__gradc__": _manifest({"dict": [[1]]})}), "key-value pairs"),
    "bad key": (_npz({"__gradc__": _manifest({"dict": [[{"float": "1.5"}, None]]})}), "not a string or an integer"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_file_names_the_file_and_the_problem(tmp_path, case):
    data, problem = MALFORMED[case]
    path = tmp_path / "model.pt"
    path.write_bytes(data)
    with pytest.raises(ArgumentError) as info:
        torch.load(path)
    message = str(info.value)
    assert str(path) in message and problem in message, message


def test_random_damage_is_always_a_clear_error_or_the_saved_value():
    rng = random.Random(22)
    good = _saved({"a": [torch.arange(4.0), {"b": (1, 2.5, "s")}], "t": torch.tensor(3)})
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            kind = rng.randrange(3)
            i = rng.randrange(len(data))
            if kind == 0:
                data[i] = rng.randrange(256)
            elif kind == 1:
                del data[i:]
            else:
                data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        try:
            torch.load(io.BytesIO(bytes(data)))
        except ArgumentError as e:
            assert "is not a file written by gradc's torch.save" in str(e)


def test_save_to_a_missing_directory_names_the_path_given(tmp_path):
    target = tmp_path / "no-such-dir" / "model.pt"
    with pytest.raises(WriteError) as info:
        torch.save({"w": torch.ones(2)}, target)
    message = str(info.value)
    assert str(target) in message and ".gradc" not in message and "tmp" not in message.replace(str(tmp_path), "")
    assert not (tmp_path / "no-such-dir").exists()


def test_save_follows_a_symlink_and_keeps_it(tmp_path):
    real = tmp_path / "real.pt"
    real.write_bytes(b"old")
    link = tmp_path / "link.pt"
    os.symlink(real, link)
    torch.save({"w": torch.ones(2)}, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert torch.load(real)["w"].tolist() == [1.0, 1.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.pt", "real.pt"]  # no temporary file left


def test_save_then_load_round_trips_through_a_path(tmp_path):
    path = tmp_path / "state.pt"
    torch.save({"w": torch.arange(3.0), "n": 2}, path)
    state = torch.load(path)
    assert state["w"].tolist() == [0.0, 1.0, 2.0] and state["n"] == 2
