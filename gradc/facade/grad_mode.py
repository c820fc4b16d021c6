"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` (context managers and decorators).

>>> with no_grad():
...     is_grad_enabled()
False
>>> is_grad_enabled()
True
"""
from __future__ import annotations

import functools

_STATE = {"enabled": True}


def is_grad_enabled() -> bool:
    """Whether ops on tensors that require grad record graph nodes."""
    return _STATE["enabled"]


class _Mode:
    _mode = True

    def __enter__(self):
        self._prev = _STATE["enabled"]
        _STATE["enabled"] = self._mode
        return None

    def __exit__(self, *exc):
        _STATE["enabled"] = self._prev
        return False

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _STATE["enabled"]
            _STATE["enabled"] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _STATE["enabled"] = prev
        return wrapper


class no_grad(_Mode):  # noqa: N801 - torch spelling
    __module__ = "torch.autograd.grad_mode"
    """Turn graph recording off inside the block (or the decorated function)."""

    _mode = False

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if fn is not None and callable(fn):  # @no_grad without parentheses
            return self(fn)
        return self

    def __init__(self, fn=None):
        pass


class enable_grad(_Mode):  # noqa: N801 - torch spelling
    __module__ = "torch.autograd.grad_mode"
    """Turn graph recording on inside the block (or the decorated function)."""

    _mode = True


class set_grad_enabled(_Mode):  # noqa: N801 - torch spelling
    __module__ = "torch.autograd.grad_mode"
    """Switch grad mode now; as a context manager the previous mode comes back on exit."""

    def __init__(self, mode: bool):
        self._prev = _STATE["enabled"]
        self._mode = bool(mode)
        _STATE["enabled"] = self._mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _STATE["enabled"] = self._prev
        return False

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._mode})"
