"""``torch.optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``step``, state dicts.

Updates run on the parameters' NumPy arrays, outside autograd (as torch's run under
``no_grad``), in place so the Module's Parameter objects stay the same. ``kernels`` holds the
elementwise steps (``add(alpha=)``, ``lerp``, ``addcmul``, ``addcdiv``) in torch's order of
floating-point operations, so float32 trajectories round as torch's do.

>>> from gradc.facade.nn.module_base import Parameter
>>> from gradc.facade.creation import ones
>>> from gradc.facade.optim.sgd import SGD
>>> p = Parameter(ones(2)); opt = SGD([p], lr=0.5); p.grad = ones(2); opt.step(); p.data
tensor([0.5000, 0.5000])
"""
from __future__ import annotations

import copy

import numpy as np

from gradc.facade import grad_mode
from gradc.facade.nn.module_base import zero_grad_of
from gradc.facade.tensor import Tensor


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses set ``defaults`` and implement ``_update(group, param, grad, state)``."""

    __module__ = "torch.optim.optimizer"

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = _State()
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            f"got {params.type()}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a ``{"params": [...], "lr": ...}`` group; unset options take the optimiser's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {"params": params}
        group.update((k, v) for k, v in param_group.items() if k != "params")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Drop every parameter's ``.grad`` (torch 2's default), or zero it with ``set_to_none=False``."""
        for group in self.param_groups:
            for p in group["params"]:
                zero_grad_of(p, set_to_none)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; ``closure`` re-evaluates the loss first."""
        self._opt_called = True  # lets a scheduler check it is stepped after the optimiser
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = p._grad._data
                if group.get("maximize"):
                    grad = -grad
                state = self.state.get(p, {})
                if p._data.dtype.kind == "c":  # torch steps a complex parameter as pairs of reals (view_as_real)
                    self._update_complex(group, p, grad, state)
                else:
                    self._update(group, p._data, grad, state)
                if state and p not in self.state:  # as in torch, only parameters with state get an entry
                    self.state[p] = state
                p._bump()
        return loss

    def _update(self, group, param, grad, state):
        raise NotImplementedError

    def _update_complex(self, group, p, grad, state):
        """``_update`` on real views of a complex parameter, its gradient and its (complex) state buffers."""
        shown = {key: Tensor._wrap(_real_pairs(v)) if isinstance(v, Tensor) and v._data.dtype.kind == "c" else v
                 for key, v in state.items()}
        before = dict(shown)
        self._update(group, _real_pairs(p), _real_pairs(grad), shown)
        for key, value in shown.items():
            if before.get(key) is value:
                continue
            if isinstance(value, Tensor) and value._data.dtype.kind == "f" and value._data.size == 2 * p._data.size:
                value = Tensor._wrap(np.ascontiguousarray(value._data).view(p._data.dtype).reshape(p._data.shape))
            state[key] = value

    # ------------------------------------------------------------ saving
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, as torch's."""
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore hyperparameters and per-parameter state saved by ``state_dict`` (the same layout of groups)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {}
        for group, saved in zip(self.param_groups, saved_groups):
            by_index.update(zip(saved["params"], group["params"]))
        self.state = _State()
        for key, values in state_dict["state"].items():
            param = by_index.get(key)
            if param is not None:
                self.state[param] = {k: _cast_state(k, v, param) for k, v in values.items()}
        for group, saved in zip(self.param_groups, saved_groups):
            params = group["params"]
            group.clear()
            group.update(copy.deepcopy({k: v for k, v in saved.items() if k != "params"}))
            group["params"] = params

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):  # groups are separated by an empty line
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"


def _real_pairs(x):
    """The real and imaginary parts of a complex Tensor's storage (or array) as one flat real array sharing its
    memory, so the elementwise update steps both parts as torch's optimisers do."""
    if isinstance(x, Tensor):
        if not x._data.flags["C_CONTIGUOUS"]:
            x._data = np.ascontiguousarray(x._data)
        x = x._data
    x = np.ascontiguousarray(x)
    return x.reshape(-1).view(x.real.dtype)


class _State(dict):
    """Per-parameter state keyed by the parameter object (tensors hash by identity)."""

    def __missing__(self, key):
        value = self[key] = {}
        return value


def _cast_state(key, value, param):
    """A saved state value for ``param``: tensors other than ``step`` take the parameter's dtype.

    As in torch, a tensor that already has it is used as it is (shared with the loaded dict).
    """
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if key == "step" or param.dtype.kind != 2 or value.dtype is param.dtype:
        return value
    return Tensor._wrap(value._data.astype(param._data.dtype))


def state_tensor(array) -> Tensor:
    """A state buffer as a Tensor sharing ``array`` (what ``state_dict()`` shows)."""
    return Tensor._wrap(array)


def new_step() -> Tensor:
    """The ``step`` counter: a float32 0-d tensor, as torch keeps it."""
    return Tensor._wrap(np.zeros((), np.float32))
