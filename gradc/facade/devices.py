"""``torch.device`` and the checks behind every ``device=`` argument: gradc computes on the CPU only.

Code written for GPUs runs unchanged as long as it asks politely
(``"cuda" if torch.cuda.is_available() else "cpu"``); asking for an actual CUDA tensor is a
:class:`DeviceError` at the user's line, saying how to write the device-agnostic form.

>>> d = device("cuda:1"); (d.type, d.index, str(d))
('cuda', 1, 'cuda:1')
>>> device("cpu")
device(type='cpu')
"""
from __future__ import annotations

from gradc.errors import ArgumentError, user_facing

TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "mtia", "ipu", "hpu", "privateuseone")
FIX = ("use torch.device('cuda' if torch.cuda.is_available() else 'cpu'), or 'cpu' (gradc computes on the CPU; "
       "torch.cuda.is_available() is False)")


class DeviceError(ArgumentError, RuntimeError):
    """A tensor was requested on a device gradc does not have (a RuntimeError too, as in torch)."""


class device:  # noqa: N801 - torch spelling
    """A device name: ``device("cpu")``, ``device("cuda:0")``, ``device("cuda", 1)``.

    >>> device("cuda", 0) == device("cuda:0"), device("cpu").index
    (True, None)
    """

    __module__ = "torch"

    def __init__(self, type="cpu", index=None):  # noqa: A002 - torch names
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index  # noqa: A001
        elif isinstance(type, int) and not isinstance(type, bool):
            raise DeviceError(f"torch.device({type}) names a CUDA device by number", hint=FIX)
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({_tname(type)})")
        else:
            type, index = _parse(type, index)  # noqa: A001
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):  # ``with torch.device("cpu"):`` makes it the default device inside the block
        check(self)
        return self

    def __exit__(self, *exc):
        return False


def _tname(x):
    return type(x).__name__


def _parse(text, index):
    kind, _, number = text.partition(":")
    if kind not in TYPES:
        raise RuntimeError("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
                           "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
                           f"string: {text}")
    if number:
        if index is not None:
            raise RuntimeError("type (string) must not include an index because index was passed explicitly: " + text)
        if not number.isdigit() or (len(number) > 1 and number[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(number)
    if index is not None and (not isinstance(index, int) or index < 0):
        raise RuntimeError(f"Device index must not be negative, got {index}")
    return kind, index


def check(where) -> device:
    """The device of a ``device=`` / ``.to(...)`` argument, which must be the CPU.

    ``None`` means the default device (the CPU). Any other device type is a DeviceError.

    >>> check("cpu")
    device(type='cpu')
    """
    if where is None:
        return CPU
    d = where if isinstance(where, device) else device(where)
    if d.type != "cpu":
        raise DeviceError(f"a tensor on device '{d}' was requested, but gradc computes on the CPU only", hint=FIX)
    return CPU


def is_device(x) -> bool:
    """Whether ``x`` names a device (a ``device`` or a device string such as ``"cuda:0"``)."""
    if isinstance(x, device):
        return True
    return isinstance(x, str) and x.partition(":")[0] in TYPES


CPU = device("cpu")
_DEFAULT = [CPU]


@user_facing
def set_default_device(where):
    """``torch.set_default_device``: only the CPU (or None, the CPU) can be the default."""
    _DEFAULT[0] = check(where)


def get_default_device() -> device:
    return _DEFAULT[0]
