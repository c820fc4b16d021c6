"""``torch.optim.Adagrad``: learning-rate decay, initial accumulator value, weight decay.

>>> from gradc.facade.nn.module_base import Parameter
>>> from gradc.facade.creation import ones
>>> p = Parameter(ones(1)); opt = Adagrad([p], lr=0.1); p.grad = ones(1); opt.step(); p.data
tensor([0.9000])
"""
from __future__ import annotations

import numpy as np

from gradc.facade.optim import kernels as k
from gradc.facade.optim.optimizer import Optimizer, new_step, state_tensor


class Adagrad(Optimizer):
    __module__ = "torch.optim.adagrad"

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:  # torch creates Adagrad's state up front
            for p in group["params"]:
                self.state[p] = {"step": new_step(), "sum": state_tensor(
                    np.full_like(p._data, group["initial_accumulator_value"]))}

    def _update(self, group, param, grad, state):
        if not state:  # a group added after construction
            state.update(step=new_step(), sum=state_tensor(np.full_like(param, group["initial_accumulator_value"])))
        state["step"]._data += np.float32(1)
        step = float(state["step"]._data)
        if group["weight_decay"] != 0:
            grad = k.add(grad, param, group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        total = state["sum"]._data
        k.addcmul_(total, grad, grad, 1)
        std = np.sqrt(total) + k._s(group["eps"], total)
        k.addcdiv_(param, grad, std, -clr)
