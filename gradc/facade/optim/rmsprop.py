"""``torch.optim.RMSprop``: smoothing constant ``alpha``, momentum, centred variant, weight decay.

>>> from gradc.facade.nn.module_base import Parameter
>>> from gradc.facade.creation import ones
>>> p = Parameter(ones(1)); opt = RMSprop([p], lr=0.01); p.grad = ones(1); opt.step(); p.data
tensor([0.9000])
"""
from __future__ import annotations

import numpy as np

from gradc.facade.optim import kernels as k
from gradc.facade.optim.optimizer import Optimizer, new_step, state_tensor


class RMSprop(Optimizer):
    __module__ = "torch.optim.rmsprop"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, group, param, grad, state):
        if not state:
            state["step"] = new_step()
            state["square_avg"] = state_tensor(np.zeros_like(param))
            if group["momentum"] > 0:
                state["momentum_buffer"] = state_tensor(np.zeros_like(param))
            if group["centered"]:
                state["grad_avg"] = state_tensor(np.zeros_like(param))
        alpha = group["alpha"]
        state["step"]._data += np.float32(1)
        if group["weight_decay"] != 0:
            grad = k.add(grad, param, group["weight_decay"])
        square_avg = state["square_avg"]._data
        k.mul_(square_avg, alpha)
        k.addcmul_(square_avg, grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]._data
            k.lerp_(grad_avg, grad, 1 - alpha)
            avg = np.sqrt(k.addcmul(square_avg, grad_avg, grad_avg, -1))
        else:
            avg = np.sqrt(square_avg)
        avg = avg + k._s(group["eps"], avg)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]._data
            k.mul_(buf, group["momentum"])
            k.addcdiv_(buf, grad, avg)
            k.add_(param, buf, -group["lr"])
        else:
            k.addcdiv_(param, grad, avg, -group["lr"])
