"""torch.save / torch.load: gradc's NumPy-based format round-trips state dicts and checkpoints, never unpickles."""
import io
import os
import traceback
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import gradc
import gradc.torch as torch
from gradc.errors import ArgumentError

PACKAGE = os.path.dirname(os.path.abspath(gradc.__file__)) + os.sep  # wherever the clone lives


def _model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def test_model_state_dict_round_trip_through_a_file(tmp_path):
    path = tmp_path / "model.pth"
    a, b = _model(0), _model(1)
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    assert not np.array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    torch.save(a.state_dict(), path)
    loaded = torch.load(path, weights_only=True)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(a.state_dict())
    assert repr(b.load_state_dict(loaded)) == "<All keys matched successfully>"
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pth"]  # no temporary file left behind


def test_checkpoint_with_optimizer_resumes_identically(tmp_path):
    def step(model, opt, x):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()

    x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)
    model = _model(0).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        step(model, opt, x)
    torch.save({"epoch": 3, "loss": 0.25, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": opt.state_dict()}, tmp_path / "ckpt.tar")
    for _ in range(3):
        step(model, opt, x)

    ckpt = torch.load(tmp_path / "ckpt.tar")
    assert ckpt["epoch"] == 3 and ckpt["loss"] == 0.25
    assert ckpt["optimizer_state_dict"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sorted(ckpt["optimizer_state_dict"]["state"]) == [0, 1, 2, 3]  # integer keys survive
    resumed = _model(5).double()
    resumed.load_state_dict(ckpt["model_state_dict"])
    opt2 = torch.optim.Adam(resumed.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["optimizer_state_dict"])
    for _ in range(3):
        step(resumed, opt2, x)
    for p, q in zip(model.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_values_keep_their_types():
    buf = io.BytesIO()
    obj = {"t": torch.tensor([1, 2]), "p": torch.nn.Parameter(torch.ones(2, dtype=torch.float64)),
           "g": torch.ones(1, requires_grad=True), "a": np.arange(3.0), "big": 2 ** 70, "f": 0.1, "s": "name",
           "n": None, "b": True, "tup": (1, [2.5, "x"]), "dt": torch.float64, 7: "int key",
           "np": [np.float32(1.5), np.int64(3)]}
    torch.save(obj, buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["t"].dtype == torch.int64 and back["t"].tolist() == [1, 2]
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad and back["p"].dtype == torch.float64
    assert back["g"].requires_grad and not isinstance(back["g"], torch.nn.Parameter)
    assert isinstance(back["a"], np.ndarray) and back["a"].tolist() == [0.0, 1.0, 2.0]
    assert (back["big"], back["f"], back["s"], back["n"], back["b"]) == (2 ** 70, 0.1, "name", None, True)
    assert back["tup"] == (1, [2.5, "x"]) and back["dt"] is torch.float64 and back[7] == "int key"
    assert back["np"] == [1.5, 3]


def test_unsupported_object_is_a_clear_error_and_leaves_the_file_alone(tmp_path):
    path = tmp_path / "model.pth"
    torch.save({"w": torch.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(ArgumentError) as info:
        torch.save(_model(0), path)
    message = str(info.value)
    assert "torch.save cannot store a Module" in message and "test_save_load.py:" in message
    assert "model.state_dict()" in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pth"]
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__) if f.filename.startswith(PACKAGE)]
    assert frames == ["entry"]  # no traceback from inside gradc


@pytest.mark.parametrize("content", [b"not a zip at all", b""])
def test_foreign_files_are_rejected(tmp_path, content):
    path = tmp_path / "weights.pt"
    path.write_bytes(content)
    with pytest.raises(ArgumentError, match="is not a file written by gradc's torch.save"):
        torch.load(path)


def test_a_pickle_in_a_zip_is_never_unpickled(tmp_path):
    # the layout of a checkpoint written by PyTorch: a zip holding a pickle
    path = tmp_path / "torch_format.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x04cos\nsystem\n(S'echo pwned'\ntR.")
    with pytest.raises(ArgumentError, match="cannot be read without unpickling"):
        torch.load(path)
    # an .npz whose manifest slot holds a pickled object array is refused too (allow_pickle=False)
    evil = tmp_path / "evil.pt"
    with open(evil, "wb") as f:
        np.savez(f, __gradc__=np.array([{"format": "x"}], dtype=object))
    with pytest.raises(ArgumentError):
        torch.load(evil)


def test_same_state_same_bytes(tmp_path):
    state = _model(0).state_dict()
    torch.save(state, tmp_path / "a.pth")
    torch.save(state, tmp_path / "b.pth")
    assert (tmp_path / "a.pth").read_bytes() == (tmp_path / "b.pth").read_bytes()
    with np.load(tmp_path / "a.pth", allow_pickle=False) as archive:  # a plain .npz: readable without gradc
        assert archive["t0"].shape == (4, 3)


def test_missing_file():
    with pytest.raises(ArgumentError, match="no such file: nowhere/model.pth"):
        torch.load("nowhere/model.pth")
