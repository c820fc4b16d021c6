"""Device boilerplate runs on the CPU; asking for a CUDA tensor is one clear error at the user's line."""
import os
import traceback

import pytest

import gradc
import gradc.torch as torch
from gradc.facade.devices import DeviceError

HERE = "test_devices.py:"
PACKAGE = os.path.dirname(os.path.abspath(gradc.__file__)) + os.sep  # wherever the clone lives


def _error(fn):
    with pytest.raises(DeviceError) as info:
        fn()
    inside = [f for f in traceback.extract_tb(info.value.__traceback__) if f.filename.startswith(PACKAGE)]
    assert [f.name for f in inside] == ["entry"], inside  # only the re-raise point: no internal frames
    return str(info.value)


@pytest.mark.parametrize("request_cuda", [
    lambda: torch.ones(2).to("cuda"),
    lambda: torch.ones(2).to(torch.device("cuda:0")),
    lambda: torch.ones(2).to("cuda", torch.float64),
    lambda: torch.ones(2).cuda(),
    lambda: torch.zeros(2, device="cuda"),
    lambda: torch.randn(3, device="cuda"),
    lambda: torch.tensor([1.0], device="cuda"),
    lambda: torch.ones(2).new_ones(3, device="cuda"),
    lambda: torch.nn.Linear(2, 2).to("cuda"),
    lambda: torch.nn.Linear(2, 2).cuda(),
    lambda: torch.set_default_device("cuda"),
    lambda: torch.randperm(3, device="cuda"),
])
def test_cuda_request_is_one_clear_error(request_cuda):
    message = _error(request_cuda)
    assert "gradc computes on the CPU only" in message
    assert HERE in message  # the user's file:line
    assert "torch.cuda.is_available()" in message  # how to write it portably
    assert "\n" not in message


def test_device_error_is_a_runtime_error_like_torchs():
    with pytest.raises(RuntimeError):
        torch.ones(1).to("cuda")


def test_portable_device_selection_runs():
    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    acc = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    model = torch.nn.Linear(3, 1).to(device)
    x = torch.ones(2, 3, device=acc)
    assert model(x.to(device)).shape == (2, 1)
    assert str(model.weight.device) == "cpu"
    torch.set_default_device("cpu")
    assert torch.get_default_device() == torch.device("cpu")
    torch.set_default_device(None)


def test_cuda_module_stand_ins():
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    torch.cuda.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.deterministic = True
    assert "gradc computes on the CPU only" in _error(torch.cuda.current_device)


def test_device_objects_are_values():
    assert torch.device("cuda", 1) == torch.device("cuda:1")
    assert len({torch.device("cpu"), torch.device("cpu"), torch.device("cuda")}) == 2
    with pytest.raises(AttributeError):
        torch.device("cpu").type = "cuda"
    with torch.device("cpu"):
        assert torch.ones(1).device.type == "cpu"


def test_reproducibility_switches_are_accepted():
    torch.use_deterministic_algorithms(True)
    assert torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(False)
    assert not torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(2)
    assert torch.get_num_threads() >= 1
