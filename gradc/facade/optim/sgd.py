"""``torch.optim.SGD``: momentum, dampening, Nesterov, weight decay, maximize.

>>> from gradc.facade.nn.module_base import Parameter
>>> from gradc.facade.creation import ones
>>> p = Parameter(ones(1)); opt = SGD([p], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     p.grad = ones(1); opt.step()
>>> p.data
tensor([0.7100])
"""
from __future__ import annotations

from gradc.facade.optim import kernels as k
from gradc.facade.optim.optimizer import Optimizer, state_tensor


class SGD(Optimizer):
    __module__ = "torch.optim.sgd"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, group, param, grad, state):
        if group["weight_decay"] != 0:
            grad = k.add(grad, param, group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = state_tensor(grad.copy())
            else:
                k.mul_(buf._data, momentum)
                k.add_(buf._data, grad, 1 - group["dampening"])
            grad = k.add(grad, buf._data, momentum) if group["nesterov"] else buf._data
        k.add_(param, grad, -group["lr"])
