"""``Module.state_dict`` and ``Module.load_state_dict``, with torch's keys, order and error texts.

A state dict is an ordered ``{"layer.weight": tensor, ...}`` of every parameter and persistent
buffer, detached (sharing storage with the module, as torch's does); loading copies values
into the existing tensors, so an optimiser holding them keeps working.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from gradc.facade.tensor import Tensor


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; prints ``<All keys matched successfully>`` when both lists are empty."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__().replace("IncompatibleKeys", "_IncompatibleKeys", 1)

    __str__ = __repr__


def _local_state(module):
    """This module's own (name, tensor) pairs that belong in a state dict."""
    for name, p in module._parameters.items():
        if p is not None:
            yield name, p
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            yield name, b


def state_dict(module, destination=None, prefix="", keep_vars=False):
    destination = OrderedDict() if destination is None else destination
    for name, value in _local_state(module):
        destination[prefix + name] = value if keep_vars else value.detach()
    for name, child in module._modules.items():
        if child is not None:
            state_dict(child, destination, prefix + name + ".", keep_vars)
    return destination


def _load_local(module, source, prefix, missing, unexpected, errors, assign):
    local = dict(_local_state(module))
    for name, target in local.items():
        key = prefix + name
        if key not in source:
            missing.append(key)
            continue
        value = source[key]
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                          f"from checkpoint but received {type(value)}")
            continue
        if tuple(value.shape) != tuple(target.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                          f"the shape in current model is {target.shape}.")
            continue
        if assign:
            target._data = value._data
        else:
            np.copyto(target._data, value._data.astype(target._data.dtype, copy=False))
            target._bump()
    for key in source:
        if key.startswith(prefix):
            head = key[len(prefix):].split(".", 1)[0]
            if head not in module._modules and head not in local:
                unexpected.append(key)


def load_state_dict(module, source, strict=True, assign=False):
    if not hasattr(source, "keys") or not hasattr(source, "__getitem__"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(source)}.")
    missing, unexpected, errors = [], [], []
    for prefix, sub in module.named_modules(remove_duplicate=False):
        _load_local(sub, source, prefix + "." if prefix else "", missing, unexpected, errors, assign)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(errors)))
    return IncompatibleKeys(missing, unexpected)
