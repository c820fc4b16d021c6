"""``torch.optim.Adam`` and ``AdamW`` (Adam with decoupled weight decay), amsgrad, maximize.

>>> from gradc.facade.nn.module_base import Parameter
>>> from gradc.facade.creation import ones
>>> p = Parameter(ones(1)); opt = Adam([p], lr=0.1); p.grad = ones(1); opt.step(); p.data
tensor([0.9000])
"""
from __future__ import annotations

import numpy as np

from gradc.facade.optim import kernels as k
from gradc.facade.optim.optimizer import Optimizer, new_step, state_tensor


class Adam(Optimizer):
    __module__ = "torch.optim.adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, group, param, grad, state):
        if not state:
            state["step"] = new_step()
            state["exp_avg"] = state_tensor(np.zeros_like(param))
            state["exp_avg_sq"] = state_tensor(np.zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = state_tensor(np.zeros_like(param))
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"]._data += np.float32(1)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                k.mul_(param, 1 - lr * wd)
            else:
                grad = k.add(grad, param, wd)
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        k.lerp_(exp_avg, grad, 1 - beta1)
        k.mul_(exp_avg_sq, beta2)
        k.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        step = float(state["step"]._data)
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        second = exp_avg_sq
        if group["amsgrad"]:
            second = state["max_exp_avg_sq"]._data
            np.maximum(second, exp_avg_sq, out=second)
        denom = np.sqrt(second) / k._s(bias_correction2_sqrt, second) + k._s(group["eps"], second)
        k.addcdiv_(param, exp_avg, denom, -step_size)


class AdamW(Adam):
    __module__ = "torch.optim.adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def _check(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
