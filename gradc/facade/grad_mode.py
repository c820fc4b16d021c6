"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` (context managers and decorators).

>>> with no_grad():
...     is_grad_enabled()
False
>>> is_grad_enabled()
True
"""
from __future__ import annotations

import functools

# tracing: while torch.compile traces a call, its ``compile_trace.TraceContext``, else None
_STATE = {"enabled": True, "tracing": None}


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


class inference_mode:  # noqa: N801 - torch spelling
    """``torch.inference_mode``: like ``no_grad`` here (no graph is recorded); a context manager or decorator.

    >>> with inference_mode():
    ...     is_inference_mode_enabled(), is_grad_enabled()
    (True, False)
    """

    __module__ = "torch.autograd.grad_mode"

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # @inference_mode without parentheses
            self._inference = True
            return self(mode)
        return self

    def __init__(self, mode=True):
        self._inference = True if callable(mode) else bool(mode)

    def __enter__(self):
        self._prev = (_STATE["enabled"], _INFERENCE[0])
        if self._inference:
            _STATE["enabled"], _INFERENCE[0] = False, True
        return None

    def __exit__(self, *exc):
        _STATE["enabled"], _INFERENCE[0] = self._prev
        return False

    def __call__(self, fn):
        inference = self._inference

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(inference):
                return fn(*args, **kwargs)
        return wrapper


_INFERENCE = [False]


def is_inference_mode_enabled() -> bool:
    return _INFERENCE[0]
