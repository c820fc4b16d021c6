"""``torch.func.functional_call``: call an ``nn.Module`` with some of its parameters and buffers replaced.

The module's own tensors are swapped out for the call and put back afterwards (also when the
call raises), so ``grad``/``vmap`` of a function of a parameter dict can run a real model: the
per-sample-gradients recipe ``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)``.

>>> import gradc.torch as torch
>>> lin = torch.nn.Linear(2, 1)
>>> functional_call(lin, {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}, (torch.tensor([1.0, 2.0]),))
tensor([3.])
"""
from __future__ import annotations

from collections.abc import Sequence

__all__ = ["functional_call"]


def _merged(dicts):
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, Sequence) or not all(isinstance(d, dict) for d in dicts):
        if isinstance(dicts, Sequence):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    counts = {}
    for d in dicts:
        for k in d:
            counts[k] = counts.get(k, 0) + 1
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def _with_tied(module, values, tie_weights):
    """``values`` plus, under ``tie_weights``, every other name of a tensor the module holds under several names."""
    names = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), []).append(name)
    valid = {n for group in names.values() for n in group}
    if not tie_weights:
        return values, valid
    values = dict(values)
    for group in names.values():
        given = [n for n in group if n in values]
        if len(group) < 2 or not given:
            continue
        if any(values[n] is not values[given[0]] for n in given[1:]):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. Consider "
                             "using tie_weights=False")
        for n in group:
            values.setdefault(n, values[given[0]])
    return values, valid


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters/buffers of ``parameter_and_buffer_dicts`` in place
    of the module's own (a dict, or a tuple of dicts with distinct keys); ``args`` may be a single Tensor.

    >>> import gradc.torch as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> functional_call(lin, {"bias": torch.tensor([5.0])}, torch.zeros(2)).tolist()
    [5.0]
    >>> type(lin.bias).__name__  # the module's own parameter is back
    'Parameter'
    """
    values, valid = _with_tied(module, _merged(parameter_and_buffer_dicts), tie_weights)
    if strict:
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected else []) + \
            ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing else [])
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    saved = []
    try:
        for name, value in values.items():
            owner, _, attr = name.rpartition(".")
            sub = module.get_submodule(owner) if owner else module
            store = next((s for s in (sub._parameters, sub._buffers) if attr in s), None)
            if store is None:  # not a tensor of the module: torch sets it as a plain attribute for the call
                store = sub.__dict__
            saved.append((store, attr, store.get(attr, _ABSENT)))
            store[attr] = value
        args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for store, attr, old in reversed(saved):
            if old is _ABSENT:
                del store[attr]
            else:
                store[attr] = old


_ABSENT = object()
