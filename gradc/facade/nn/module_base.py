"""``torch.nn.Module`` and ``Parameter``: registration, traversal, printing, modes, conversions.

Submodules, parameters and buffers live in three ordered dicts (``_modules``,
``_parameters``, ``_buffers``) filled by attribute assignment, as in torch, so traversal
order is assignment order and ``print(model)`` is torch's tree (a layer says what to print
in ``extra_repr``). ``state_dict``/``load_state_dict`` are in ``gradc.facade.nn.state``.

>>> class Net(Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = Parameter(ones(2))
...     def forward(self, x):
...         return x * self.scale
>>> net = Net(); print(net); [name for name, _ in net.named_parameters()]
Net()
['scale']
"""
from __future__ import annotations

import numpy as np

from gradc.errors import user_facing
from gradc.facade import devices, dtypes, tensor_extras
from gradc.facade.creation import ones  # noqa: F401 - the docstring's example
from gradc.facade.nn import state
from gradc.facade.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that a Module registers as trainable (requires grad by default).

    >>> Parameter(ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    _torch_name = "torch.nn.parameter.Parameter"

    __module__ = "torch.nn.parameter"

    def __new__(cls, data=None, requires_grad=True):
        if data is not None and not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data) expects a Tensor, got {type(data).__name__}; wrap it with torch.tensor()")
        t = Tensor.__new__(cls)
        t._data = data._data if data is not None else np.zeros(0, np.float32)
        if requires_grad and t._data.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._init_meta(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


def _indent(text, spaces):
    """Every line of ``text`` but the first indented by ``spaces`` (nested reprs in a tree)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class of layers and models; subclasses set attributes in ``__init__`` and define ``forward``."""

    __module__ = "torch.nn.modules.module"

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes no arguments beyond self, got {args} {kwargs}")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "_forward_pre_hooks", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks):  # the common case, kept cheap
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def register_forward_hook(self, hook):
        return _HookHandle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        return _HookHandle(self._forward_pre_hooks, hook)

    # ------------------------------------------------------------ registration
    def _dicts(self):
        return self.__dict__.get("_parameters"), self.__dict__.get("_buffers"), self.__dict__.get("_modules")

    def __setattr__(self, name, value):
        params, buffers, modules = self._dicts()
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        self.__dict__.pop(name, None)
        for d in self._dicts():
            d.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):  # only reached when ``name`` is not a plain attribute
        own = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            d = own.get(key)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for d in self._dicts():
            if d is not None and name in d:
                del d[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        names = set(super().__dir__())
        for d in self._dicts():
            names.update(d)
        return sorted(names)

    def _check_new_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        self._check_new_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Register a tensor that is saved in ``state_dict`` (when persistent) but is not trained."""
        self._check_new_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_new_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        module = self
        for item in target.split(".") if target else []:
            if item not in module._modules:
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = module._modules[item]
        return module

    def get_parameter(self, target):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return module._parameters[name]

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``("", self)``, then every submodule depth-first as ``("body.0", module)``; shared ones once."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, which, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, module in mods:
            for name, value in getattr(module, which).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``("body.0.weight", parameter)`` pairs in registration order (a shared parameter once)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on this module; returns this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes and gradients
    def train(self, mode=True):
        """Set ``training`` on this module and every submodule (``eval()`` is ``train(False)``)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Switch gradient recording for every parameter (freeze a model with ``requires_grad_(False)``)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            zero_grad_of(p, set_to_none)

    # ------------------------------------------------------------ conversions
    def _convert(self, dt):
        """Cast every floating parameter, its gradient and floating buffer to ``dt`` in place (same objects)."""
        for t in list(self.parameters()) + list(self.buffers()):
            if t.dtype.kind == 2 and t.dtype is not dt:
                t._data = t._data.astype(dt.np)
                if t._grad is not None:
                    t._grad._data = t._grad._data.astype(dt.np)
        return self

    @user_facing
    def to(self, *args, **kwargs):
        """``model.to(device)``, ``model.to(dtype)``, ``model.to(device, dtype)``; only the CPU exists."""
        where, dtype, _ = tensor_extras._split_to_args(self, args, dict(kwargs))
        devices.check(where)
        dt = dtypes.to_dtype(dtype)
        if dt is not None:
            if dt.kind != 2:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dt}")
            self._convert(dt)
        return self

    @user_facing
    def cuda(self, device=None):
        devices.check(devices.device("cuda") if device is None else device)
        return self

    def cpu(self):
        return self

    def float(self):
        return self._convert(dtypes.float32)

    def double(self):
        return self._convert(dtypes.float64)

    def half(self):
        return self._convert(dtypes.float16)

    # ------------------------------------------------------------ saving
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An ordered ``{"name": tensor}`` of parameters and persistent buffers (see ``gradc.facade.nn.state``)."""
        return state.state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy a ``state_dict`` into this module's tensors; torch's errors on missing/extra keys or shapes."""
        return state.load_state_dict(self, state_dict, strict, assign)

    # ------------------------------------------------------------ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in ``print(model)``; layers override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _indent(repr(child), 2) for name, child in self._modules.items()]
        body = extra_lines + child_lines
        if not body:
            return self._get_name() + "()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(body) + "\n)"


def zero_grad_of(p, set_to_none=True):
    """Drop ``p.grad`` (torch 2's default) or zero it in place."""
    if set_to_none or p._grad is None:
        p.grad = None
        return
    g = p._grad
    if g._grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    g._data[...] = 0


class _HookHandle:
    _next_id = [0]

    def __init__(self, hooks, hook):
        self._hooks, self.id = hooks, _HookHandle._next_id[0]
        _HookHandle._next_id[0] += 1
        hooks[self.id] = hook

    def remove(self):
        self._hooks.pop(self.id, None)


def _typename(x):
    return x.type() if isinstance(x, Tensor) else type(x).__name__
